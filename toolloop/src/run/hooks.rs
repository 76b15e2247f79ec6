//! Hooks: callbacks that observe a run and can never break it.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;

use super::event::Event;
use super::governance::Verdict;
use super::panic::panic_message;
use super::termination::Termination;
use crate::conversation::Compaction;
use crate::message::{FailureKind, ToolCall, ToolResult};
use crate::model::ModelResponse;

/// What is recorded about every tool call for audit: the serialisable form
/// of an [`Event::ToolExecutionFinished`], so it can be shipped to an audit
/// log as it is (see [`Hooks::on_audit`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct AuditRecord {
    /// The call's id.
    pub call_id: String,
    /// The tool's name.
    pub tool: String,
    /// The arguments.
    pub input: serde_json::Value,
    /// What governance decided.
    pub verdict: Verdict,
    /// Why the call failed; `None` when it succeeded.
    pub failure: Option<FailureKind>,
    /// How long it ran, in milliseconds.
    pub elapsed_ms: u64,
}

impl AuditRecord {
    /// The record of `event`, when it is a [`Event::ToolExecutionFinished`].
    pub fn of(event: &Event) -> Option<Self> {
        let Event::ToolExecutionFinished { call, result, verdict, elapsed, .. } = event else { return None };
        Some(Self {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            input: call.input.clone(),
            verdict: verdict.clone(),
            failure: result.failure,
            elapsed_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
        })
    }
}

/// A hook that failed; collected in the run's metadata.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HookError {
    /// The event the hook was called for (see [`Event::name`]).
    pub event: &'static str,
    /// The hook's error, or its panic message.
    pub message: String,
}

impl fmt::Display for HookError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "hook for `{}` failed: {}", self.event, self.message)
    }
}

/// What a hook may return: `()` or `Result<(), E: Display>`.
#[diagnostic::on_unimplemented(
    message = "a hook must return `()` or `Result<(), E>` with `E: Display`, not `{Self}`",
    label = "this hook returns `{Self}`"
)]
// Hidden from the docs only (`cfg(doc)`): a bound of the hook setters, not written by users.
#[cfg_attr(doc, doc(hidden))]
pub trait HookOutcome {
    /// The error message, if the hook failed.
    fn into_error(self) -> Option<String>;
}

impl HookOutcome for () {
    fn into_error(self) -> Option<String> {
        None
    }
}

impl<E: fmt::Display> HookOutcome for Result<(), E> {
    fn into_error(self) -> Option<String> {
        self.err().map(|error| error.to_string())
    }
}

type Hook = dyn Fn(&Event) -> Option<String> + Send + Sync;

/// The hooks of a run. Cheap to clone.
#[derive(Clone, Default)]
pub struct Hooks {
    hooks: Vec<Arc<Hook>>,
}

impl fmt::Debug for Hooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hooks").field("count", &self.hooks.len()).finish()
    }
}

impl Hooks {
    /// No hooks.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a hook that sees every [`Event`] of the run, in order.
    pub fn on_event<R: HookOutcome>(&mut self, hook: impl Fn(&Event) -> R + Send + Sync + 'static) -> &mut Self {
        self.hooks.push(Arc::new(move |event| hook(event).into_error()));
        self
    }

    /// Calls every hook; their failures and panics are collected in `errors`.
    pub(crate) fn fire(&self, event: &Event, errors: &Mutex<Vec<HookError>>) {
        for hook in &self.hooks {
            let message = match catch_unwind(AssertUnwindSafe(|| hook(event))) {
                Ok(None) => continue,
                Ok(Some(message)) => message,
                Err(panic) => format!("panicked: {}", panic_message(&*panic)),
            };
            tracing::warn!(event = event.name(), %message, "hook failed");
            errors.lock().unwrap_or_else(PoisonError::into_inner).push(HookError { event: event.name(), message });
        }
    }

    /// Adds every hook of `other` after these.
    pub(crate) fn extend(&mut self, other: Hooks) {
        self.hooks.extend(other.hooks);
    }

