//! The limits and settings of an iteration loop.

use std::num::NonZeroUsize;
use std::time::Duration;

/// How many iterations an attempt may take unless configured otherwise.
pub const DEFAULT_MAX_ITERATIONS: u32 = 15;

/// The prompt sent on the first text-only answer when double confirmation
/// is on.
pub const DEFAULT_CONFIRMATION_PROMPT: &str = "Before you finish: verify that the task is complete. If something is \
     missing, continue with the tools; otherwise reply with your final answer.";

/// Limits and settings of the iteration loop. Every limit is off (`None`)
/// by default except [`max_iterations`](Self::max_iterations).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct LoopOptions {
    /// Model calls one attempt may make (default 15).
    pub max_iterations: u32,
    /// Model calls the whole run may make, over every attempt.
    pub max_model_calls: Option<u32>,
    /// Tool executions the whole run may make.
    pub max_tool_executions: Option<u32>,
    /// How long the whole run may take, from its start (a time limit for
    /// the run; tools and HTTP requests have timeouts of their own).
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
}

impl Default for LoopOptions {
    fn default() -> Self {
        Self {
            max_iterations: DEFAULT_MAX_ITERATIONS,
            max_model_calls: None,
            max_tool_executions: None,
            max_duration: None,
            token_budget: None,
            max_consecutive_tool_failures: None,
            stop_on_denied_tool: false,
            stop_on_failed_tool: false,
            parallel_tool_calls: NonZeroUsize::MIN,
            max_tokens: None,
            temperature: None,
            strict_tools: false,
        }
    }
}
