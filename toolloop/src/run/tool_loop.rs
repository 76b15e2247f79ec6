//! The iteration loop on its own, without an agent.

use std::convert::Infallible;
use std::fmt;
use std::sync::Arc;

use tracing::Instrument as _;

use super::control::{Control, LimitDecision};
use super::deferral::Resolution;
use super::governance::Governance;
use super::hooks::{Hooks, event_hooks, hook_setters};
use super::iteration::LoopOutput;
use super::journal::Journal;
use super::options::{DEFAULT_CONFIRMATION_PROMPT, LoopOptions, loop_settings, setters};
use super::outcome::{RunError, RunOutput};
use super::resume::Resume;
use super::segment::{Segment, Setup};
use super::sink::EventSink;
use super::termination::Termination;
use crate::cancel::CancellationToken;
use crate::conversation::Conversation;
use crate::model::Model;
use crate::tool::ToolExecution;
use crate::tool::ToolSet;

type TerminalCheck<S> = Box<dyn FnMut(&[ToolExecution]) -> Option<S> + Send>;
type LimitHook<S> = Box<dyn FnMut(u32) -> LimitDecision<S> + Send>;

/// An iteration loop: call the model, execute every tool call it makes,
/// feed the results back, repeat until it answers or a terminal check
/// returns a signal.
///
/// `S` is the signal type; without a [terminal check](Self::terminal_check)
/// it is [`Infallible`]: such a loop can only end with an answer.
///
/// Its limits and settings are the setters an
/// [`AgentBuilder`](crate::AgentBuilder) has, by the same names
/// (`max_iterations`, `max_duration`, `token_budget`...). A loop has no
/// `build()` step that checks them: a limit of zero is reached at once.
///
/// ```
/// use toolloop::run::{LoopOutput, ToolLoop};
/// use toolloop::testing::ScriptedModel;
/// use toolloop::{Conversation, ModelResponse, ToolSet};
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let model = ScriptedModel::new().respond(ModelResponse::from_text("4"));
/// let mut tool_loop = ToolLoop::new(model, ToolSet::new()).system("You add numbers.").max_iterations(3);
/// let mut conversation = Conversation::new();
/// conversation.push_user("2 + 2?");
/// let done = tool_loop.run(&mut conversation).await.unwrap();
/// assert_eq!(done.output, LoopOutput::Answer("4".to_owned()));
/// # });
/// ```
pub struct ToolLoop<S = Infallible> {
    model: Arc<dyn Model>,
    tools: ToolSet,
    system: Option<String>,
    options: LoopOptions,
    hooks: Hooks,
    governance: Governance,
    cancel: CancellationToken,
    confirmation: Option<String>,
    terminal: Option<TerminalCheck<S>>,
    on_limit: Option<LimitHook<S>>,
}

