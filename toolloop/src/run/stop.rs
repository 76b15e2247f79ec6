//! Why a loop stopped early, and the one path every stop goes through.

use std::fmt;

use serde::Serialize;

use super::TerminationReason;
use crate::conversation::Conversation;
use crate::message::{FailureKind, Message, ToolCall, ToolResult};
use crate::model::ModelError;

/// What a run was doing when it was cancelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Phase {
    /// Calling the model, or about to.
    ModelCall,
    /// Running tools (or waiting for an approver).
    ToolExecution,
    /// Validating an output.
    Validation,
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::ModelCall => "the model call",
            Self::ToolExecution => "tool execution",
            Self::Validation => "validation",
        })
    }
}

/// Why an iteration loop stopped before it ended normally.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Stop {
    /// The attempt used every iteration it was allowed.
    #[error("reached the limit of {limit} iterations")]
    MaxIterations {
        /// Iterations made.
        iterations: u32,
        /// The limit.
        limit: u32,
    },
    /// The run made as many model calls as it may.
    #[error("reached the limit of {limit} model calls")]
    MaxModelCalls {
        /// The limit.
        limit: u32,
    },
    /// The run executed as many tools as it may.
    #[error("reached the limit of {limit} tool executions")]
    MaxToolExecutions {
        /// The limit.
        limit: u32,
    },
    /// The run consumed its token budget.
    #[error("used {used} tokens of a budget of {limit}")]
    TokenBudget {
        /// Tokens used.
        used: u64,
        /// The budget.
        limit: u64,
    },
    /// Too many tool calls failed in a row.
    #[error("{count} tool calls failed in a row")]
    ConsecutiveToolFailures {
        /// How many.
        count: u32,
    },
    /// The run's deadline passed.
    #[error("the deadline passed")]
    Deadline,
    /// A tool call was denied or failed, and the stop policy ends the run.
    #[error("tool `{tool}` ended with `{kind}` and the stop policy ends the run")]
    ToolPolicy {
        /// The tool.
        tool: String,
        /// How its call ended.
        kind: FailureKind,
    },
    /// The run was cancelled through its token.
    #[error("cancelled during {phase}")]
    Cancelled {
        /// What it was doing.
        phase: Phase,
    },
    /// The model call failed.
    #[error(transparent)]
    Model(ModelError),
}

impl Stop {
    /// The termination reason this stop is reported as.
    pub fn termination(&self) -> TerminationReason {
        match self {
            Self::MaxIterations { .. } => TerminationReason::MaxIterations,
            Self::MaxModelCalls { .. } => TerminationReason::MaxModelCalls,
            Self::MaxToolExecutions { .. } => TerminationReason::MaxToolExecutions,
            Self::TokenBudget { .. } => TerminationReason::TokenBudget,
            Self::ConsecutiveToolFailures { .. } => TerminationReason::ConsecutiveToolFailures,
            Self::Deadline => TerminationReason::Deadline,
            Self::ToolPolicy { .. } => TerminationReason::ToolPolicy,
            Self::Cancelled { .. } => TerminationReason::Cancelled,
            Self::Model(_) => TerminationReason::ModelError,
        }
    }
}

/// Appends an assistant message together with the results of its calls.
///
/// This is the one place a batch enters the conversation: calls that got no
/// real result (the run stopped first) get a synthetic
/// [`FailureKind::NotExecuted`] result, so the conversation never holds a
/// dangling tool call. Writing both messages at once also means a run future
/// dropped mid-batch leaves nothing half-written.
/// The synthetic result of a call that did not run because of `stop`.
pub(crate) fn not_executed(call: &ToolCall, stop: &Stop) -> ToolResult {
    ToolResult::failure(&call.id, FailureKind::NotExecuted, format!("not executed: the run stopped: {stop}"))
}

pub(crate) fn append_batch(
    conversation: &mut Conversation,
    assistant: Message,
    calls: &[ToolCall],
    results: Vec<Option<ToolResult>>,
    stop: Option<&Stop>,
) -> Vec<ToolResult> {
    let reason = stop.map_or_else(|| "the run stopped".to_owned(), |stop| format!("the run stopped: {stop}"));
    let results: Vec<ToolResult> = calls
        .iter()
        .zip(results.into_iter().chain(std::iter::repeat(None)))
        .map(|(call, result)| {
            result.unwrap_or_else(|| {
                ToolResult::failure(&call.id, FailureKind::NotExecuted, format!("not executed: {reason}"))
            })
        })
        .collect();
    conversation.push(assistant);
    conversation.push(Message::from_tool_results(results.iter().cloned()));
    results
}
