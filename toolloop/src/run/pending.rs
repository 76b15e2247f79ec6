//! The one path every batch, and so every stop, goes through: each tool
//! call gets a result before the batch enters the conversation.

use super::outcome::Stop;
use crate::conversation::Conversation;
use crate::message::{FailureKind, Message, ToolCall, ToolResult};

/// The synthetic result of a call that did not run because of `stop`.
pub(crate) fn not_executed(call: &ToolCall, stop: &Stop) -> ToolResult {
    ToolResult::failure(&call.id, FailureKind::NotExecuted, format!("not executed: the run stopped: {stop}"))
}

/// Appends an assistant message together with the results of its calls.
///
/// This is the one place a batch enters the conversation: calls that got no
/// real result (the run stopped first) get a synthetic
/// [`FailureKind::NotExecuted`] result, so the conversation never holds a
/// dangling tool call. Writing both messages at once also means a run future
/// dropped mid-batch leaves nothing half-written.
pub(crate) fn append_batch(
    conversation: &mut Conversation,
    assistant: Message,
    calls: &[ToolCall],
    results: Vec<Option<ToolResult>>,
    stop: Option<&Stop>,
) {
    conversation.push(assistant);
    append_results(conversation, calls, results, stop);
}

/// Appends the results of `calls` (the last message's), answering those
/// without one as not executed.
pub(crate) fn append_results(
    conversation: &mut Conversation,
    calls: &[ToolCall],
    results: Vec<Option<ToolResult>>,
    stop: Option<&Stop>,
) {
    let reason = || stop.map_or_else(|| "the run stopped".to_owned(), |stop| format!("the run stopped: {stop}"));
    let results: Vec<ToolResult> = calls
        .iter()
        .zip(results.into_iter().chain(std::iter::repeat(None)))
        .map(|(call, result)| {
            result.unwrap_or_else(|| {
                ToolResult::failure(&call.id, FailureKind::NotExecuted, format!("not executed: {}", reason()))
            })
        })
        .collect();
    conversation.push(Message::from_tool_results(results));
}

/// Gives up a paused run's batch: the calls still waiting are answered as
/// not executed (`why`), beside the answers the batch already had, so the
/// conversation holds no pending calls and can be run again. A conversation
/// that is not paused is left as it is.
pub(crate) fn abandon_pending(conversation: &mut Conversation, why: &str) {
    let Some(pending) = conversation.pending().cloned() else { return };
    conversation.set_pending(None);
    let calls: Vec<ToolCall> = conversation.last().map(|last| last.tool_calls().cloned().collect()).unwrap_or_default();
    let results = calls
        .iter()
        .map(|call| {
            let answered = pending.answered.iter().find(|result| result.call_id == call.id).cloned();
            Some(answered.unwrap_or_else(|| {
                ToolResult::failure(&call.id, FailureKind::NotExecuted, format!("not executed: {why}"))
            }))
        })
        .collect();
    append_results(conversation, &calls, results, None);
}
