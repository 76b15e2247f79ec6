//! The limits and settings of an iteration loop.

use std::num::NonZeroUsize;
use std::time::Duration;

use super::context::ContextPolicy;

/// How many iterations an attempt may take unless configured otherwise.
pub const DEFAULT_MAX_ITERATIONS: u32 = 15;

/// The default cap on a tool result's length: 100 000 characters, roughly
/// 25 000 tokens. A result this long is already more than a model uses
/// well, and without a cap one runaway result (a 10 MB file read, say)
/// would go into the history and every later request, exceeding the context
/// window or the budget. Set a larger cap with `max_tool_result_chars`.
pub const DEFAULT_MAX_TOOL_RESULT_CHARS: usize = 100_000;

/// The prompt sent on the first text-only answer when double confirmation
/// is on.
pub const DEFAULT_CONFIRMATION_PROMPT: &str = "Before you finish: verify that the task is complete. If something is \
     missing, continue with the tools; otherwise reply with your final answer.";

/// Limits and settings of the iteration loop, as the setters of
/// [`loop_settings!`] set them. Every limit is off (`None`) by default
/// except `max_iterations` and `max_tool_result_chars`.
#[derive(Clone, Debug, PartialEq)]
#[allow(clippy::struct_excessive_bools)] // independent switches, each off by default
pub(crate) struct LoopOptions {
    pub(crate) max_iterations: u32,
    pub(crate) max_model_calls: Option<u32>,
    pub(crate) max_tool_executions: Option<u32>,
    pub(crate) max_tool_result_chars: Option<usize>,
    pub(crate) max_tool_calls_per_iteration: Option<u32>,
    pub(crate) max_duration: Option<Duration>,
    pub(crate) token_budget: Option<u64>,
    pub(crate) max_consecutive_tool_failures: Option<u32>,
    pub(crate) stop_on_denied_tool: bool,
    pub(crate) stop_on_failed_tool: bool,
    pub(crate) parallel_tool_calls: NonZeroUsize,
    pub(crate) max_tokens: Option<u32>,
    pub(crate) temperature: Option<f32>,
    pub(crate) strict_tools: bool,
    pub(crate) context: Option<ContextPolicy>,
    pub(crate) hold_batch_on_deferral: bool,
}

/// The loop's settings, listed once: `$generate!` receives one line per
/// setting (its documentation, the setter's name and argument, and the
/// field it sets), and makes the setters of [`AgentBuilder`](crate::AgentBuilder)
/// and [`ToolLoop`](super::ToolLoop) ([`setters!`]) and the compile-error
/// stubs of a built [`Agent`](crate::Agent) (`agent/built.rs`) from it.
/// A setting added here exists on all three.
///
/// One rule for every number: a limit is positive and finite. Zero is not
/// "no limit" but a mistake, as is a negative or non-finite temperature;
/// [`AgentBuilder::build`](crate::AgentBuilder::build) rejects them
/// ([`LoopOptions::invalid_setting`]). Leave a setting unset for no limit.
macro_rules! loop_settings {
    ($generate:ident) => {
        $generate! {
            /// Model calls one attempt may make (default
            /// [`DEFAULT_MAX_ITERATIONS`](crate::run::DEFAULT_MAX_ITERATIONS), 15);
            /// past it the attempt ends with
            /// [`Termination::MaxIterations`](crate::run::Termination::MaxIterations).
            /// Zero is rejected by [`AgentBuilder::build`](crate::AgentBuilder::build).
            max_iterations(limit: u32) => max_iterations = limit;
            /// Model calls the whole run may make, over every attempt.
            max_model_calls(limit: u32) => max_model_calls = Some(limit);
            /// Tool executions the whole run may make.
            max_tool_executions(limit: u32) => max_tool_executions = Some(limit);
            /// The longest tool result, in characters, that enters the
            /// conversation (default
            /// [`DEFAULT_MAX_TOOL_RESULT_CHARS`](crate::run::DEFAULT_MAX_TOOL_RESULT_CHARS)):
            /// a longer one is cut and ends with a marker the model reads,
            /// saying how much was left out.
            max_tool_result_chars(limit: usize) => max_tool_result_chars = Some(limit);
            /// Tool calls one model response may have executed: the first
            /// ones run, the rest are answered with a
            /// [`FailureKind::TooManyCalls`](crate::FailureKind::TooManyCalls)
            /// error result saying why, and the run goes on. Off by default.
            max_tool_calls_per_iteration(limit: u32) => max_tool_calls_per_iteration = Some(limit);
            /// How long a run may take, from its start (the time a run
            /// waits paused with deferred calls does not count); past it
            /// the run ends with
            /// [`Termination::MaxDuration`](crate::run::Termination::MaxDuration).
            /// Tools and HTTP requests have timeouts of their own.
            max_duration(limit: ::std::time::Duration) => max_duration = Some(limit);
            /// What a run does when the history outgrows the model's context
            /// window: compact the view it sends and call again (see
            /// [`ContextPolicy`](crate::run::ContextPolicy)). Without one, a
            /// [`ContextOverflow`](crate::model::ModelErrorKind::ContextOverflow)
            /// error ends the run.
            context_policy(policy: $crate::run::ContextPolicy) => context = Some(policy);
            /// Tokens (all kinds, see [`Usage::total`](crate::Usage::total))
            /// the run may consume.
            token_budget(tokens: u64) => token_budget = Some(tokens);
            /// Stop after this many tool calls in a row ended with an error result.
            max_consecutive_tool_failures(limit: u32) => max_consecutive_tool_failures = Some(limit);
            /// Stop the run when a policy or an approver denies a tool call.
            stop_on_denied_tool() => stop_on_denied_tool = true;
            /// Stop the run when a tool call fails (error, panic, timeout,
            /// bad arguments, unknown tool).
            stop_on_failed_tool() => stop_on_failed_tool = true;
            /// Run up to `limit` tool calls of one response at once (default
            /// 1: one after the other); results stay in call order. A
            /// journal may take them one at a time regardless (see
            /// [`Journal::parallel_steps`](crate::run::journal::Journal::parallel_steps)):
            /// under `toolloop-restate`'s journal they run in turn.
            parallel_tool_calls(limit: ::std::num::NonZeroUsize) => parallel_tool_calls = limit;
            /// Maximum output tokens per model call (the provider's default
            /// when unset).
            max_tokens(tokens: u32) => max_tokens = Some(tokens);
            /// Sampling temperature (the provider's default when unset);
            /// negative or not finite is rejected by
            /// [`AgentBuilder::build`](crate::AgentBuilder::build).
            temperature(temperature: f32) => temperature = Some(temperature);
            /// Ask providers to enforce tool schemas strictly.
            strict_tools() => strict_tools = true;
            /// When a call of a response is deferred (for approval, or to
            /// the caller), hold back that response's calls that had not
            /// started yet too, so nothing after a deferred call runs
            /// before it is resolved; they run (governance first) when the
            /// run is resumed. Off by default: the calls governance lets
            /// through run at once, as they would without the deferral, and
            /// only the deferred ones wait — the model asked for them
            /// together, and a person then decides only what needs
            /// deciding. Calls already running (with
            /// [`parallel_tool_calls`](Self::parallel_tool_calls)) finish either way.
            hold_batch_on_deferral() => hold_batch_on_deferral = true;
        }
    };
}
pub(crate) use loop_settings;

