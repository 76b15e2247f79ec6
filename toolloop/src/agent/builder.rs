//! The type-state builder of [`Agent`].

use std::fmt;
use std::marker::PhantomData;
use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::Duration;

use super::Agent;
use super::error::BuildError;
use super::output_tool::{SUBMIT_TOOL, SubmitTool, TextSpec};
use super::spec::{AgentOutput, Check, TypedSpec};
use super::state::{
    Buildable, Built, HasModel, NoModel, NoReflection, OutputIs, OutputType, OutputUnset, ReflectionUnset, Reflective,
    Text, TextConfigured, TextMode, Typed, WithModel,
};
use crate::cancel::CancellationToken;
use crate::conversation::Conversation;
use crate::model::Model;
use crate::run::{ExecutedCall, Governance, Hooks, LimitDecision, LimitReached, LoopOptions};
use crate::tool::{DynTool, IntoState, Stateless, Tool, ToolSet};

/// Builds an [`Agent`]. The type parameters track what has been set — the
/// model (`M`), the output (`O`: [`Text`] or your type) and reflection
/// (`R`) — so that configurations that make no sense do not compile.
///
/// Start with [`Agent::builder`].
#[must_use = "an agent builder does nothing until `.build()` is called"]
pub struct AgentBuilder<M = NoModel, O = Text, R = NoReflection> {
    pub(super) model: M,
    pub(super) tools: ToolSet,
    pub(super) tool_error: Option<BuildError>,
    pub(super) system: Option<String>,
    pub(super) options: LoopOptions,
    pub(super) hooks: Hooks,
    pub(super) governance: Governance,
    pub(super) cancel: Option<CancellationToken>,
    pub(super) max_attempts: u32,
    pub(super) text: TextSpec,
    pub(super) typed: TypedSpec<O>,
    pub(super) state: PhantomData<fn() -> (M, R)>,
}

