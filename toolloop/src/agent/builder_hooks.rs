//! The hook setters of [`AgentBuilder`]: observe a run without being able to break it.

use super::builder::AgentBuilder;
use crate::run::{AuditRecord, Event, HookOutcome, Hooks, Termination};
use crate::{ModelResponse, ToolCall, ToolResult};

impl<M, O, R, K> AgentBuilder<M, O, R, K> {
    /// Adds every hook of `hooks`, after the ones already set (a set of
    /// hooks shared between agents, say).
    pub fn hooks(mut self, hooks: Hooks) -> Self {
        self.hooks.extend(hooks);
        self
    }

    /// Adds a hook that sees every [`Event`] of a run, in order.
    pub fn on_event<H: HookOutcome>(mut self, hook: impl Fn(&Event) -> H + Send + Sync + 'static) -> Self {
        self.hooks.on_event(hook);
        self
    }

    /// Adds a hook called when an attempt starts.
    pub fn on_attempt_start<H: HookOutcome>(mut self, hook: impl Fn(u32) -> H + Send + Sync + 'static) -> Self {
        self.hooks.on_attempt_start(hook);
        self
    }

    /// Adds a hook called after each model call that answered.
    pub fn on_model_response<H: HookOutcome>(
        mut self,
        hook: impl Fn(&ModelResponse) -> H + Send + Sync + 'static,
    ) -> Self {
        self.hooks.on_model_response(hook);
        self
    }

    /// Adds a hook called when a tool call starts running, after governance
    /// allowed it (helpers, the output tool, `submit`).
    pub fn on_tool_call<H: HookOutcome>(mut self, hook: impl Fn(&ToolCall) -> H + Send + Sync + 'static) -> Self {
        self.hooks.on_tool_call(hook);
        self
    }

    /// Adds a hook called when each tool call has its result, also when it
    /// failed, was denied or was not executed.
    pub fn on_tool_result<H: HookOutcome>(
        mut self,
        hook: impl Fn(&ToolCall, &ToolResult) -> H + Send + Sync + 'static,
    ) -> Self {
        self.hooks.on_tool_result(hook);
        self
    }

    /// Adds a hook receiving the audit record of every tool call.
    pub fn on_audit<H: HookOutcome>(mut self, hook: impl Fn(&AuditRecord) -> H + Send + Sync + 'static) -> Self {
        self.hooks.on_audit(hook);
        self
    }

    /// Adds a hook called when an attempt's output fails validation.
    pub fn on_validation_failure<H: HookOutcome>(
        mut self,
        hook: impl Fn(u32, &[String]) -> H + Send + Sync + 'static,
    ) -> Self {
        self.hooks.on_validation_failure(hook);
        self
    }

    /// Adds a hook called once when a run ends, however it ends.
    pub fn on_stop<H: HookOutcome>(mut self, hook: impl Fn(&Termination) -> H + Send + Sync + 'static) -> Self {
        self.hooks.on_stop(hook);
        self
    }
}
