//! Hooks: callbacks that observe a run and can never break it.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::Serialize;

use super::governance::Verdict;
use super::panic::panic_message;
use super::termination::Termination;
use crate::conversation::Compaction;
use crate::message::{FailureKind, ToolCall, ToolResult};
use crate::model::{ModelRequest, ModelResponse};

/// Something that happened during a run, handed to hooks.
#[derive(Debug)]
#[non_exhaustive]
pub enum Event<'a> {
    /// An attempt starts (1-based).
    AttemptStart {
        /// The attempt.
        attempt: u32,
    },
    /// A model call is about to be made.
    ModelRequest {
        /// The attempt.
        attempt: u32,
        /// The iteration within the attempt (1-based).
        iteration: u32,
        /// What the model is sent.
        request: &'a ModelRequest<'a>,
    },
    /// A model call answered.
    ModelResponse {
        /// The attempt.
        attempt: u32,
        /// The iteration.
        iteration: u32,
        /// The answer.
        response: &'a ModelResponse,
    },
    /// The view the model is sent was compacted to fit the context window
    /// (see [`ContextPolicy`](super::ContextPolicy)); the call is made again.
    Compaction {
        /// The attempt.
        attempt: u32,
        /// The iteration.
        iteration: u32,
        /// What was compacted.
        compaction: &'a Compaction,
    },
    /// A tool call is about to run (before governance decides).
    ToolCall {
        /// The attempt.
        attempt: u32,
        /// The iteration.
        iteration: u32,
        /// The call.
        call: &'a ToolCall,
    },
    /// A tool call finished: with output, an error, or a denial.
    ToolResult {
        /// The attempt.
        attempt: u32,
        /// The iteration.
        iteration: u32,
        /// The call.
        call: &'a ToolCall,
        /// What the model will see.
        result: &'a ToolResult,
        /// How long the call took (zero when it did not run).
        elapsed: Duration,
    },
    /// A tool call was deferred: the run pauses with it pending (see
    /// [`DeferredCall`](super::DeferredCall)).
    ToolCallDeferred {
        /// The attempt.
        attempt: u32,
        /// The iteration.
        iteration: u32,
        /// The call and why it waits.
        deferred: &'a super::DeferredCall,
    },
    /// The audit record of a tool call, after it ran or was denied.
    Audit(&'a AuditRecord),
    /// An attempt's output failed validation; the errors are fed back.
    ValidationFailure {
        /// The attempt.
        attempt: u32,
        /// Every error found.
        errors: &'a [String],
    },
    /// The run ends.
    Stop {
        /// Why.
        reason: &'a Termination,
    },
}

impl Event<'_> {
    /// A short name of the event kind (`"tool_call"`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            Self::AttemptStart { .. } => "attempt_start",
            Self::ModelRequest { .. } => "model_request",
            Self::ModelResponse { .. } => "model_response",
            Self::Compaction { .. } => "compaction",
            Self::ToolCall { .. } => "tool_call",
            Self::ToolResult { .. } => "tool_result",
            Self::ToolCallDeferred { .. } => "tool_call_deferred",
            Self::Audit(_) => "audit",
            Self::ValidationFailure { .. } => "validation_failure",
            Self::Stop { .. } => "stop",
        }
    }
}

/// What is recorded about every tool call for audit: owned and serialisable,
/// so it can be shipped to an audit log as it is.
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

type Hook = dyn Fn(&Event<'_>) -> Option<String> + Send + Sync;

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

    /// Adds a hook that sees every event.
    pub fn on_event<R: HookOutcome>(&mut self, hook: impl Fn(&Event<'_>) -> R + Send + Sync + 'static) -> &mut Self {
        self.hooks.push(Arc::new(move |event| hook(event).into_error()));
        self
    }

    /// Calls every hook; their failures and panics are collected in `errors`.
    pub(crate) fn fire(&self, event: &Event<'_>, errors: &Mutex<Vec<HookError>>) {
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
    fn on<R: HookOutcome>(&mut self, pick: impl Fn(&Event<'_>) -> Option<R> + Send + Sync + 'static) -> &mut Self {
        self.hooks.push(Arc::new(move |event| pick(event).and_then(HookOutcome::into_error)));
        self
    }

    /// Adds a hook called when an attempt starts, with its number.
    pub fn on_attempt_start<R: HookOutcome>(&mut self, hook: impl Fn(u32) -> R + Send + Sync + 'static) -> &mut Self {
        self.on(move |event| match event {
            Event::AttemptStart { attempt } => Some(hook(*attempt)),
            _ => None,
        })
    }

    /// Adds a hook called before each model call.
    pub fn on_model_request<R: HookOutcome>(
        &mut self,
        hook: impl Fn(&ModelRequest<'_>) -> R + Send + Sync + 'static,
    ) -> &mut Self {
        self.on(move |event| match event {
            Event::ModelRequest { request, .. } => Some(hook(request)),
            _ => None,
        })
    }

    /// Adds a hook called after each model call that answered.
    pub fn on_model_response<R: HookOutcome>(
        &mut self,
        hook: impl Fn(&ModelResponse) -> R + Send + Sync + 'static,
    ) -> &mut Self {
        self.on(move |event| match event {
            Event::ModelResponse { response, .. } => Some(hook(response)),
            _ => None,
        })
    }

    /// Adds a hook called when the view sent to the model was compacted to
    /// fit the context window (see [`ContextPolicy`](super::ContextPolicy)).
    pub fn on_compaction<R: HookOutcome>(
        &mut self,
        hook: impl Fn(&Compaction) -> R + Send + Sync + 'static,
    ) -> &mut Self {
        self.on(move |event| match event {
            Event::Compaction { compaction, .. } => Some(hook(compaction)),
            _ => None,
        })
    }

    /// Adds a hook called before each tool call runs.
    pub fn on_tool_call<R: HookOutcome>(&mut self, hook: impl Fn(&ToolCall) -> R + Send + Sync + 'static) -> &mut Self {
        self.on(move |event| match event {
            Event::ToolCall { call, .. } => Some(hook(call)),
            _ => None,
        })
    }

    /// Adds a hook called after each tool call, also when it failed or was denied.
    pub fn on_tool_result<R: HookOutcome>(
        &mut self,
        hook: impl Fn(&ToolCall, &ToolResult) -> R + Send + Sync + 'static,
    ) -> &mut Self {
        self.on(move |event| match event {
            Event::ToolResult { call, result, .. } => Some(hook(call, result)),
            _ => None,
        })
    }

    /// Adds a hook receiving the audit record of every tool call.
    pub fn on_audit<R: HookOutcome>(&mut self, hook: impl Fn(&AuditRecord) -> R + Send + Sync + 'static) -> &mut Self {
        self.on(move |event| match event {
            Event::Audit(record) => Some(hook(record)),
            _ => None,
        })
    }

    /// Adds a hook called when an attempt's output fails validation.
    pub fn on_validation_failure<R: HookOutcome>(
        &mut self,
        hook: impl Fn(u32, &[String]) -> R + Send + Sync + 'static,
    ) -> &mut Self {
        self.on(move |event| match event {
            Event::ValidationFailure { attempt, errors } => Some(hook(*attempt, errors)),
            _ => None,
        })
    }

    /// Adds a hook called once when the run ends, however it ends.
    pub fn on_stop<R: HookOutcome>(&mut self, hook: impl Fn(&Termination) -> R + Send + Sync + 'static) -> &mut Self {
        self.on(move |event| match event {
            Event::Stop { reason } => Some(hook(reason)),
            _ => None,
        })
    }
}
