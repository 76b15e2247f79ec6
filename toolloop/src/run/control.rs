//! How a caller steers a loop: terminal checks and the iteration-limit hook.

use crate::message::{ToolCall, ToolResult};
use crate::tool::ToolOutput;

/// One tool call of a batch together with its result.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ExecutedCall {
    /// The call.
    pub call: ToolCall,
    /// Its result, as the model sees it.
    pub result: ToolResult,
    /// The tool's structured output, when it succeeded.
    pub output: Option<ToolOutput>,
}

/// The iteration limit of an attempt was reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LimitReached {
    /// The attempt (1-based).
    pub attempt: u32,
    /// Iterations made in this attempt.
    pub iterations: u32,
    /// The limit in force (including earlier extensions).
    pub limit: u32,
}

/// What the iteration-limit hook decides.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LimitDecision<S> {
    /// Stop with a max-iterations error (the default).
    Stop,
    /// Allow this many more iterations.
    Extend(u32),
    /// End the loop successfully with this signal.
    End(S),
}

/// The steering of one loop run, implemented by [`ToolLoop`](super::ToolLoop)
/// for its closures and by the agent for its output tools.
pub(crate) trait Control<S>: Send {
    /// Looks at an executed batch; a signal ends the loop.
    fn terminal(&mut self, batch: &[ExecutedCall]) -> Option<S>;

    /// Decides what happens at the iteration limit.
    fn on_limit(&mut self, reached: &LimitReached) -> LimitDecision<S>;

    /// Whether this batch must run one call at a time whatever the
    /// parallelism: when a call's outcome depends on the calls before it.
    fn sequential(&self, _calls: &[ToolCall]) -> bool {
        false
    }

    /// Whether `call` counts toward `max_tool_executions`; the framework's
    /// own tools (output, `submit`) do not.
    fn counts_as_execution(&self, _call: &ToolCall) -> bool {
        true
    }
}