/// The setters of [`loop_settings!`], for a type with an `options:
/// LoopOptions` field: `impl ... { loop_settings!(setters); }`.
macro_rules! setters {
    ($($(#[$doc:meta])* $name:ident($($arg:ident: $ty:ty)?) => $field:ident = $value:expr;)*) => {
        $(
            $(#[$doc])*
            pub fn $name(mut self, $($arg: $ty)?) -> Self {
                self.options.$field = $value;
                self
            }
        )*
    };
}
pub(crate) use setters;

impl Default for LoopOptions {
    fn default() -> Self {
        Self {
            max_iterations: DEFAULT_MAX_ITERATIONS,
            max_model_calls: None,
            max_tool_executions: None,
            max_tool_calls_per_iteration: None,
            max_tool_result_chars: Some(DEFAULT_MAX_TOOL_RESULT_CHARS),
            max_duration: None,
            token_budget: None,
            max_consecutive_tool_failures: None,
            stop_on_denied_tool: false,
            stop_on_failed_tool: false,
            parallel_tool_calls: NonZeroUsize::MIN,
            max_tokens: None,
            temperature: None,
            strict_tools: false,
            context: None,
            hold_batch_on_deferral: false,
        }
    }
}

impl LoopOptions {
    /// The first setting that breaks the rule of [`loop_settings!`]: zero,
    /// or a negative or non-finite temperature; with its value.
    pub(crate) fn invalid_setting(&self) -> Option<(&'static str, String)> {
        let zero = |name: &'static str, value: Option<u64>| (value == Some(0)).then(|| (name, "0".to_owned()));
        zero("max_iterations", Some(u64::from(self.max_iterations)))
            .or_else(|| zero("max_model_calls", self.max_model_calls.map(u64::from)))
            .or_else(|| zero("max_tool_executions", self.max_tool_executions.map(u64::from)))
            .or_else(|| zero("max_tool_calls_per_iteration", self.max_tool_calls_per_iteration.map(u64::from)))
            .or_else(|| zero("max_tool_result_chars", self.max_tool_result_chars.map(|n| n as u64)))
            .or_else(|| zero("token_budget", self.token_budget))
            .or_else(|| zero("max_consecutive_tool_failures", self.max_consecutive_tool_failures.map(u64::from)))
            .or_else(|| zero("max_tokens", self.max_tokens.map(u64::from)))
            .or_else(|| {
                (self.max_duration == Some(Duration::ZERO)).then(|| ("max_duration", format!("{:?}", Duration::ZERO)))
            })
            .or_else(|| {
                let temperature = self.temperature?;
                (!temperature.is_finite() || temperature < 0.0).then(|| ("temperature", temperature.to_string()))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_negative_and_non_finite_settings_are_named() {
        type Set = fn(&mut LoopOptions);
        assert_eq!(LoopOptions::default().invalid_setting(), None);
        let cases: [(Set, &str); 8] = [
            (|o| o.max_iterations = 0, "max_iterations"),
            (|o| o.max_model_calls = Some(0), "max_model_calls"),
            (|o| o.max_tool_executions = Some(0), "max_tool_executions"),
            (|o| o.token_budget = Some(0), "token_budget"),
            (|o| o.max_consecutive_tool_failures = Some(0), "max_consecutive_tool_failures"),
            (|o| o.max_tokens = Some(0), "max_tokens"),
            (|o| o.max_duration = Some(Duration::ZERO), "max_duration"),
            (|o| o.temperature = Some(f32::NAN), "temperature"),
        ];
        for (set, name) in cases {
            let mut options = LoopOptions::default();
            set(&mut options);
            assert_eq!(options.invalid_setting().map(|(setting, _)| setting), Some(name));
        }
        let mut options = LoopOptions { temperature: Some(-0.5), ..LoopOptions::default() };
        assert_eq!(options.invalid_setting(), Some(("temperature", "-0.5".to_owned())));
        options.temperature = Some(0.0);
        options.max_tool_executions = Some(1);
        assert_eq!(options.invalid_setting(), None);
    }
}
