//! The type-state builder of [`Agent`].

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use super::agent::Agent;
use super::handlers::{NoReflection, ReflectionText, Reflective, ValidationFuture, ValidationResult};
use super::output::{AgentOutput, Text};
use super::output_bounds::{OutputDeserialize, OutputSchema, OutputSend};
use super::output_mode::OutputMode;
use super::own_tools::{SUBMIT_TOOL, submit_definition};
use super::spec::{Check, TextSpec, TypedSpec};
use super::state::{
    AutoOutput, Buildable, Built, HasModel, ModeUnset, ModelUnset, NativeOutput, NoModel, OutputIs, OutputTool,
    OutputUnset, PromptedMode, PromptedOutput, ReflectionUnset, TextConfigured, TextMode, ToolOptions, Typed,
    WithModel,
};
use crate::build_error::BuildError;
use crate::cancel::CancellationToken;
use crate::conversation::Conversation;
use crate::model::{Model, ResponseSchema, ResponseSchemaSupport};
use crate::run::{Governance, Hooks, LimitDecision, LoopOptions, event_hooks, hook_setters, loop_settings, setters};
use crate::tool::ToolExecution;
use crate::tool::{DynTool, IntoState, Stateless, Tool, ToolSet};

/// The type states a builder carries only in its type.
type BuilderState<M, R, K> = fn() -> (M, R, K);

/// Builds an [`Agent`]. The type parameters track what has been set — the
/// model (`M`), the output (`O`: a text answer by default, or your type)
/// and reflection (`R`) — so that configurations that make no sense do not
/// compile.
///
/// Start with [`Agent::builder`]. The loop's limits and settings
/// (`max_iterations`, `max_duration`, `token_budget`...) are setters here,
/// as on a [`ToolLoop`](crate::run::ToolLoop); to give several agents the
/// same ones, write a function of the builder:
///
/// ```
/// use std::time::Duration;
/// use toolloop::testing::ScriptedModel;
/// use toolloop::{Agent, AgentBuilder};
///
/// fn limits<M, O, R, K>(builder: AgentBuilder<M, O, R, K>) -> AgentBuilder<M, O, R, K> {
///     builder.max_iterations(5).max_model_calls(40).max_duration(Duration::from_secs(120))
/// }
///
/// let agent = limits(Agent::builder().model(ScriptedModel::new())).build()?;
/// let tighter = limits(Agent::builder().model(ScriptedModel::new())).max_iterations(2).build()?;
/// # Ok::<(), toolloop::BuildError>(())
/// ```
#[must_use = "an agent builder does nothing until `.build()` is called"]
pub struct AgentBuilder<M = NoModel, O = Text, R = NoReflection, K = OutputTool> {
    pub(super) model: M,
    pub(super) tools: ToolSet,
    /// The first configuration error found by a setter, reported by `build()`.
    pub(super) error: Option<BuildError>,
    pub(super) system: Option<String>,
    pub(super) name: Option<String>,
    pub(super) options: LoopOptions,
    pub(super) hooks: Hooks,
    pub(super) governance: Governance,
    pub(super) cancel: Option<CancellationToken>,
    pub(super) max_attempts: u32,
    pub(super) text: TextSpec,
    pub(super) typed: TypedSpec<O>,
    pub(super) state: PhantomData<BuilderState<M, R, K>>,
}

impl<M: fmt::Debug, O, R, K> fmt::Debug for AgentBuilder<M, O, R, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentBuilder")
            .field("model", &self.model)
            .field("tools", &self.tools)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Agent {
    /// Starts building an agent.
    pub fn builder() -> AgentBuilder {
        AgentBuilder {
            model: NoModel,
            tools: ToolSet::new(),
            error: None,
            system: None,
            name: None,
            options: LoopOptions::default(),
            hooks: Hooks::new(),
            governance: Governance::new(),
            cancel: None,
            max_attempts: 3,
            text: TextSpec::default(),
            typed: TypedSpec::default(),
            state: PhantomData,
        }
    }
}

impl<M, O, R, K> AgentBuilder<M, O, R, K> {
    fn with_state<O2, R2>(self, typed: TypedSpec<O2>) -> AgentBuilder<M, O2, R2, K> {
        self.with_model(typed, |model| model)
    }

