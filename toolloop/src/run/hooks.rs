//! Hooks: callbacks that observe a run and can never break it.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, PoisonError};

use super::event::Event;
use super::panic::panic_message;

/// How a failed hook or callback is reported in
/// [`RunMetadata::hook_errors`](super::RunMetadata::hook_errors): the event
/// it was called for (see [`Event::name`]) and its error or panic message.
pub(crate) fn hook_error(event: &str, message: &str) -> String {
    format!("hook for `{event}` failed: {message}")
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

/// The hooks of a run, as the builders' `on_*` setters add them. Cheap to
/// clone.
#[derive(Clone, Default)]
pub(crate) struct Hooks {
    hooks: Vec<Arc<Hook>>,
}

impl fmt::Debug for Hooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hooks").field("count", &self.hooks.len()).finish()
    }
}

impl Hooks {
    /// No hooks.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Calls every hook; their failures and panics are collected in `errors`.
    pub(crate) fn fire(&self, event: &Event, errors: &Mutex<Vec<String>>) {
        for hook in &self.hooks {
            let message = match catch_unwind(AssertUnwindSafe(|| hook(event))) {
                Ok(None) => continue,
                Ok(Some(message)) => message,
                Err(panic) => format!("panicked: {}", panic_message(&*panic)),
            };
            tracing::warn!(event = event.name(), %message, "hook failed");
            errors.lock().unwrap_or_else(PoisonError::into_inner).push(hook_error(event.name(), &message));
        }
    }

    /// Whether no hook is set.
    pub(crate) fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }
}

impl Hooks {
    fn on<H: HookOutcome>(&mut self, pick: impl Fn(&Event) -> Option<H> + Send + Sync + 'static) -> &mut Self {
        self.hooks.push(Arc::new(move |event| pick(event).and_then(HookOutcome::into_error)));
        self
    }

    // `on_event` and the typed hooks, each named for the event it filters
    // (the one list is `event_hooks!` below).
    event_hooks!(hook_methods);
}

/// The hooks, listed once: `$generate!` receives one line per hook (its
/// documentation, its name, the arguments the hook is called with, and the
/// pattern of the [`Event`] it filters with the values it passes), and
/// makes the methods of [`Hooks`] ([`hook_methods!`]), the setters of
/// [`AgentBuilder`](crate::AgentBuilder) and [`ToolLoop`](super::ToolLoop)
/// ([`hook_setters!`]) and the compile-error stubs of a built
/// [`Agent`](crate::Agent) (`agent/built.rs`) from it. A hook added here
/// exists on all four.
///
/// A hook is named for its event: `on_` and the event's name in snake case.
macro_rules! event_hooks {
    ($generate:ident) => {
        $generate! {
            /// Adds a hook that sees every [`Event`](crate::run::Event) of a
            /// run, in order.
            on_event(&$crate::run::Event) = event => (event);
            /// Adds a hook called when an attempt starts, with its number
            /// ([`Event::AttemptStarted`](crate::run::Event::AttemptStarted)).
            on_attempt_started(u32) = $crate::run::Event::AttemptStarted { attempt } => (*attempt);
            /// Adds a hook called after each model call that answered, with
            /// its response
            /// ([`Event::IterationFinished`](crate::run::Event::IterationFinished)).
            on_iteration_finished(&$crate::model::ModelResponse) =
                $crate::run::Event::IterationFinished { response, .. } => (response);
            /// Adds a hook called when the view sent to the model was
            /// compacted to fit the context window (see
            /// [`ContextPolicy`](crate::run::ContextPolicy)), with why and
            /// the estimated prompt tokens before and after. What it left
            /// out is in the event ([`Event::Compacted`](crate::run::Event::Compacted)),
            /// which [`on_event`](Self::on_event) sees.
            on_compacted($crate::run::CompactionReason, u64, u64) =
                $crate::run::Event::Compacted { reason, estimated_tokens_before, estimated_tokens_after, .. } =>
                    (*reason, *estimated_tokens_before, *estimated_tokens_after);
            /// Adds a hook called when a tool call starts running, after
            /// governance allowed it
            /// ([`Event::ToolExecutionStarted`](crate::run::Event::ToolExecutionStarted)):
            /// a denied or deferred call never gets here. Every tool call
            /// counts: helpers, an agent's output tool, `submit`.
            on_tool_execution_started(&$crate::message::ToolCall) =
                $crate::run::Event::ToolExecutionStarted { call, .. } => (call);
            /// Adds a hook called when each tool call has its result, also
            /// when it failed, was denied or was not executed
            /// ([`Event::ToolExecutionFinished`](crate::run::Event::ToolExecutionFinished)).
            /// The result is what the model is told. For an audit log, keep
            /// the whole event: [`on_event`](Self::on_event) sees it with its
            /// verdict and time, and it serialises as the call's audit record
            /// ([the serialised form](crate::run::Event#the-serialised-form)).
            on_tool_execution_finished(&$crate::message::ToolCall, &$crate::message::ToolResult) =
                $crate::run::Event::ToolExecutionFinished { call, result, .. } => (call, result);
            /// Adds a hook called when an attempt's output fails validation
            /// (or is missing), with the attempt and every error
            /// ([`Event::ValidationFailed`](crate::run::Event::ValidationFailed)).
            on_validation_failed(u32, &[String]) =
                $crate::run::Event::ValidationFailed { attempt, errors } => (*attempt, errors);
            /// Adds a hook called once when a run ends, however it ends, with
            /// how it ended
            /// ([`Event::RunFinished`](crate::run::Event::RunFinished)).
            on_run_finished(&$crate::run::Termination) =
                $crate::run::Event::RunFinished { termination } => (termination);
        }
    };
}
pub(crate) use event_hooks;

