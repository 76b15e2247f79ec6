//! An agent used as a tool of another: the tool call starts a sub-run.

use std::borrow::Cow;
use std::error::Error as _;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::agent::Agent;
use super::output::AgentOutput;
use super::sub_run::{Nested, Setup, Watch};
use crate::cancel::BoxFuture;
use crate::conversation::Conversation;
use crate::message::Message;
use crate::run::{RunLink, abandon_pending};
use crate::tool::arguments::{normalize, parse_arguments};
use crate::tool::{DynTool, ToolContext, ToolDefinition, ToolError, ToolOutput};

/// How many tool calls deep an agent tool may be called unless configured
/// otherwise (see [`AgentTool::max_depth`]).
pub const DEFAULT_MAX_DEPTH: u32 = 4;

/// The input of an agent tool made with [`Agent::as_tool`]: the prompt the
/// sub-agent answers.
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize, JsonSchema)]
// Hidden from the docs only (`cfg(doc)`): the default input of `AgentTool`, described there; users do not write it.
#[cfg_attr(doc, doc(hidden))]
pub struct Prompt {
    /// The task for the agent, with everything it needs to know: it sees
    /// nothing else of this conversation.
    pub prompt: String,
}

/// An [`Agent`] used as a tool of another agent: each call runs the agent
/// (a *sub-run*) on the call's input and returns its output.
///
/// Made with [`Agent::as_tool`] and added with the builder's
/// [`tool_dyn`](crate::AgentBuilder::tool_dyn) (`.tool_dyn(tool.into())`).
///
/// - **Input.** A prompt by default (`{"prompt": "..."}`: the task, with
///   everything the sub-agent needs to know); [`input`](Self::input)
///   takes a typed input instead (`Deserialize + JsonSchema`), whose schema
///   the parent model is shown and which becomes the sub-agent's first user
///   message (as pretty JSON, or as [`render`](Self::render) writes it).
/// - **Result.** A text agent's answer, or a typed agent's output as JSON.
///   A sub-run that fails (its own limits, a model error, validation
///   exhausted) becomes an error result naming its
///   [termination](crate::run::Termination), which the parent model reads.
///   A sub-run cannot pause: calls of its own that wait for approval or
///   for the caller are answered as not executed, and so are the calls of
///   their batch held back with them (a typed sub-agent's output call
///   among them), and the call is an error result naming the tools that
///   waited; a kept conversation goes on from there.
/// - **Conversation.** Fresh for every call by default;
///   [`keep_conversation`](Self::keep_conversation) keeps one across the
///   calls of this tool within one parent run.
/// - **Usage.** Each sub-run is listed in the parent's
///   [`RunMetadata::sub_runs`](crate::run::RunMetadata::sub_runs) (call id, agent, termination, usage, its own
///   metadata), and its usage and calls are added to the parent's totals:
///   the parent's token budget counts them. A sub-run also gets at most
///   the tokens left in the parent's budget.
/// - **Limits.** The parent's cancellation cancels the sub-run; it may take
///   no longer than the parent's remaining time and the tool's timeout
///   (both also stop it from outside, its usage so far still reported);
///   a call nested [`max_depth`](Self::max_depth) tool calls deep is
///   refused, so an agent that calls itself, directly or not, stops. The
///   parent's governance and hooks see the call as any tool call.
/// - **Streaming and traces.** A streamed parent carries the sub-run's
///   events as [`Event::SubRun`](crate::run::Event::SubRun), tagged
///   with the call id and the agent's name; the sub-run's `invoke_agent`
///   span nests under the call's `execute_tool` span.
///
/// ```
/// use toolloop::testing::ScriptedModel;
/// use toolloop::{Agent, Conversation, ModelResponse, ToolCall};
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let researcher = Agent::builder()
///     .name("researcher")
///     .model(ScriptedModel::new().respond(ModelResponse::from_text("Paris has 2.1 million people.")))
///     .build()?;
/// let orchestrator = Agent::builder()
///     .name("orchestrator")
///     .model(ScriptedModel::from_responses([
///         ModelResponse::from_tool_calls([ToolCall::new("r1", "research", serde_json::json!({"prompt": "Population of Paris?"}))]),
///         ModelResponse::from_text("About 2.1 million."),
///     ]))
///     .tool_dyn(researcher.as_tool("research", "Research a question and report the facts.").into())
///     .build()?;
///
/// let mut conversation = Conversation::new();
/// conversation.push_user("How many people live in Paris?");
/// let done = orchestrator.run(&mut conversation).await?;
/// assert_eq!(done.output, "About 2.1 million.");
/// let sub_run = &done.metadata.sub_runs[0];
/// assert_eq!((sub_run.call_id.as_str(), sub_run.agent.as_str()), ("r1", "researcher"));
/// assert_eq!(done.metadata.model_calls, 3); // two of the orchestrator, one of the researcher
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
pub struct AgentTool<I = Prompt> {
    agent: Arc<dyn SubAgent>,
    definition: ToolDefinition,
    /// Writes the sub-agent's first user message; `None`: the input as pretty JSON.
    render: Option<Arc<Render<I>>>,
    keep_conversation: bool,
    max_depth: u32,
    input: PhantomData<fn() -> I>,
}

