//! Making a history fit a context window: what a request is shown of it
//! (the *view*), never the history itself unless the caller asks
//! ([`Conversation::compact`]).
//!
//! Every step works on whole *iterations* (an assistant turn and the user
//! turn of tool results after it), so the invariants providers enforce hold
//! in every view: each tool call keeps its result right after it, and
//! reasoning blocks are either kept with their message unchanged or dropped
//! with it, never edited.

use serde::Serialize;

use super::Conversation;
use crate::message::{ContentBlock, Message, Role};

/// What replaces the content of an old tool result in a compacted view.
pub const ELIDED_RESULT: &str = "[tool result elided to fit the context window]";

/// Why a view was compacted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CompactionReason {
    /// The provider said the prompt does not fit.
    Overflow,
    /// The estimated prompt passed the configured share of the window.
    Threshold,
}

/// How a compacted view differs from what it replaced: what a run reports
/// as [`Event::Compacted`](crate::run::Event::Compacted).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Compaction {
    /// Why it was compacted.
    pub(crate) reason: CompactionReason,
    /// Old tool results whose content was replaced with [`ELIDED_RESULT`].
    pub(crate) tool_results_elided: usize,
    /// Whole messages left out (old iterations).
    pub(crate) messages_dropped: usize,
    /// Whether the messages left out were replaced by a summary.
    pub(crate) summarised: bool,
    /// The estimated prompt tokens of the view before and after.
    pub(crate) estimated_tokens_before: u64,
    /// See [`estimated_tokens_before`](Self::estimated_tokens_before).
    pub(crate) estimated_tokens_after: u64,
}

/// A rough token count of `messages`: one token per four bytes of their
/// JSON, which over-counts prose a little, as an early trigger should.
pub fn estimate_tokens(messages: &[Message]) -> u64 {
    let bytes: usize = messages.iter().map(|message| serde_json::to_vec(message).map_or(0, |json| json.len())).sum();
    u64::try_from(bytes.div_ceil(4)).unwrap_or(u64::MAX)
}

/// The indices where iterations start: assistant messages after a user one.
fn iteration_starts(messages: &[Message]) -> Vec<usize> {
    (1..messages.len())
        .filter(|&index| messages[index].role == Role::Assistant && messages[index - 1].role == Role::User)
        .collect()
}

/// Where the old part of `messages` starts and ends: after the task (the
/// messages before the first assistant turn), before the last `keep`
/// iterations. `None` when there is nothing old.
pub(crate) fn old_range(messages: &[Message], keep: usize) -> Option<(usize, usize)> {
    let first = messages.iter().position(|message| message.role == Role::Assistant)?;
    let starts = iteration_starts(messages);
    let end = if keep == 0 { messages.len() } else { *starts.len().checked_sub(keep).and_then(|at| starts.get(at))? };
    // The old part must end where an assistant turn starts (or at the end
    // after a user turn): then no call in it has its result after it.
    if keep == 0 && messages.last().is_some_and(|message| message.role == Role::Assistant) {
        return None;
    }
    (first < end).then_some((first, end))
}

/// Replaces the content of the tool results in `messages[from..to]` with
/// [`ELIDED_RESULT`]; how many changed.
pub(crate) fn elide_results(messages: &mut [Message], from: usize, to: usize) -> usize {
    let mut elided = 0;
    for message in &mut messages[from..to] {
        for block in &mut message.content {
            if let ContentBlock::ToolResult(result) = block
                && result.content.len() > ELIDED_RESULT.len()
            {
                ELIDED_RESULT.clone_into(&mut result.content);
                elided += 1;
            }
        }
    }
    elided
}

/// `messages` with `messages[from..to]` replaced by one user message saying
/// `note` (merged by providers into the user turn before it).
pub(crate) fn replace_range(messages: &[Message], from: usize, to: usize, note: String) -> Vec<Message> {
    let mut kept = Vec::with_capacity(messages.len() - (to - from) + 1);
    kept.extend(messages[..from].iter().cloned());
    kept.push(Message::user(note));
    kept.extend(messages[to..].iter().cloned());
    kept
}

/// The note that stands for `dropped` messages left out without a summary.
pub(crate) fn omitted_note(dropped: usize) -> String {
    format!("[{dropped} earlier messages were omitted to fit the context window]")
}

impl Conversation {
    /// Removes every iteration but the last `keep_iterations` (and the task
    /// before the first assistant turn), replacing them with one short note,
    /// and returns what it removed, oldest first: the one way the history
    /// itself is rewritten (runs with a context policy only compact what
    /// each request is shown). Tool calls keep their results.
    ///
    /// ```
    /// use toolloop::{Conversation, Message};
    ///
    /// let mut conversation = Conversation::new();
    /// conversation.push_user("task");
    /// for turn in 0..5 {
    ///     conversation.push(Message::assistant(format!("step {turn}")));
    ///     conversation.push_user("go on");
    /// }
    /// let removed = conversation.compact(2);
    /// assert_eq!(removed.len(), 6);
    /// assert_eq!(conversation.len(), 1 + 1 + 4);
    /// ```
    pub fn compact(&mut self, keep_iterations: usize) -> Vec<Message> {
        let Some((from, to)) = old_range(&self.messages, keep_iterations) else { return Vec::new() };
        let removed: Vec<Message> = self.messages[from..to].to_vec();
        let kept = replace_range(&self.messages, from, to, omitted_note(removed.len()));
        // A paused run's pending batch stays: it answers the last message,
        // which is kept.
        let pending = self.pending.take();
        *self = Conversation::from(kept);
        self.pending = pending;
        removed
    }
}
