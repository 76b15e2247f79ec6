//! The agent: its setup, shared by every run.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use super::handlers::NoReflection;
use super::output::{AgentOutput, Text};
use super::spec::{TextSpec, TypedSpec};
use crate::cancel::CancellationToken;
use crate::conversation::Conversation;
use crate::model::Model;
use crate::run::journal::{InProcess, Journal};
use crate::run::{Governance, Hooks, LoopOptions, RunError, RunOutput};
use crate::stream::RunStream;
use crate::tool::{ToolDefinition, ToolSet};

/// An agent: a model, tools, and either a text answer or a typed output
/// (`Output`), with or without a reflection handler (`Reflection`).
///
/// Build one with [`Agent::builder`]; run it with [`Agent::run`] on a
/// conversation you own. An agent is immutable and can serve many runs at
/// once (share it with `Arc`, or clone it: clones share the model and tools).
///
/// A text agent (no `.output::<T>()`) answers with the model's final text:
///
/// ```
/// use toolloop::testing::ScriptedModel;
/// use toolloop::{Agent, Conversation, ModelResponse, ToolCall};
///
/// /// Look up the current temperature of a city, in degrees Celsius.
/// #[derive(toolloop::Tool)]
/// struct Temperature {
///     /// The city.
///     city: String,
/// }
///
/// impl Temperature {
///     async fn run(self) -> Result<f64, String> {
///         if self.city == "Paris" { Ok(18.5) } else { Err(format!("no station in {}", self.city)) }
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let model = ScriptedModel::new()
///     .respond(ModelResponse::from_tool_calls([ToolCall::new("1", "temperature", serde_json::json!({"city": "Paris"}))]))
///     .respond(ModelResponse::from_text("18.5 °C in Paris."));
/// let agent = Agent::builder().model(model.clone()).system("Answer briefly.").tool::<Temperature>().build()?;
///
/// let mut conversation = Conversation::new();
/// conversation.push_user("How warm is it in Paris?");
/// let done = agent.run(&mut conversation).await?;
/// assert_eq!(done.output, "18.5 °C in Paris.");
/// assert_eq!(done.metadata.iterations, 2);
/// // The model was sent the tool's result.
/// assert_eq!(model.requests()[1].messages.last().unwrap().tool_results().next().unwrap().content, "18.5");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
pub struct Agent<Output = Text, Reflection = NoReflection> {
    pub(super) model: Arc<dyn Model>,
    pub(super) tools: ToolSet,
    /// What the model is offered: the tools, then the output tool and `submit`.
    pub(super) definitions: Arc<[ToolDefinition]>,
    pub(super) system: Option<String>,
    /// Traced as `gen_ai.agent.name`, in the span name `invoke_agent {name}`.
    pub(super) name: Option<String>,
    pub(super) options: LoopOptions,
    pub(super) hooks: Hooks,
    pub(super) governance: Governance,
    pub(super) cancel: Option<CancellationToken>,
    pub(super) max_attempts: u32,
    pub(super) text: TextSpec,
    pub(super) typed: TypedSpec<Output>,
    pub(super) output_definition: Option<ToolDefinition>,
    pub(super) reflection: PhantomData<fn() -> Reflection>,
}

impl<O, R> Clone for Agent<O, R> {
    fn clone(&self) -> Self {
        Self {
            model: Arc::clone(&self.model),
            tools: self.tools.clone(),
            definitions: Arc::clone(&self.definitions),
            system: self.system.clone(),
            name: self.name.clone(),
            options: self.options.clone(),
            hooks: self.hooks.clone(),
            governance: self.governance.clone(),
            cancel: self.cancel.clone(),
            max_attempts: self.max_attempts,
            text: self.text.clone(),
            typed: self.typed.clone(),
            output_definition: self.output_definition.clone(),
            reflection: PhantomData,
        }
    }
}

impl<O, R> fmt::Debug for Agent<O, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Agent")
            .field("model", &self.model.name())
            .field("tools", &self.tools)
            .field("output_tool", &self.output_definition.as_ref().map(|d| &d.name))
            .field("max_attempts", &self.max_attempts)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl<O: AgentOutput, R> Agent<O, R> {
    /// Runs the agent on `conversation`, which must end with the caller's
    /// message (an empty conversation, or one ending with the model's
    /// message, is rejected before any model call with
    /// [`Termination::NothingToAnswer`](crate::run::Termination::NothingToAnswer)).
    /// Everything the run does is appended to it, also when it fails:
    /// partial work is never lost, and every tool call is answered.
    pub async fn run(&self, conversation: &mut Conversation) -> Result<RunOutput<O::Value>, RunError> {
        let cancel = self.cancel.clone().unwrap_or_default();
        self.execute(conversation, &cancel, None, &InProcess).await
    }

    /// Like [`run`](Self::run), cancelled through `cancel` (instead of the
    /// builder's token).
    pub async fn run_with_cancel(
        &self,
        conversation: &mut Conversation,
        cancel: &CancellationToken,
    ) -> Result<RunOutput<O::Value>, RunError> {
        self.execute(conversation, cancel, None, &InProcess).await
    }

    /// Like [`run_with_cancel`](Self::run_with_cancel), with every side
    /// effect of the run (model calls, tool executions, approvals, clock
    /// readings) going through `journal`: a durable engine records each one
    /// and, when the run is replayed after a crash, returns the recorded
    /// outcome instead of doing it again (see [`journal`](crate::run::journal)).
    pub async fn run_journaled(
        &self,
        conversation: &mut Conversation,
        journal: &dyn Journal,
        cancel: &CancellationToken,
    ) -> Result<RunOutput<O::Value>, RunError> {
        self.execute(conversation, cancel, None, journal).await
    }

    /// Runs the agent as [`run`](Self::run) does, streaming what happens:
    /// the model's deltas as they arrive (a tool call's arguments forming,
    /// the output being written), tool calls running, validation, and last
    /// [`RunEvent::Finished`](crate::stream::RunEvent::Finished) with what
    /// `run` would return. See [`stream`](crate::stream).
    pub fn run_stream<'a>(&'a self, conversation: &'a mut Conversation) -> RunStream<'a, O::Value>
    where
        O::Value: Send,
    {
        RunStream::new(move |sink| async move {
            let cancel = self.cancel.clone().unwrap_or_default();
            self.execute(conversation, &cancel, Some(sink), &InProcess).await
        })
    }

    /// The tools the model is offered, in order (helpers, then the output
    /// tool and `submit` when the agent has them).
    pub fn tool_definitions(&self) -> &[ToolDefinition] {
        &self.definitions
    }
}