type Render<I> = dyn Fn(&I) -> String + Send + Sync;

/// An agent's output that an agent tool can return: the tool's result is
/// the output as JSON, so it must be `Serialize` (a text agent's `String` is).
#[diagnostic::on_unimplemented(
    message = "an agent whose output is `{Self}` cannot be a tool: `{Self}` must implement `serde::Serialize`",
    label = "`{Self}` is not `Serialize`",
    note = "the parent model reads the sub-agent's output as JSON: add `serde::Serialize` to the derives of `{Self}`"
)]
// Hidden from the docs only (`cfg(doc)`): a bound of `as_tool`, not written by users.
#[cfg_attr(doc, doc(hidden))]
pub trait ToolResultOutput: Serialize {}

#[diagnostic::do_not_recommend]
impl<T: Serialize> ToolResultOutput for T {}

impl<O: AgentOutput, R: 'static> Agent<O, R> {
    /// This agent as a tool of another agent, called `name` and described
    /// to the parent model by `description` (say what the agent does and
    /// what to give it). It takes a prompt; see [`AgentTool`].
    pub fn as_tool(
        &self,
        name: impl Into<Cow<'static, str>>,
        description: impl Into<Cow<'static, str>>,
    ) -> AgentTool<Prompt>
    where
        O::Value: ToolResultOutput,
    {
        AgentTool {
            agent: Arc::new(self.clone()),
            definition: ToolDefinition::for_input::<Prompt>(name, description),
            render: Some(Arc::new(|input: &Prompt| input.prompt.clone())),
            keep_conversation: false,
            max_depth: DEFAULT_MAX_DEPTH,
            input: PhantomData,
        }
    }
}

impl AgentTool<Prompt> {
    /// Takes a typed input instead of a prompt: the parent model is shown
    /// `I`'s schema, and the sub-agent gets the input as its first user
    /// message, as pretty JSON unless [`render`](AgentTool::render) says otherwise.
    pub fn input<I: DeserializeOwned + JsonSchema + Send + Sync + 'static>(self) -> AgentTool<I> {
        let definition = ToolDefinition::for_input::<I>(self.definition.name, self.definition.description);
        AgentTool {
            agent: self.agent,
            definition: ToolDefinition { timeout: self.definition.timeout, ..definition },
            render: None,
            keep_conversation: self.keep_conversation,
            max_depth: self.max_depth,
            input: PhantomData,
        }
    }
}

impl<I> AgentTool<I> {
    /// Writes the sub-agent's first user message from the input.
    #[must_use]
    pub fn render(mut self, render: impl Fn(&I) -> String + Send + Sync + 'static) -> Self {
        self.render = Some(Arc::new(render));
        self
    }