impl<S> fmt::Debug for ToolLoop<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolLoop")
            .field("model", &self.model.name())
            .field("tools", &self.tools)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl ToolLoop<Infallible> {
    /// A loop calling `model` with `tools` and the default limits and
    /// settings (change them with the setters below, as on an
    /// [`AgentBuilder`](crate::AgentBuilder)).
    pub fn new(model: impl Model + 'static, tools: ToolSet) -> Self {
        Self {
            model: Arc::new(model),
            tools,
            system: None,
            options: LoopOptions::default(),
            hooks: Hooks::new(),
            governance: Governance::new(),
            cancel: CancellationToken::new(),
            confirmation: None,
            terminal: None,
            on_limit: None,
        }
    }

    /// Ends the loop when `check`, called after each executed batch, returns
    /// a signal (for example the id a `spec_submit` tool returned). The
    /// signal can be any type; the run's [`LoopOutput::Signal`] carries it.
    ///
    /// ```
    /// use toolloop::run::{LoopOutput, ToolLoop};
    /// use toolloop::testing::ScriptedModel;
    /// use toolloop::{Conversation, ModelResponse, ToolCall, ToolSet};
    ///
    /// /// Submit the finished spec; returns its id.
    /// #[derive(toolloop::Tool)]
    /// struct SpecSubmit {
    ///     /// The spec's title.
    ///     title: String,
    /// }
    ///
    /// #[derive(serde::Serialize)]
    /// struct Submitted {
    ///     spec_id: u32,
    /// }
    ///
    /// impl SpecSubmit {
    ///     async fn run(self) -> Result<Submitted, std::convert::Infallible> {
    ///         Ok(Submitted { spec_id: 7 })
    ///     }
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let mut tools = ToolSet::new();
    /// tools.add::<SpecSubmit>()?;
    /// let model = ScriptedModel::new()
    ///     .respond(ModelResponse::from_tool_calls([ToolCall::new("1", "spec_submit", serde_json::json!({"title": "Export"}))]));
    ///
    /// // The signal is read from the tool's structured output.
    /// let mut tool_loop = ToolLoop::new(model, tools).terminal_check(|batch| {
    ///     batch.iter().find_map(|done| done.output.as_ref()?.value()["spec_id"].as_u64())
    /// });
    /// let mut conversation = Conversation::new();
    /// conversation.push_user("Spec the export.");
    /// let done = tool_loop.run(&mut conversation).await?;
    /// assert_eq!(done.output, LoopOutput::Signal(7));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn terminal_check<S>(self, check: impl FnMut(&[ToolExecution]) -> Option<S> + Send + 'static) -> ToolLoop<S> {
        let on_limit = self.on_limit.map(|mut hook| {
            Box::new(move |limit: u32| hook(limit).map(|never: Infallible| -> S { match never {} })) as LimitHook<S>
        });
        ToolLoop {
            model: self.model,
            tools: self.tools,
            system: self.system,
            options: self.options,
            hooks: self.hooks,
            governance: self.governance,
            cancel: self.cancel,
            confirmation: self.confirmation,
            terminal: Some(Box::new(check)),
            on_limit,
        }
    }
}

impl<S: Send> ToolLoop<S> {
    /// Sets the system prompt. Called again, it adds a paragraph: the
    /// prompt is every part, in order, separated by a blank line.
    pub fn system(mut self, system: impl Into<String>) -> Self {
        let part = system.into();
        self.system = Some(match self.system.take() {
            Some(earlier) => format!("{earlier}\n\n{part}"),
            None => part,
        });
        self
    }

    // The loop's limits and settings, as on an agent builder: `max_iterations`,
    // `max_duration`, `token_budget`... (the one list is in `options.rs`).
    loop_settings!(setters);

    // `on_event` and the typed hooks, as on an agent builder:
    // `on_tool_execution_finished`, `on_run_finished`... (the one list is in
    // `hooks.rs`).
    event_hooks!(hook_setters);

    /// Sets the governance consulted before each tool call.
    pub fn governance(mut self, governance: Governance) -> Self {
        self.governance = governance;
        self
    }

    /// Sets the token that cancels runs of this loop; once cancelled, it
    /// stops every later run too (set a fresh token to run again).
    pub fn cancel_token(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// On the first text-only answer, asks the model once to verify the task
    /// is complete (with the default prompt); it may continue with tools or
    /// confirm.
    pub fn double_confirmation(self) -> Self {
        self.double_confirmation_prompt(DEFAULT_CONFIRMATION_PROMPT)
    }

    /// Double confirmation with your own prompt.
    pub fn double_confirmation_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.confirmation = Some(prompt.into());
        self
    }

    /// Called when the loop has made as many iterations as its limit, with
    /// that limit (`max_iterations`, plus what earlier calls granted):
    /// grant more iterations, end with a signal, or stop (the default).
    pub fn on_iteration_limit(mut self, hook: impl FnMut(u32) -> LimitDecision<S> + Send + 'static) -> Self {
        self.on_limit = Some(Box::new(hook));
        self
    }

    /// Runs the loop on `conversation`, which must end with the caller's
    /// message. Everything the run does is appended to it, also when it
    /// fails, with every tool call answered.
    ///
    /// An empty conversation, or one ending with the model's message, is
    /// rejected before any model call ([`Termination::NothingToAnswer`]).
    ///
    /// A conversation with [deferred calls](Conversation::deferred_calls)
    /// is rejected too ([`Termination::PendingCalls`]): [resume](Self::resume) it.
    pub async fn run(&mut self, conversation: &mut Conversation) -> Result<RunOutput<LoopOutput<S>>, RunError> {
        self.execute(conversation, None, None, None).await
    }