    fn with_model<M2, O2, R2>(self, typed: TypedSpec<O2>, model: impl FnOnce(M) -> M2) -> AgentBuilder<M2, O2, R2, K> {
        AgentBuilder {
            model: model(self.model),
            tools: self.tools,
            error: self.error,
            system: self.system,
            name: self.name,
            options: self.options,
            hooks: self.hooks,
            governance: self.governance,
            cancel: self.cancel,
            max_attempts: self.max_attempts,
            text: self.text,
            typed,
            state: PhantomData,
        }
    }

    fn with_mode<K2>(mut self, mode: OutputMode) -> AgentBuilder<M, O, R, K2> {
        self.typed.mode = mode;
        AgentBuilder {
            model: self.model,
            tools: self.tools,
            error: self.error,
            system: self.system,
            name: self.name,
            options: self.options,
            hooks: self.hooks,
            governance: self.governance,
            cancel: self.cancel,
            max_attempts: self.max_attempts,
            text: self.text,
            typed: self.typed,
            state: PhantomData,
        }
    }

    /// Sets the model (any [`Model`]: a provider, a test model, an `Arc<dyn Model>`).
    /// An agent has one model: a second call does not compile. (To fall
    /// back to another model when one fails, wrap both in a
    /// [`Fallback`](crate::providers::Fallback).)
    pub fn model(mut self, model: impl Model + 'static) -> AgentBuilder<WithModel, O, R, K>
    where
        M: ModelUnset,
    {
        let typed = std::mem::take(&mut self.typed);
        self.with_model(typed, |_| WithModel(Arc::new(model)))
    }

    /// Names the agent in traces: the run's span is `invoke_agent {name}`
    /// with `gen_ai.agent.name` (see [`crate::telemetry`]).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

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

    /// Adds a derived tool that needs no state.
    pub fn tool<T: Stateless>(self) -> Self {
        self.tool_with_state::<T>(T::no_state())
    }

    /// Adds a derived tool together with the state it runs with
    /// (`#[tool(state = ...)]`): by value, or an `Arc` shared with other tools.
    pub fn tool_with_state<T: Tool>(mut self, state: impl IntoState<T::State>) -> Self {
        if let Err(error) = self.tools.add_with_state::<T>(state) {
            self.error.get_or_insert(error);
        }
        self
    }

    /// Adds a tool defined at run time. A name collision (also with the
    /// output tool or `submit`) is reported by [`build`](AgentBuilder::build).
    pub fn tool_dyn(mut self, tool: Arc<dyn DynTool>) -> Self {
        if let Err(error) = self.tools.add_dyn(tool) {
            self.error.get_or_insert(error);
        }
        self
    }

    /// Adds an external tool: offered to the model, executed by the caller
    /// (see [`ToolSet::add_external`]). A run that gets a call to it pauses
    /// with the call pending; resume it with the call's result
    /// ([`Agent::resume`]).
    pub fn external_tool(mut self, definition: crate::tool::ToolDefinition) -> Self {
        if let Err(error) = self.tools.add_external(definition) {
            self.error.get_or_insert(error);
        }
        self
    }

    /// How long tools without a timeout of their own may run (default
    /// [`DEFAULT_TOOL_TIMEOUT`](crate::tool::DEFAULT_TOOL_TIMEOUT)); a call that
    /// takes longer fails with [`FailureKind::TimedOut`](crate::FailureKind::TimedOut).
    /// Zero is rejected by [`build`](AgentBuilder::build). (A
    /// [`ToolLoop`](crate::run::ToolLoop) takes its tools' timeout from its
    /// [`ToolSet`].)
    pub fn tool_timeout(mut self, timeout: Duration) -> Self {
        if timeout.is_zero() {
            self.error.get_or_insert(BuildError::ZeroTimeout { setting: "tool_timeout" });
        }
        self.tools.set_default_timeout(timeout);
        self
    }

    // The loop's limits and settings: `max_iterations`, `max_duration`,
    // `token_budget`... (the one list is in `run/options.rs`).
    loop_settings!(setters);

    // `on_event` and the typed hooks, each named for the event it filters:
    // `on_tool_execution_finished`, `on_run_finished`... (the one list is in
    // `run/hooks.rs`). A hook observes a run and can never break it.
    event_hooks!(hook_setters);

    /// Sets the governance consulted before each tool call.
    pub fn governance(mut self, governance: Governance) -> Self {
        self.governance = governance;
        self
    }

    /// Sets the token that cancels this agent's runs. The token belongs to
    /// the agent (and its clones): once cancelled, every run of it stops,
    /// the ones in flight and the ones started later. To cancel one run,
    /// pass a token of its own to [`Agent::run_with_cancel`](crate::Agent::run_with_cancel).
    pub fn cancel_token(mut self, cancel: CancellationToken) -> Self {
        self.cancel = Some(cancel);
        self
    }

    /// Makes the agent produce a typed output `T` through an output tool
    /// whose input schema is `T`'s. `T` is an [`OutputType`](crate::agent::OutputType): each of its
    /// requirements is a bound of its own here, so that a type missing one
    /// is told which (and how to add it).
    pub fn output<T>(self) -> AgentBuilder<M, T, R, K>
    where
        O: OutputUnset,
        T: OutputDeserialize + OutputSchema + OutputSend + 'static,
    {
        self.with_state(TypedSpec::default())
    }

    /// Not available: an agent builder must be built before it runs.
    #[doc(hidden)]
    pub fn run(&self, _conversation: &mut Conversation) -> std::future::Pending<()>
    where
        Self: Built,
    {
        std::future::pending()
    }

    /// Not available: an agent builder must be built before it runs.
    #[doc(hidden)]
    pub fn run_with_cancel(
        &self,
        _conversation: &mut Conversation,
        _cancel: &CancellationToken,
    ) -> std::future::Pending<()>
    where
        Self: Built,
    {
        std::future::pending()
    }

    /// Not available: an agent builder must be built before it runs.
    #[doc(hidden)]
    pub fn run_stream(&self, _conversation: &mut Conversation) -> std::future::Pending<()>
    where
        Self: Built,
    {
        std::future::pending()
    }
}

/// Options of typed agents.
impl<M, O, R, K> AgentBuilder<M, O, R, K> {
    /// Sets the reflection handler: the output tool returns its rendering of
    /// the proposed output, the model may refine it, and an injected
    /// `submit` tool ends the iteration loop.
    pub fn reflection<T: 'static, S: ReflectionText>(
        mut self,
        handler: impl Fn(&T) -> S + Send + Sync + 'static,
    ) -> AgentBuilder<M, O, Reflective, K>
    where
        O: Typed + OutputIs<T>,
        R: ReflectionUnset,
    {
        self.typed.reflection = O::reflection(Arc::new(handler));
        let typed = std::mem::take(&mut self.typed);
        self.with_state(typed)
    }