    /// Keeps one conversation across the calls of this tool within one
    /// parent run: each call adds its input as a user message to what
    /// the earlier calls left, so the sub-agent remembers them. The
    /// conversation belongs to the parent run (every attempt of it), is
    /// kept per tool name, and is dropped when that run ends; calls of one
    /// batch that run at once take turns on it.
    #[must_use]
    pub fn keep_conversation(mut self) -> Self {
        self.keep_conversation = true;
        self
    }

    /// Refuses a call nested in `depth` or more tool calls (default
    /// [`DEFAULT_MAX_DEPTH`]): a call of a run your code started is at
    /// depth 0, a call made by its sub-run at depth 1... The refusal is an
    /// error result ([`Rejected`](crate::FailureKind::Rejected)) naming the
    /// chain of calls, so an agent that calls itself, directly or through
    /// others, ends there.
    #[must_use]
    pub fn max_depth(mut self, depth: u32) -> Self {
        self.max_depth = depth;
        self
    }

    /// How long a call may take, sub-run included (the tool set's default
    /// timeout otherwise, see [`AgentBuilder::tool_timeout`](crate::AgentBuilder::tool_timeout)).
    #[must_use]
    pub fn timeout(mut self, timeout: std::time::Duration) -> Self {
        self.definition.timeout = Some(timeout);
        self
    }

    /// The agent's name, or the tool's when the agent has none.
    fn agent_name(&self) -> &str {
        self.agent.name().unwrap_or(&self.definition.name)
    }
}

impl<I> fmt::Debug for AgentTool<I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentTool")
            .field("name", &self.definition.name)
            .field("agent", &self.agent_name())
            .field("keep_conversation", &self.keep_conversation)
            .field("max_depth", &self.max_depth)
            .finish_non_exhaustive()
    }
}

impl<I: DeserializeOwned + Send + Sync + 'static> From<AgentTool<I>> for Arc<dyn DynTool> {
    fn from(tool: AgentTool<I>) -> Self {
        Arc::new(tool)
    }
}

impl<I: DeserializeOwned + Send + Sync + 'static> DynTool for AgentTool<I> {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn call<'a>(&'a self, input: &'a Value) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let parsed: I = parse_arguments(input, &self.definition)?;
            let message = if let Some(render) = &self.render {
                render(&parsed)
            } else {
                let normalized = normalize(input, &self.definition.input_schema)?;
                serde_json::to_string_pretty(&*normalized).unwrap_or_else(|_| normalized.to_string())
            };
            let context = ToolContext::current();
            if let Some(context) = &context
                && context.depth() >= self.max_depth
            {
                return Err(ToolError::Rejected(self.too_deep(context)));
            }
            let agent = self.agent_name();
            // The conversation kept for this tool in the parent run, if asked
            // for and there is a parent run; a fresh one otherwise.
            let run = context.as_ref().and_then(ToolContext::run::<RunLink>).filter(|_| self.keep_conversation);
            let kept = run.map(|run| run.sub_runs.conversation(&self.definition.name));
            let (mut kept_guard, mut fresh);
            let conversation: &mut Conversation = if let Some(kept) = &kept {
                kept_guard = kept.lock().await;
                &mut kept_guard
            } else {
                fresh = Conversation::new();
                &mut fresh
            };
            // Where this call takes the conversation up, for a journal's record.
            let taken = (conversation.len(), conversation.last().and_then(Message::stamp));
            // A kept conversation recorded paused (by a version before sub-runs
            // gave their waiting calls up) is given up the same way first.
            abandon_pending(conversation, GIVEN_UP);
            conversation.push_user(message);
            let setup = Setup::new(context.as_ref(), agent);
            let watch = Watch::new(&setup, context.as_ref(), agent);
            let nested = self.agent.run_nested(conversation, setup).await;
            let Nested { result, metadata } = nested;
            if let (Some(run), Some(context)) = (run.filter(|run| run.journaled), &context) {
                // Copied while the conversation is still this call's.
                run.sub_runs.leave(context.call_id(), &self.definition.name, conversation, taken);
            }
            watch.finished(metadata);
            result.map(ToolOutput::new).map_err(ToolError::Failed)
        })
    }
}

