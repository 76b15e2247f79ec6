//! The agent: its setup, shared by every run.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use super::handlers::NoReflection;
use super::output::{AgentOutput, Text};
use super::output_mode::OutputMode;
use super::spec::{TextSpec, TypedSpec};
use crate::cancel::CancellationToken;
use crate::conversation::Conversation;
use crate::model::{Model, ResponseSchema};
use crate::run::journal::Journal;
use crate::run::{Governance, Hooks, LoopOptions, Resolution, Resume, RunError, RunOutput};
use crate::stream::RunStream;
use crate::tool::{ToolDefinition, ToolSet};

/// An agent: a model, tools, and either a text answer or a typed output
/// (`Output`), with or without a reflection handler (`Reflection`).
///
/// Build one with [`Agent::builder`]; run it with [`Agent::run`] on a
/// conversation you own. An agent is immutable and can serve many runs at
/// once (share it with `Arc`, or clone it: clones share the model and tools).
///
/// Its type says what a run returns: `Agent` is a text agent (the output is
/// a `String`), `Agent<Offer>` produces an `Offer` (built with
/// `.output::<Offer>()`), and `Agent<Offer, Reflective>` has a reflection
/// handler too (built with `.reflection(...)`, see
/// [`Reflective`](crate::agent::Reflective)). The defaults, text and no
/// reflection, are markers you never write.
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
    /// How the output arrives (never `Auto`: resolved by `build()`).
    pub(super) output_mode: OutputMode,
    /// In native mode, the schema every request carries.
    pub(super) response_schema: Option<ResponseSchema>,
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
            output_mode: self.output_mode,
            response_schema: self.response_schema.clone(),
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
            .field("output_mode", &self.output_mode)
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
        self.execute(conversation, &cancel, None, None, None).await
    }

    /// Resumes a run that paused with deferred tool calls
    /// ([`Termination::Deferred`](crate::run::Termination::Deferred)): one
    /// [`Resolution`] per call that waits, by call id. Approved calls run
    /// now, denied ones get an error result the model reads, external ones
    /// the result the caller gives; then the run goes on to its end as it
    /// would have — typed output, validation, reflection and attempts
    /// included — with its limits and metadata counted over both segments
    /// (the time paused does not count toward
    /// [`max_duration`](crate::AgentBuilder::max_duration)).
    ///
    /// The conversation may have been saved and loaded in between (it
    /// serialises with serde), in another process, by an agent built the
    /// same way. Resolutions that do not fit its deferred calls are refused
    /// before anything runs ([`Termination::InvalidResume`](crate::run::Termination::InvalidResume),
    /// with the [`ResumeError`](crate::run::ResumeError) in
    /// [`RunError::resume_error`]), the conversation unchanged.
    ///
    /// ```
    /// use toolloop::run::{Governance, Resolution};
    /// use toolloop::testing::ScriptedModel;
    /// use toolloop::{Agent, Conversation, ModelResponse, ToolCall};
    ///
    /// /// Transfer money.
    /// #[derive(toolloop::Tool)]
    /// struct Transfer {
    ///     /// In cents.
    ///     amount: u64,
    /// }
    ///
    /// impl Transfer {
    ///     async fn run(self) -> Result<String, std::convert::Infallible> {
    ///         Ok(format!("sent {}", self.amount))
    ///     }
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let model = ScriptedModel::new()
    ///     .respond(ModelResponse::from_tool_calls([ToolCall::new("t1", "transfer", serde_json::json!({"amount": 500}))]))
    ///     .respond(ModelResponse::from_text("Sent."));
    /// let agent = Agent::builder()
    ///     .model(model)
    ///     .tool::<Transfer>()
    ///     .governance(Governance::new().needs_approval("transfer"))
    ///     .build()?;
    ///
    /// let mut conversation = Conversation::new();
    /// conversation.push_user("Pay the invoice.");
    /// let paused = agent.run(&mut conversation).await.unwrap_err();
    /// assert!(paused.is_deferred());
    /// assert_eq!(paused.deferred_calls()[0].call.id, "t1");
    ///
    /// // Later, maybe in another process: the conversation went through JSON.
    /// let json = serde_json::to_string(&conversation)?;
    /// let mut conversation: Conversation = serde_json::from_str(&json)?;
    /// let done = agent.resume(&mut conversation, [("t1", Resolution::Approve)]).await?;
    /// assert_eq!(done.output, "Sent.");
    /// assert_eq!(done.metadata.model_calls, 2); // over both segments
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub async fn resume<I, K>(
        &self,
        conversation: &mut Conversation,
        resolutions: I,
    ) -> Result<RunOutput<O::Value>, RunError>
    where
        I: IntoIterator<Item = (K, Resolution)>,
        K: Into<String>,
    {
        let resume = Resume::prepare(conversation, resolutions)?;
        let cancel = self.cancel.clone().unwrap_or_default();
        self.execute(conversation, &cancel, None, Some(resume), None).await
    }

    /// [`resume`](Self::resume), streamed as [`run_stream`](Self::run_stream) is.
    pub fn resume_stream<'a, I, K>(
        &'a self,
        conversation: &'a mut Conversation,
        resolutions: I,
    ) -> RunStream<'a, O::Value>
    where
        O::Value: Send,
        I: IntoIterator<Item = (K, Resolution)>,
        K: Into<String>,
    {
        let resume = Resume::prepare(conversation, resolutions);
        RunStream::new(move |sink| async move {
            let cancel = self.cancel.clone().unwrap_or_default();
            self.execute(conversation, &cancel, Some(sink), Some(resume?), None).await
        })
    }

    /// Like [`run`](Self::run), cancelled through `cancel` (instead of the
    /// builder's token).
    pub async fn run_with_cancel(
        &self,
        conversation: &mut Conversation,
        cancel: &CancellationToken,
    ) -> Result<RunOutput<O::Value>, RunError> {
        self.execute(conversation, cancel, None, None, None).await
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
        self.execute(conversation, cancel, None, None, Some(journal)).await
    }

    /// Like [`resume`](Self::resume), with every side effect of the resumed
    /// run going through `journal`, as [`run_journaled`](Self::run_journaled)
    /// does, and cancelled through `cancel`: how a durable engine resumes a
    /// paused run (the approved calls run once, however often the
    /// resumption is replayed). A refused resume changes nothing, as with
    /// `resume`.
    pub async fn resume_journaled<I, K>(
        &self,
        conversation: &mut Conversation,
        resolutions: I,
        journal: &dyn Journal,
        cancel: &CancellationToken,
    ) -> Result<RunOutput<O::Value>, RunError>
    where
        I: IntoIterator<Item = (K, Resolution)>,
        K: Into<String>,
    {
        let resume = Resume::prepare(conversation, resolutions)?;
        self.execute(conversation, cancel, None, Some(resume), Some(journal)).await
    }

    /// Runs the agent as [`run`](Self::run) does, streaming what happens:
    /// the model's deltas as they arrive (a tool call's arguments forming,
    /// the output being written), tool calls running, validation, the end;
    /// [`RunStream::output`] then gives what `run` would return. See
    /// [`stream`](crate::stream).
    pub fn run_stream<'a>(&'a self, conversation: &'a mut Conversation) -> RunStream<'a, O::Value>
    where
        O::Value: Send,
    {
        RunStream::new(move |sink| async move {
            let cancel = self.cancel.clone().unwrap_or_default();
            self.execute(conversation, &cancel, Some(sink), None, None).await
        })
    }

    /// The tools the model is offered, in order (helpers, then the output
    /// tool and `submit` when the agent has them).
    pub fn tool_definitions(&self) -> &[ToolDefinition] {
        &self.definitions
    }

    /// How the output reaches the agent: as chosen on the builder, with
    /// [`OutputMode::Auto`] resolved for the model; [`OutputMode::Tool`] on
    /// a text agent.
    pub fn output_mode(&self) -> OutputMode {
        self.output_mode
    }

    /// The schema requests carry in [`OutputMode::Native`].
    pub fn response_schema(&self) -> Option<&ResponseSchema> {
        self.response_schema.as_ref()
    }
}