    /// Resumes a run that paused with deferred calls
    /// ([`Termination::Deferred`]), with one [`Resolution`] per call that
    /// waits (by call id): approved calls run now, denied ones get an error
    /// result, external ones the caller's result; then the run goes on to
    /// its end as it would have, its limits and metadata counted over both
    /// segments. The conversation may have been saved and loaded in between
    /// (it serialises with serde), in another process.
    ///
    /// Resolutions that do not fit the deferred calls are refused before
    /// anything runs ([`Termination::InvalidResume`], with the
    /// [`ResumeError`](super::ResumeError)), the conversation unchanged.
    pub async fn resume<I, K>(
        &mut self,
        conversation: &mut Conversation,
        resolutions: I,
    ) -> Result<RunOutput<LoopOutput<S>>, RunError>
    where
        I: IntoIterator<Item = (K, Resolution)>,
        K: Into<String>,
    {
        let resume = Resume::prepare(conversation, resolutions)?;
        self.execute(conversation, None, Some(resume), None).await
    }

    /// Like [`run`](Self::run), with every side effect going through
    /// `journal` (see [`journal`](super::journal)).
    pub async fn run_journaled(
        &mut self,
        conversation: &mut Conversation,
        journal: &dyn Journal,
    ) -> Result<RunOutput<LoopOutput<S>>, RunError> {
        self.execute(conversation, None, None, Some(journal)).await
    }

    /// The run, reporting to `events` when streamed (see `ToolLoop::run_stream`
    /// in the `stream` module).
    pub(crate) async fn execute(
        &mut self,
        conversation: &mut Conversation,
        events: Option<EventSink>,
        resume: Option<Resume>,
        journal: Option<&dyn Journal>,
    ) -> Result<RunOutput<LoopOutput<S>>, RunError> {
        let setup = Setup {
            name: None, // a bare loop is an unnamed agent with one attempt
            model: &*self.model,
            tools: &self.tools,
            definitions: self.tools.definitions(),
            system: self.system.as_deref(),
            options: &self.options,
            hooks: &self.hooks,
            governance: &self.governance,
            confirmation: self.confirmation.as_deref(),
            response_schema: None,
            output: None,
        };
        let mut segment = Segment::start(setup, conversation, &self.cancel, events, resume.as_ref(), journal)?;
        segment.tally.attempts = 1;
        let mut control = Closures { terminal: self.terminal.as_mut(), on_limit: self.on_limit.as_mut() };
        let (engine, tally) = (&segment.engine, &mut segment.tally);
        let outcome = match resume {
            Some(Resume { answers, checkpoint }) => {
                let cursor = checkpoint.cursor();
                engine
                    .drive_from(conversation, tally, 1, &mut control, cursor, Some(answers))
                    .instrument(segment.span.clone())
                    .await
            }
            None => engine.drive(conversation, tally, 1, &mut control).instrument(segment.span.clone()).await,
        };
        segment.finish(outcome.map(|end| {
            let termination = match &end {
                LoopOutput::Answer(_) => Termination::Answer,
                LoopOutput::Signal(_) => Termination::Signal,
            };
            (end, termination)
        }))
    }
}

/// The steering of a bare [`ToolLoop`] run: its terminal check and
/// iteration-limit closures, seen as a [`Control`].
struct Closures<'a, S> {
    terminal: Option<&'a mut TerminalCheck<S>>,
    on_limit: Option<&'a mut LimitHook<S>>,
}

impl<S: Send> Control<S> for Closures<'_, S> {
    fn terminal(&mut self, batch: &[ToolExecution]) -> Option<S> {
        self.terminal.as_mut().and_then(|check| check(batch))
    }

    fn on_limit(&mut self, limit: u32) -> LimitDecision<S> {
        self.on_limit.as_mut().map_or(LimitDecision::MaxIterations, |hook| hook(limit))
    }
}