impl<I> AgentTool<I> {
    fn too_deep(&self, context: &ToolContext) -> String {
        let chain: Vec<&str> = context.path().iter().map(String::as_str).chain([context.tool()]).collect();
        format!(
            "not run: this call is nested {depth} tool calls deep ({chain}), and `{tool}` starts no sub-run {max} or \
             more deep, so that an agent that calls itself, directly or through others, stops. Answer with what you have.",
            depth = context.depth(),
            chain = chain.join(" → "),
            tool = self.definition.name,
            max = self.max_depth,
        )
    }
}

/// Why a sub-run's waiting calls were not executed.
const GIVEN_UP: &str = "a sub-run cannot wait for its calls to be resolved";

/// An agent of any output type, as an agent tool runs it.
pub(super) trait SubAgent: Send + Sync {
    fn name(&self) -> Option<&str>;

    /// Runs on `conversation` within the parent's limits; never fails: a
    /// failed run is an error text naming its termination.
    fn run_nested<'a>(&'a self, conversation: &'a mut Conversation, setup: Setup) -> BoxFuture<'a, Nested>;
}

impl<O: AgentOutput, R: 'static> SubAgent for Agent<O, R>
where
    O::Value: ToolResultOutput,
{
    fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    fn run_nested<'a>(&'a self, conversation: &'a mut Conversation, setup: Setup) -> BoxFuture<'a, Nested> {
        Box::pin(async move {
            let mut agent = self.clone();
            setup.bound(&mut agent.options, &mut agent.hooks);
            let run = agent.execute(conversation, &setup.cancel, setup.events.clone(), None, None);
            // The sub-agent's own token (from its builder) cancels it too.
            let outcome = match agent.cancel.clone() {
                None => run.await,
                Some(own) => {
                    let mut run = std::pin::pin!(run);
                    tokio::select! {
                        biased;
                        outcome = &mut run => outcome,
                        () = own.cancelled() => {
                            setup.cancel.cancel();
                            run.await
                        }
                    }
                }
            };
            match outcome {
                Ok(done) => Nested {
                    result: serde_json::to_value(&done.output)
                        .map_err(|error| format!("agent `{}`'s output did not serialise: {error}", setup.agent)),
                    metadata: done.metadata,
                },
                Err(error) if error.is_deferred() => {
                    // No one can resolve the calls of a sub-run: they are
                    // given up, so that a kept conversation goes on.
                    abandon_pending(conversation, GIVEN_UP);
                    // The calls that wait on someone (not those held back with them), each tool once.
                    let mut tools: Vec<&str> = Vec::new();
                    for waiting in error.deferred_calls().iter().filter(|waiting| waiting.reason.needs_resolution()) {
                        if !tools.contains(&waiting.call.name.as_str()) {
                            tools.push(&waiting.call.name);
                        }
                    }
                    let message = format!(
                        "agent `{}` ended without a result ({}): its calls of {} wait for approval or for the caller, \
                         which no one can give inside a tool call; they were not executed",
                        setup.agent,
                        error.termination().name(),
                        tools.iter().map(|tool| format!("`{tool}`")).collect::<Vec<_>>().join(", ")
                    );
                    Nested { result: Err(message), metadata: error.into_metadata() }
                }
                Err(error) => {
                    let mut message = format!(
                        "agent `{}` ended without a result ({}): {error}",
                        setup.agent,
                        error.termination().name()
                    );
                    if let Some(source) = error.source() {
                        message = format!("{message}: {source}");
                    }
                    Nested { result: Err(message), metadata: error.into_metadata() }
                }
            }
        })
    }
}