/// The methods of [`Hooks`] from [`event_hooks!`]: each adds a hook called
/// with the values of the events its pattern matches.
macro_rules! hook_methods {
    ($($(#[$doc:meta])* $name:ident($($arg:ty),*) = $pattern:pat => ($($value:expr),*);)*) => {
        $(
            $(#[$doc])*
            pub(crate) fn $name<H: HookOutcome>(
                &mut self,
                hook: impl Fn($($arg),*) -> H + Send + Sync + 'static,
            ) -> &mut Self {
                #[allow(unreachable_patterns)] // `on_event`'s pattern matches every event
                self.on(move |event| match event {
                    $pattern => Some(hook($($value),*)),
                    _ => None,
                })
            }
        )*
    };
}
use hook_methods;

/// The hook setters of [`event_hooks!`], for a builder with a `hooks:
/// Hooks` field: `impl ... { event_hooks!(hook_setters); }`. Each adds its
/// hook after the ones already set, as [`Hooks`]' method of the same name.
macro_rules! hook_setters {
    ($($(#[$doc:meta])* $name:ident($($arg:ty),*) = $pattern:pat => ($($value:expr),*);)*) => {
        $(
            $(#[$doc])*
            pub fn $name<H: $crate::run::HookOutcome>(
                mut self,
                hook: impl Fn($($arg),*) -> H + Send + Sync + 'static,
            ) -> Self {
                self.hooks.$name(hook);
                self
            }
        )*
    };
}
pub(crate) use hook_setters;

#[cfg(test)]
mod tests {
    /// Each hook of [`event_hooks!`]: its name and the event its pattern filters.
    macro_rules! named {
        ($($(#[$doc:meta])* $name:ident($($arg:ty),*) = $pattern:pat => ($($value:expr),*);)*) => {
            [$((stringify!($name), stringify!($pattern))),*]
        };
    }

    /// `AttemptStarted` → `attempt_started`.
    fn snake_case(variant: &str) -> String {
        let mut name = String::new();
        for c in variant.chars() {
            if c.is_uppercase() && !name.is_empty() {
                name.push('_');
            }
            name.push(c.to_ascii_lowercase());
        }
        name
    }

    /// One word per concept: a typed hook is `on_` and the name of the
    /// event it filters (`on_event` sees them all).
    #[test]
    fn every_hook_is_named_for_the_event_it_filters() {
        let hooks = event_hooks!(named);
        assert_eq!(hooks[0], ("on_event", "event"));
        for (name, pattern) in &hooks[1..] {
            let pattern = pattern.replace(' ', "");
            let variant: String = pattern
                .split("Event::")
                .nth(1)
                .unwrap_or_else(|| panic!("`{name}` filters no event: {pattern}"))
                .chars()
                .take_while(char::is_ascii_alphanumeric)
                .collect();
            assert_eq!(*name, format!("on_{}", snake_case(&variant)), "the hook for `Event::{variant}`");
        }
        let mut names: Vec<_> = hooks.iter().map(|(name, _)| *name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), hooks.len(), "one hook per name");
    }
}