    /// Adds a validator run on every output that deserialised and met its
    /// schema; its error is fed back to the model. Return `Err("reason")`
    /// or `Err(format!(..))`: with `Err("reason".into())` the error's type
    /// cannot be inferred (rustc asks for `Err::<(), E>`).
    pub fn validator<T: 'static, V: ValidationResult>(
        mut self,
        validator: impl Fn(&T) -> V + Send + Sync + 'static,
    ) -> Self
    where
        O: Typed + OutputIs<T>,
    {
        self.typed.checks.extend(O::validator(Arc::new(validator)).map(Check::Sync));
        self
    }

    /// Adds an async validator (for checks against a database or a service).
    pub fn async_validator<T: 'static, F: ValidationFuture>(
        mut self,
        validator: impl Fn(&T) -> F + Send + Sync + 'static,
    ) -> Self
    where
        O: Typed + OutputIs<T>,
    {
        self.typed.checks.extend(O::async_validator(Arc::new(validator)).map(Check::Async));
        self
    }

    /// How many attempts (validation rounds) a run may take (default 3).
    pub fn max_attempts(mut self, attempts: u32) -> Self
    where
        O: Typed,
    {
        self.max_attempts = attempts;
        self
    }

    /// Takes the output from the provider's native structured output
    /// ([`OutputMode::Native`]): each request carries the output type's
    /// schema ([`ResponseSchema`]) and the model's final text answer
    /// follows it; the model may still call tools first. `build()` fails
    /// when the model says it cannot
    /// ([`BuildError::NativeOutputUnsupported`](crate::BuildError::NativeOutputUnsupported)).
    ///
    /// ```
    /// use toolloop::agent::OutputMode;
    /// use toolloop::testing::ScriptedModel;
    /// use toolloop::{Agent, Conversation, ModelResponse};
    ///
    /// #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
    /// struct Verdict { approved: bool }
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let model = ScriptedModel::new().respond(ModelResponse::from_text(r#"{"approved": true}"#));
    /// let agent = Agent::builder().model(model.clone()).output::<Verdict>().native_output().build()?;
    /// assert_eq!(agent.output_mode(), OutputMode::Native);
    /// let mut conversation = Conversation::new();
    /// conversation.push_user("Approve it?");
    /// assert!(agent.run(&mut conversation).await?.output.approved);
    /// // The request carried the schema, and no output tool.
    /// let request = model.last_request().unwrap();
    /// assert!(request.response_schema.is_some() && request.tools.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn native_output(self) -> AgentBuilder<M, O, R, NativeOutput>
    where
        O: Typed,
        K: ModeUnset,
    {
        self.with_mode(OutputMode::Native)
    }

    /// Asks for the output as JSON in the final text answer
    /// ([`OutputMode::Prompted`]): the system prompt gets a paragraph with
    /// the instructions and the output type's schema, and the output is
    /// read from the answer, bare or in one fenced block. For servers that
    /// enforce neither tools nor schemas well.
    pub fn prompted_output(self) -> AgentBuilder<M, O, R, PromptedOutput>
    where
        O: Typed,
        K: ModeUnset,
    {
        self.with_mode(OutputMode::Prompted)
    }

    /// Native output when the model says it follows a response schema
    /// together with tools (or the agent has no tools), else the output
    /// tool ([`OutputMode::Auto`]); [`Agent::output_mode`] tells which.
    pub fn auto_output(self) -> AgentBuilder<M, O, R, AutoOutput>
    where
        O: Typed,
        K: ModeUnset,
    {
        self.with_mode(OutputMode::Auto)
    }

    /// Replaces the sentence of the prompted mode's system-prompt
    /// paragraph that asks for the output (the schema still follows it):
    /// say it in the prompt's language, or the way a small model follows
    /// best.
    pub fn output_instructions(mut self, instructions: impl Into<String>) -> Self
    where
        O: Typed,
        K: PromptedMode,
    {
        self.typed.instructions = Some(instructions.into());
        self
    }

    /// Renames the output tool (default `final_output`).
    pub fn output_tool_name<K2>(mut self, name: impl Into<std::borrow::Cow<'static, str>>) -> AgentBuilder<M, O, R, K2>
    where
        O: Typed,
        K: ToolOptions<Configured = K2>,
    {
        self.typed.name = name.into();
        let mode = self.typed.mode;
        self.with_mode(mode)
    }

    /// Sets the output tool's description (by default, a sentence and the
    /// output type's doc comment). An empty one is rejected by
    /// [`build`](AgentBuilder::build).
    pub fn output_tool_description<K2>(
        mut self,
        description: impl Into<std::borrow::Cow<'static, str>>,
    ) -> AgentBuilder<M, O, R, K2>
    where
        O: Typed,
        K: ToolOptions<Configured = K2>,
    {
        let description = description.into();
        if description.trim().is_empty() {
            self.error.get_or_insert(BuildError::EmptyOutputToolDescription);
        }
        self.typed.description = Some(description);
        let mode = self.typed.mode;
        self.with_mode(mode)
    }
}

/// Options of text agents.
impl<M, O, R, K> AgentBuilder<M, O, R, K> {
    /// On the first text-only answer, asks the model once to verify that the
    /// task is complete; it may continue with tools or confirm.
    pub fn double_confirmation(self) -> AgentBuilder<M, TextConfigured, R, K>
    where
        O: TextMode,
    {
        self.double_confirmation_prompt(crate::run::DEFAULT_CONFIRMATION_PROMPT)
    }

    /// Double confirmation with your own prompt.
    pub fn double_confirmation_prompt(mut self, prompt: impl Into<String>) -> AgentBuilder<M, TextConfigured, R, K>
    where
        O: TextMode,
    {
        self.text.confirmation = Some(prompt.into());
        self.with_state(TypedSpec::default())
    }

    /// Ends the run when `check`, called after each executed batch, returns
    /// a signal; the signal is the run's output.
    pub fn terminal_check(
        mut self,
        check: impl Fn(&[ToolExecution]) -> Option<String> + Send + Sync + 'static,
    ) -> AgentBuilder<M, TextConfigured, R, K>
    where
        O: TextMode,
    {
        self.text.terminal = Some(Arc::new(check));
        self.with_state(TypedSpec::default())
    }

    /// Called when an attempt has made as many iterations as its limit,
    /// with that limit (`max_iterations`, plus what earlier calls granted):
    /// grant more iterations, end with a signal (the run's output), or stop.
    ///
    /// ```
    /// use toolloop::Agent;
    /// use toolloop::run::LimitDecision;
    /// use toolloop::testing::ScriptedModel;
    ///
    /// let agent = Agent::builder()
    ///     .model(ScriptedModel::new())
    ///     .max_iterations(10)
    ///     // Ten more once, then stop with what the run has.
    ///     .on_iteration_limit(|limit| if limit < 20 { LimitDecision::Extend(10) } else { LimitDecision::MaxIterations })
    ///     .build()?;
    /// # Ok::<(), toolloop::BuildError>(())
    /// ```
    pub fn on_iteration_limit(
        mut self,
        hook: impl Fn(u32) -> LimitDecision<String> + Send + Sync + 'static,
    ) -> AgentBuilder<M, TextConfigured, R, K>
    where
        O: TextMode,
    {
        self.text.on_limit = Some(Arc::new(hook));
        self.with_state(TypedSpec::default())
    }
}

impl<M, O, R, K> AgentBuilder<M, O, R, K> {
    /// Builds the agent. Fails only on what types cannot catch: two tools
    /// with one name (also one of yours named like the output tool, or
    /// `submit` on an agent with reflection), an output type or a run-time
    /// tool whose schema is not an object, an empty output-tool
    /// description, or a limit that is zero (or a temperature that is
    /// negative or not finite).
    pub fn build(self) -> Result<Agent<O::Output, R>, BuildError>
    where
        M: HasModel,
        O: Buildable,
    {
        let typed: TypedSpec<O::Output> = convert(self.typed);
        if let Some(error) = self.error {
            return Err(error);
        }
        if self.max_attempts == 0 {
            return Err(BuildError::InvalidSetting { setting: "max_attempts", value: "0".to_owned() });
        }
        if let Some((setting, value)) = self.options.invalid_setting() {
            return Err(BuildError::InvalidSetting { setting, value });
        }
        let output_definition =
            O::Output::output_definition(typed.name.clone(), typed.description.clone()).transpose()?;
        let names = self.tools.names().chain(output_definition.as_ref().map(|definition| &*definition.name));
        if let Some(name) = names.into_iter().find(|name| !crate::tool::is_valid_tool_name(name)) {
            return Err(BuildError::InvalidToolName(name.to_owned()));
        }
        // Providers reject a tool whose input is not an object at the first
        // request; derived tools are checked when added, run-time ones here.
        if let Some(definition) = self
            .tools
            .definitions()
            .iter()
            .find(|definition| definition.input_schema.get("type") != Some(&"object".into()))
        {
            return Err(BuildError::ToolInputNotAnObject {
                tool: definition.name.to_string(),
                schema: definition.input_schema.to_string(),
            });
        }
        if let Some(definition) = &output_definition {
            if self.tools.get(&definition.name).is_some() {
                return Err(BuildError::OutputToolNameTaken(definition.name.to_string()));
            }
            if typed.reflection.is_some() {
                if definition.name == SUBMIT_TOOL {
                    return Err(BuildError::SubmitNameTaken { output_tool: true });
                }
                if self.tools.get(SUBMIT_TOOL).is_some() {
                    return Err(BuildError::SubmitNameTaken { output_tool: false });
                }
            }
        }
        let model = self.model.into_model();
        let (mode, response_schema) = match &output_definition {
            Some(definition) => resolve_mode(
                typed.mode,
                definition,
                O::Output::doc(),
                &*model,
                self.tools.is_empty() && typed.reflection.is_none(),
            )?,
            None => (OutputMode::Tool, None),
        };
        let mut system = self.system;
        if let (OutputMode::Prompted, Some(definition)) = (mode, &output_definition) {
            let instructions = prompted_instructions(typed.instructions.as_deref(), &definition.input_schema);
            system = Some(match system {
                Some(system) => format!("{system}\n\n{instructions}"),
                None => instructions,
            });
        }
        let mut definitions = self.tools.definitions().to_vec();
        if mode == OutputMode::Tool {
            definitions.extend(output_definition.iter().cloned());
        }
        if output_definition.is_some() && typed.reflection.is_some() {
            definitions.push(submit_definition());
        }
        Ok(Agent {
            model,
            tools: self.tools,
            definitions: definitions.into(),
            system,
            output_mode: mode,
            response_schema,
            name: self.name,
            options: self.options,
            hooks: self.hooks,
            governance: self.governance,
            cancel: self.cancel,
            max_attempts: if output_definition.is_some() { self.max_attempts } else { 1 },
            text: self.text,
            typed,
            output_definition,
            reflection: PhantomData,
        })
    }
}

/// The mode an agent runs in (`Auto` resolved) and, in native mode, the
/// schema its requests carry; an error when native output was asked of a
/// model that says it cannot give it. `no_tools`: the requests offer no
/// tool (no helper, and no `submit`).
fn resolve_mode(
    asked: OutputMode,
    definition: &crate::tool::ToolDefinition,
    doc: Option<String>,
    model: &dyn Model,
    no_tools: bool,
) -> Result<(OutputMode, Option<ResponseSchema>), BuildError> {
    if !matches!(asked, OutputMode::Native | OutputMode::Auto) {
        return Ok((asked, None));
    }
    let mut schema = ResponseSchema::new(definition.name.clone(), definition.input_schema.clone());
    schema.description = doc;
    let refused = match model.response_schema_support(&schema) {
        ResponseSchemaSupport::WithTools | ResponseSchemaSupport::Unknown if asked == OutputMode::Native => None,
        ResponseSchemaSupport::WithTools => None,
        ResponseSchemaSupport::WithoutTools if no_tools => None,
        ResponseSchemaSupport::WithoutTools => {
            Some("it cannot call tools while it follows a response schema, and this agent has tools".to_owned())
        }
        ResponseSchemaSupport::Unsupported(reason) => Some(reason),
        // Auto: only a model that says it can.
        _ => Some(String::new()),
    };
    match (refused, asked) {
        (None, _) => Ok((OutputMode::Native, Some(schema))),
        (Some(_), OutputMode::Auto) => Ok((OutputMode::Tool, None)),
        (Some(reason), _) => Err(BuildError::NativeOutputUnsupported {
            provider: model.provider().to_owned(),
            model: model.name().to_owned(),
            reason,
        }),
    }
}

/// The system prompt's paragraph in prompted mode.
fn prompted_instructions(instructions: Option<&str>, schema: &serde_json::Value) -> String {
    let ask = instructions.unwrap_or(
        "When you give your final answer, reply with only your output as one JSON value (bare, or in one ```json \
         fenced block), with no other text, following this JSON schema:",
    );
    format!("{ask}\n{schema}")
}

/// The typed settings for output type `U`, which is `T` itself (or `Text`
/// for a text agent, which has none of them).
fn convert<T: 'static, U: OutputIs<T>>(spec: TypedSpec<T>) -> TypedSpec<U> {
    TypedSpec {
        name: spec.name,
        description: spec.description,
        reflection: spec.reflection.and_then(U::reflection),
        mode: spec.mode,
        instructions: spec.instructions,
        checks: spec
            .checks
            .into_iter()
            .filter_map(|check| match check {
                Check::Sync(validator) => U::validator(validator).map(Check::Sync),
                Check::Async(validator) => U::async_validator(validator).map(Check::Async),
            })
            .collect(),
    }
}
