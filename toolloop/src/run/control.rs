//! How a caller steers a loop: terminal checks, the iteration-limit hook,
//! and tools the caller answers itself.

use crate::message::{ToolCall, ToolResult};
use crate::tool::ToolExecution;

/// What the iteration-limit hook decides. The two ways to end are named
/// for the [`Termination`](super::Termination) they end the run with.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LimitDecision<S> {
    /// The run ends with [`Termination::MaxIterations`](super::Termination::MaxIterations)
    /// (the default).
    MaxIterations,
    /// Allow this many more iterations.
    Extend(u32),
    /// The loop ends successfully with this signal:
    /// [`Termination::Signal`](super::Termination::Signal).
    Signal(S),
}

impl<S> LimitDecision<S> {
    /// The same decision, with the signal (if any) converted by `f`.
    pub fn map<T>(self, f: impl FnOnce(S) -> T) -> LimitDecision<T> {
        match self {
            Self::MaxIterations => LimitDecision::MaxIterations,
            Self::Extend(more) => LimitDecision::Extend(more),
            Self::Signal(signal) => LimitDecision::Signal(f(signal)),
        }
    }
}

/// The steering of one loop run: implemented by [`ToolLoop`](super::ToolLoop)
/// for its closures, and by an agent for its output tool and `submit`.
///
/// A control may *own* tools: the loop offers their definitions like any
/// other (they are in the run's definitions), lets governance and hooks see
/// their calls like any other, but has the control answer them, one at a
/// time in call order, instead of the tool set. Such calls never count
/// toward `max_tool_executions`.
pub(crate) trait Control<S>: Send {
    /// Whether the control answers calls to tool `name` itself.
    fn owns(&self, _name: &str) -> bool {
        false
    }

    /// Answers a call to one of its own tools (see [`owns`](Self::owns)),
    /// after governance let it through. Calls of a batch arrive in call order.
    fn answer(&mut self, call: &ToolCall) -> ToolResult {
        let message = format!("`{}` is not a tool of this run", call.name);
        ToolResult::failure(&call.id, crate::message::FailureKind::UnknownTool, message)
    }

    /// Looks at an answer (text and no tool calls) before the loop ends
    /// with it: a reply makes the loop go on, with the reply as the user's
    /// next message (a typed agent with reflection that reads its output
    /// from the answer's text renders it this way).
    fn answered(&mut self, _text: &str, _stop_reason: &crate::stop_reason::StopReason) -> Option<String> {
        None
    }

    /// Whether the result [`answer`](Self::answer) just gave `call` is a
    /// placeholder that a verdict will replace once the batch is done (the
    /// agent's `submit`, or its output call without reflection): the loop
    /// then leaves its result event to whoever settles it, so the event
    /// carries what the model is told. Asked again when the batch is done:
    /// a call that no longer settles later (a later call of the batch took
    /// its place) is reported then, with its placeholder.
    fn settles_later(&self, _call: &ToolCall) -> bool {
        false
    }

    /// Looks at an executed batch; a signal ends the loop.
    fn terminal(&mut self, batch: &[ToolExecution]) -> Option<S>;

    /// Decides what happens when an attempt has made `limit` iterations,
    /// the iteration limit in force (earlier extensions included).
    fn on_limit(&mut self, limit: u32) -> LimitDecision<S>;
}