impl<M: fmt::Debug, O, R> fmt::Debug for AgentBuilder<M, O, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentBuilder")
            .field("model", &self.model)
            .field("tools", &self.tools)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl AgentBuilder {
    pub(super) fn new() -> Self {
        Self {
            model: NoModel,
            tools: ToolSet::new(),
            tool_error: None,
            system: None,
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

impl<M, O, R> AgentBuilder<M, O, R> {
    fn with_state<O2, R2>(self, typed: TypedSpec<O2>) -> AgentBuilder<M, O2, R2> {
        self.with_model(typed, |model| model)
    }

    fn with_model<M2, O2, R2>(self, typed: TypedSpec<O2>, model: impl FnOnce(M) -> M2) -> AgentBuilder<M2, O2, R2> {
        AgentBuilder {
            model: model(self.model),
            tools: self.tools,
            tool_error: self.tool_error,
            system: self.system,
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

    /// Sets the model (any [`Model`]: a provider, a test model, an `Arc<dyn Model>`).
    pub fn model(mut self, model: impl Model + 'static) -> AgentBuilder<WithModel, O, R> {
        let typed = std::mem::take(&mut self.typed);
        self.with_model(typed, |_| WithModel(Arc::new(model)))
    }

    /// Sets the system prompt.
    pub fn system(mut self, system: impl Into<String>) -> Self {
        self.system = Some(system.into());
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
            self.tool_error.get_or_insert(BuildError::DuplicateToolName(error.0));
        }
        self
    }

    /// Adds a tool defined at run time. A name collision (also with the
    /// output tool or `submit`) is reported by [`build`](AgentBuilder::build).
    pub fn tool_dyn(mut self, tool: Arc<dyn DynTool>) -> Self {
        if let Err(error) = self.tools.add_dyn(tool) {
            self.tool_error.get_or_insert(BuildError::DuplicateToolName(error.0));
        }
        self
    }

    /// How long tools without a timeout of their own may run (default
    /// [`DEFAULT_TOOL_TIMEOUT`](crate::DEFAULT_TOOL_TIMEOUT)); a call that
    /// takes longer fails with [`FailureKind::TimedOut`](crate::FailureKind::TimedOut).
    pub fn tool_timeout(mut self, timeout: Duration) -> Self {
        self.tools.set_default_timeout(timeout);
        self
    }

    /// Sets every loop limit and setting at once (see [`LoopOptions`]).
    pub fn loop_options(mut self, options: LoopOptions) -> Self {
        self.options = options;
        self
    }

    /// Model calls one attempt may make (default 15).
    pub fn max_iterations(mut self, limit: u32) -> Self {
        self.options.max_iterations = limit;
        self
    }

    /// Model calls the whole run may make.
    pub fn max_model_calls(mut self, limit: u32) -> Self {
        self.options.max_model_calls = Some(limit);
        self
    }

    /// Tool executions the whole run may make.
    pub fn max_tool_executions(mut self, limit: u32) -> Self {
        self.options.max_tool_executions = Some(limit);
        self
    }

    /// How long a run may take.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.options.timeout = Some(timeout);
        self
    }

    /// Tokens a run may consume.
    pub fn token_budget(mut self, tokens: u64) -> Self {
        self.options.token_budget = Some(tokens);
        self
    }

    /// Stop after this many tool calls in a row failed.
    pub fn max_consecutive_tool_failures(mut self, limit: u32) -> Self {
        self.options.max_consecutive_tool_failures = Some(limit);
        self
    }

    /// Stop the run when governance denies a tool call.
    pub fn stop_on_denied_tool(mut self) -> Self {
        self.options.stop_on_denied_tool = true;
        self
    }

    /// Stop the run when a tool call fails.
    pub fn stop_on_failed_tool(mut self) -> Self {
        self.options.stop_on_failed_tool = true;
        self
    }

    /// Run up to `limit` tool calls of one response at once; results stay in call order.
    pub fn parallel_tool_calls(mut self, limit: NonZeroUsize) -> Self {
        self.options.parallel_tool_calls = limit;
        self
    }

    /// Maximum output tokens per model call.
    pub fn max_tokens(mut self, tokens: u32) -> Self {
        self.options.max_tokens = Some(tokens);
        self
    }

    /// Sampling temperature.
    pub fn temperature(mut self, temperature: f32) -> Self {
        self.options.temperature = Some(temperature);
        self
    }

    /// Ask providers to enforce tool schemas strictly.
    pub fn strict_tools(mut self) -> Self {
        self.options.strict_tools = true;
        self
    }

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
    /// whose input schema is `T`'s.
    pub fn output<T: OutputType>(self) -> AgentBuilder<M, T, R>
    where
        O: OutputUnset,
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
}

/// Options of typed agents.
impl<M, O, R> AgentBuilder<M, O, R> {
    /// Sets the reflection handler: the output tool returns its rendering of
    /// the proposed output, the model may refine it, and an injected
    /// `submit` tool ends the iteration loop.
    pub fn reflection<T: 'static, S: Into<String>>(
        mut self,
        handler: impl Fn(&T) -> S + Send + Sync + 'static,
    ) -> AgentBuilder<M, O, Reflective>
    where
        O: Typed + OutputIs<T>,
        R: ReflectionUnset,
    {
        self.typed.reflection = O::reflection(Arc::new(handler));
        let typed = std::mem::take(&mut self.typed);
        self.with_state(typed)
    }

    /// Adds a validator run on every output that deserialised and met its
    /// schema; its error is fed back to the model.
    pub fn validator<T: 'static, E: fmt::Display>(
        mut self,
        validator: impl Fn(&T) -> Result<(), E> + Send + Sync + 'static,
    ) -> Self
    where
        O: Typed + OutputIs<T>,
    {
        self.typed.checks.extend(O::validator(Arc::new(validator)).map(Check::Sync));
        self
    }

    /// Adds an async validator (for checks against a database or a service).
    pub fn async_validator<T: 'static, E: fmt::Display, F: Future<Output = Result<(), E>> + Send + 'static>(
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

    /// Renames the output tool (default `final_output`).
    pub fn output_tool_name(mut self, name: impl Into<std::borrow::Cow<'static, str>>) -> Self
    where
        O: Typed,
    {
        self.typed.name = name.into();
        self
    }

    /// Sets the output tool's description.
    pub fn output_tool_description(mut self, description: impl Into<std::borrow::Cow<'static, str>>) -> Self
    where
        O: Typed,
    {
        self.typed.description = Some(description.into());
        self
    }
}

/// Options of text agents.
impl<M, O, R> AgentBuilder<M, O, R> {
    /// On the first text-only answer, asks the model once to verify that the
    /// task is complete; it may continue with tools or confirm.
    pub fn double_confirmation(self) -> AgentBuilder<M, TextConfigured, R>
    where
        O: TextMode,
    {
        self.double_confirmation_prompt(crate::run::DEFAULT_CONFIRMATION_PROMPT)
    }

    /// Double confirmation with your own prompt.
    pub fn double_confirmation_prompt(mut self, prompt: impl Into<String>) -> AgentBuilder<M, TextConfigured, R>
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
        check: impl Fn(&[ExecutedCall]) -> Option<String> + Send + Sync + 'static,
    ) -> AgentBuilder<M, TextConfigured, R>
    where
        O: TextMode,
    {
        self.text.terminal = Some(Arc::new(check));
        self.with_state(TypedSpec::default())
    }

    /// Called when the iteration limit is reached: grant more iterations,
    /// end with a signal (the run's output), or stop.
    pub fn on_iteration_limit(
        mut self,
        hook: impl Fn(&LimitReached) -> LimitDecision<String> + Send + Sync + 'static,
    ) -> AgentBuilder<M, TextConfigured, R>
    where
        O: TextMode,
    {
        self.text.on_limit = Some(Arc::new(hook));
        self.with_state(TypedSpec::default())
    }
}

impl<M, O, R> AgentBuilder<M, O, R> {
    /// Builds the agent. Fails only on what types cannot catch: two tools
    /// with one name (including the output tool and `submit`), an output
    /// type whose schema is not an object, or a zero limit.
    pub fn build(self) -> Result<Agent<O::Output, R>, BuildError>
    where
        M: HasModel,
        O: Buildable,
    {
        let typed: TypedSpec<O::Output> = self.typed.convert();
        if let Some(error) = self.tool_error {
            return Err(error);
        }
        if self.max_attempts == 0 {
            return Err(BuildError::Zero("max_attempts"));
        }
        if self.options.max_iterations == 0 {
            return Err(BuildError::Zero("max_iterations"));
        }
        let output_definition =
            O::Output::output_definition(typed.name.clone(), typed.description.clone()).transpose()?;
        let names = self.tools.names().chain(output_definition.as_ref().map(|definition| &*definition.name));
        if let Some(name) = names.into_iter().find(|name| !crate::tool::is_valid_tool_name(name)) {
            return Err(BuildError::InvalidToolName(name.to_owned()));
        }
        if let Some(definition) = &output_definition {
            let mut reserved = vec![&*definition.name];
            if typed.reflection.is_some() {
                reserved.push(SUBMIT_TOOL);
                if definition.name == SUBMIT_TOOL {
                    return Err(BuildError::DuplicateToolName(SUBMIT_TOOL.to_owned()));
                }
            }
            if let Some(name) = reserved.into_iter().find(|name| self.tools.get(name).is_some()) {
                return Err(BuildError::DuplicateToolName(name.to_owned()));
            }
        }
        let model = self.model.into_model();
        Ok(Agent {
            model,
            tools: self.tools,
            system: self.system,
            options: self.options,
            hooks: self.hooks,
            governance: self.governance,
            cancel: self.cancel,
            max_attempts: if output_definition.is_some() { self.max_attempts } else { 1 },
            text: self.text,
            typed,
            output_definition,
            submit_definition: SubmitTool::definition(),
            reflection: PhantomData,
        })
    }
}
