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
/// window or the budget. Set `None` for no cap.
pub const DEFAULT_MAX_TOOL_RESULT_CHARS: usize = 100_000;

/// The prompt sent on the first text-only answer when double confirmation
/// is on.
pub const DEFAULT_CONFIRMATION_PROMPT: &str = "Before you finish: verify that the task is complete. If something is \
     missing, continue with the tools; otherwise reply with your final answer.";

/// Limits and settings of the iteration loop. Every limit is off (`None`)
/// by default except [`max_iterations`](Self::max_iterations).
///
/// One rule for every number here: a limit is positive and finite. Zero
/// (`0`, `Duration::ZERO`) is not "no limit" but a mistake, as are a
/// negative or non-finite temperature; [`AgentBuilder::build`](crate::AgentBuilder::build)
/// rejects them. Leave a setting at `None` for no limit.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
#[allow(clippy::struct_excessive_bools)] // independent switches, each off by default
pub struct LoopOptions {
    /// Model calls one attempt may make (default 15).
    pub max_iterations: u32,
    /// Model calls the whole run may make, over every attempt.
    pub max_model_calls: Option<u32>,
    /// Tool executions the whole run may make.
    pub max_tool_executions: Option<u32>,
    /// The longest tool result, in characters, that enters the conversation
    /// (default [`DEFAULT_MAX_TOOL_RESULT_CHARS`]); a longer one is cut and
    /// ends with a marker the model reads, saying how much was left out.
    pub max_tool_result_chars: Option<usize>,
    /// Tool calls one model response may have executed: the first ones run,
    /// the rest are answered with a [`FailureKind::TooManyCalls`](crate::FailureKind::TooManyCalls)
    /// error result saying why, and the run goes on. Off by default.
    pub max_tool_calls_per_iteration: Option<u32>,
    /// How long the whole run may take, from its start; past it the run
    /// ends with [`Termination::MaxDuration`](super::Termination::MaxDuration)
    /// (tools and HTTP requests have timeouts of their own).
    pub max_duration: Option<Duration>,
    /// Tokens (all kinds, see [`Usage::total`](crate::Usage::total)) the run may consume.
    pub token_budget: Option<u64>,
    /// Stop after this many tool calls in a row ended with an error result.
    pub max_consecutive_tool_failures: Option<u32>,
    /// Stop when a policy or an approver denies a tool call.
    pub stop_on_denied_tool: bool,
    /// Stop when a tool call fails (error, panic, timeout, bad arguments, unknown tool).
    pub stop_on_failed_tool: bool,
    /// How many tool calls of one response may run at once (1: one after the other).
    pub parallel_tool_calls: NonZeroUsize,
    /// Maximum output tokens per model call (the provider's default when `None`).
    pub max_tokens: Option<u32>,
    /// Sampling temperature (the provider's default when `None`).
    pub temperature: Option<f32>,
    /// Ask providers to enforce tool schemas strictly.
    pub strict_tools: bool,
    /// What to do when the history outgrows the context window (`None`:
    /// a [`ContextOverflow`](crate::ModelErrorKind::ContextOverflow) error
    /// ends the run).
    pub context: Option<ContextPolicy>,
    /// When a call of a response is deferred (for approval, or to the
    /// caller), hold back that response's calls that had not started yet
    /// too, so nothing after a deferred call runs before it is resolved;
    /// they run (governance first) when the run is resumed. Off by default:
    /// the calls governance lets through run at once, as they would
    /// without the deferral, and only the deferred ones wait — the model
    /// asked for them together, and a person then decides only what needs
    /// deciding. Calls already running (with
    /// [`parallel_tool_calls`](Self::parallel_tool_calls)) finish either way.
    pub hold_batch_on_deferral: bool,
}

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
    /// The first setting that breaks the rule above, with its value.
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