    /// Whether no hook is set.
    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }
}

impl Hooks {
    fn on<R: HookOutcome>(&mut self, pick: impl Fn(&Event) -> Option<R> + Send + Sync + 'static) -> &mut Self {
        self.hooks.push(Arc::new(move |event| pick(event).and_then(HookOutcome::into_error)));
        self
    }

    /// Adds a hook called when an attempt starts, with its number
    /// ([`Event::AttemptStarted`]).
    pub fn on_attempt_start<R: HookOutcome>(&mut self, hook: impl Fn(u32) -> R + Send + Sync + 'static) -> &mut Self {
        self.on(move |event| match event {
            Event::AttemptStarted { attempt } => Some(hook(*attempt)),
            _ => None,
        })
    }

    /// Adds a hook called after each model call that answered
    /// ([`Event::IterationFinished`]).
    pub fn on_model_response<R: HookOutcome>(
        &mut self,
        hook: impl Fn(&ModelResponse) -> R + Send + Sync + 'static,
    ) -> &mut Self {
        self.on(move |event| match event {
            Event::IterationFinished { response, .. } => Some(hook(response)),
            _ => None,
        })
    }

    /// Adds a hook called when the view sent to the model was compacted to
    /// fit the context window (see [`ContextPolicy`](super::ContextPolicy),
    /// [`Event::Compacted`]).
    pub fn on_compaction<R: HookOutcome>(
        &mut self,
        hook: impl Fn(&Compaction) -> R + Send + Sync + 'static,
    ) -> &mut Self {
        self.on(move |event| match event {
            Event::Compacted { compaction, .. } => Some(hook(compaction)),
            _ => None,
        })
    }

    /// Adds a hook called when a tool call starts running, after governance
    /// allowed it ([`Event::ToolExecutionStarted`]): a denied or deferred
    /// call never gets here.
    pub fn on_tool_call<R: HookOutcome>(&mut self, hook: impl Fn(&ToolCall) -> R + Send + Sync + 'static) -> &mut Self {
        self.on(move |event| match event {
            Event::ToolExecutionStarted { call, .. } => Some(hook(call)),
            _ => None,
        })
    }

    /// Adds a hook called when each tool call has its result, also when it
    /// failed, was denied or was not executed ([`Event::ToolExecutionFinished`]).
    pub fn on_tool_result<R: HookOutcome>(
        &mut self,
        hook: impl Fn(&ToolCall, &ToolResult) -> R + Send + Sync + 'static,
    ) -> &mut Self {
        self.on(move |event| match event {
            Event::ToolExecutionFinished { call, result, .. } => Some(hook(call, result)),
            _ => None,
        })
    }

    /// Adds a hook receiving the audit record of every tool call: each
    /// [`Event::ToolExecutionFinished`], as an [`AuditRecord`].
    pub fn on_audit<R: HookOutcome>(&mut self, hook: impl Fn(&AuditRecord) -> R + Send + Sync + 'static) -> &mut Self {
        self.on(move |event| AuditRecord::of(event).map(|record| hook(&record)))
    }

    /// Adds a hook called when an attempt's output fails validation
    /// ([`Event::ValidationFailed`]).
    pub fn on_validation_failure<R: HookOutcome>(
        &mut self,
        hook: impl Fn(u32, &[String]) -> R + Send + Sync + 'static,
    ) -> &mut Self {
        self.on(move |event| match event {
            Event::ValidationFailed { attempt, errors } => Some(hook(*attempt, errors)),
            _ => None,
        })
    }

    /// Adds a hook called once when the run ends, however it ends
    /// ([`Event::RunFinished`]).
    pub fn on_stop<R: HookOutcome>(&mut self, hook: impl Fn(&Termination) -> R + Send + Sync + 'static) -> &mut Self {
        self.on(move |event| match event {
            Event::RunFinished { termination } => Some(hook(termination)),
            _ => None,
        })
    }
}
