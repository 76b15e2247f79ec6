//! The caller-owned, append-only conversation.

mod call_ids;
mod compaction;
pub(crate) mod pending;
mod view;

use serde::{Deserialize, Serialize};

use crate::message::{ContentBlock, Message, Role, ToolResult};

pub(crate) use compaction::{Compaction, elide_results, old_range, omitted_note, replace_range};
pub use compaction::{CompactionReason, ELIDED_RESULT, estimate_tokens};
use pending::{DeferredCall, PendingBatch};
#[cfg(all(test, feature = "http"))]
pub(crate) use view::is_blank;
#[cfg(feature = "http")]
pub(crate) use view::needs_view;
pub(crate) use view::{RewriteScan, view_for, view_without_tools};

/// The raw history of a run, owned by the caller.
///
/// A conversation only grows: runs append to it and never rewrite what is
/// there. Pass the same conversation to several runs for an agent that keeps
/// its memory, or a fresh one per request for a stateless agent. It
/// serialises with serde, so a run can be saved and resumed later.
///
/// What a model is sent is a *view* of the conversation built for that
/// model's provider ([`Conversation::view_for`]); the raw history is never
/// changed to suit one provider.
///
/// Every tool call in it is answered, or explicitly *pending*: a run that
/// deferred calls (for approval, or for the caller to execute) leaves them
/// in [`deferred_calls`](Self::deferred_calls), and the conversation must be
/// resumed ([`Agent::resume`](crate::Agent::resume)) before a model sees it
/// again. The pending calls serialise with it.
//
// Invariant the HTTP providers' body cache relies on (see `Message::restamp`):
// every message taken in is restamped, no `&mut` to a held message is ever
// handed out, and messages are never removed, inserted or reordered. A method
// that must break this (say, a compaction that rewrites the history) restamps
// every message from the first one it changes to the end.
#[derive(Default, PartialEq, Serialize, Deserialize)]
#[serde(from = "Stored")]
pub struct Conversation {
    messages: Vec<Message>,
    /// The ids of the calls in `messages`, for renaming a repeated one.
    #[serde(skip)]
    call_ids: call_ids::CallIds,
    /// The batch of a paused run: the last message's calls, answered or deferred.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pending: Option<PendingBatch>,
}

impl std::fmt::Debug for Conversation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut debug = f.debug_struct("Conversation");
        debug.field("messages", &self.messages);
        if let Some(pending) = &self.pending {
            debug.field("deferred_calls", &pending.deferred);
        }
        debug.finish_non_exhaustive()
    }
}

/// A conversation as serialised; deserialising goes through [`Conversation::from`],
/// which stamps the messages.
#[derive(Deserialize)]
struct Stored {
    messages: Vec<Message>,
    #[serde(default)]
    pending: Option<PendingBatch>,
}

impl From<Stored> for Conversation {
    fn from(stored: Stored) -> Self {
        Self { pending: stored.pending, ..Self::from(stored.messages) }
    }
}

impl Clone for Conversation {
    fn clone(&self) -> Self {
        // Cloned messages carry no stamp: the clone stamps its own.
        Self { pending: self.pending.clone(), ..Self::from(self.messages.clone()) }
    }
}

impl Conversation {
    /// An empty conversation.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a message.
    pub fn push(&mut self, mut message: Message) {
        message.restamp();
        self.messages.push(message);
    }

    /// Replaces the result answering `result.call_id` in the last message,
    /// the batch just appended, with the verdict on it (an output validated
    /// after its batch). Nothing has been sent since, so no model saw the
    /// old result; the message gets a fresh stamp, so no cached rendering of
    /// it is reused. Returns whether such a result was there.
    pub(crate) fn settle_last_result(&mut self, result: ToolResult) -> bool {
        let Some(last) = self.messages.last_mut() else { return false };
        let Some(slot) = last.content.iter_mut().find_map(|block| match block {
            ContentBlock::ToolResult(existing) if existing.call_id == result.call_id => Some(existing),
            _ => None,
        }) else {
            return false;
        };
        *slot = result;
        last.restamp();
        true
    }

    /// Appends a user message holding `text`.
    pub fn push_user(&mut self, text: impl Into<String>) {
        self.push(Message::user(text));
    }

    /// Every message, oldest first.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// Iterates over the messages, oldest first.
    pub fn iter(&self) -> std::slice::Iter<'_, Message> {
        self.messages.iter()
    }

    /// The newest message.
    pub fn last(&self) -> Option<&Message> {
        self.messages.last()
    }

    /// How many messages there are.
    pub fn len(&self) -> usize {
        self.messages.len()
    }

    /// Whether there are no messages.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// The tool calls a paused run left waiting (for approval, or for the
    /// caller to execute), in call order; empty when none are. Resume the
    /// run with a [`Resolution`](crate::run::Resolution) for each (see
    /// [`Agent::resume`](crate::Agent::resume)).
    pub fn deferred_calls(&self) -> &[DeferredCall] {
        self.pending.as_ref().map_or(&[], |pending| &pending.deferred)
    }

    /// Whether a paused run left tool calls pending: such a conversation is
    /// resumed, not run.
    pub fn is_pending(&self) -> bool {
        self.pending.is_some()
    }

    pub(crate) fn pending(&self) -> Option<&PendingBatch> {
        self.pending.as_ref()
    }

    pub(crate) fn pending_mut(&mut self) -> Option<&mut PendingBatch> {
        self.pending.as_mut()
    }

    /// Marks the last message's calls as the paused batch.
    pub(crate) fn set_pending(&mut self, pending: Option<PendingBatch>) {
        self.pending = pending;
    }

    /// Ids of tool calls that have no result anywhere after them.
    ///
    /// Every run that ends leaves this empty; a paused run leaves the calls
    /// of its last message, which are [pending](Self::deferred_calls).
    /// Otherwise a non-empty answer means the history was built by hand or
    /// came from elsewhere and cannot be sent to a provider as it is.
    pub fn unanswered_tool_calls(&self) -> Vec<&str> {
        let mut pending: Vec<&str> = Vec::new();
        for message in &self.messages {
            for block in &message.content {
                match block {
                    ContentBlock::ToolCall(call) if message.role == Role::Assistant => pending.push(&call.id),
                    ContentBlock::ToolResult(result) => pending.retain(|id| *id != result.call_id),
                    _ => {}
                }
            }
        }
        pending
    }
}

impl From<Vec<Message>> for Conversation {
    fn from(mut messages: Vec<Message>) -> Self {
        messages.iter_mut().for_each(Message::restamp);
        Self { messages, call_ids: call_ids::CallIds::default(), pending: None }
    }
}

impl Extend<Message> for Conversation {
    fn extend<I: IntoIterator<Item = Message>>(&mut self, iter: I) {
        for message in iter {
            self.push(message);
        }
    }
}

impl<'a> IntoIterator for &'a Conversation {
    type Item = &'a Message;
    type IntoIter = std::slice::Iter<'a, Message>;

    fn into_iter(self) -> Self::IntoIter {
        self.messages.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::Conversation;
    use crate::message::Message;

    #[test]
    fn messages_get_a_fresh_stamp_on_the_way_in_and_copies_have_none() {
        let mut conversation = Conversation::new();
        let message = Message::user("a");
        assert_eq!(message.stamp(), None);
        conversation.push(message);
        conversation.extend([Message::assistant("b")]);
        conversation.push_user("c");
        let from_vec = Conversation::from(vec![Message::user("a")]);
        let clone = conversation.clone();
        let json = serde_json::to_string(&conversation).unwrap();
        let restored: Conversation = serde_json::from_str(&json).unwrap();

        let mut stamps: Vec<_> =
            [&conversation, &from_vec, &clone, &restored].iter().flat_map(|c| c.iter()).map(Message::stamp).collect();
        assert!(stamps.iter().all(Option::is_some), "every held message is stamped");
        let count = stamps.len();
        stamps.sort();
        stamps.dedup();
        assert_eq!(stamps.len(), count, "no stamp is given twice");

        // Stamps are not part of the value.
        assert_eq!(clone, conversation);
        assert_eq!(restored, conversation);
        assert_eq!(conversation.messages()[0], from_vec.messages()[0]);
        assert_eq!(
            json,
            r#"{"messages":[{"role":"user","content":[{"type":"text","text":"a"}]},{"role":"assistant","content":[{"type":"text","text":"b"}]},{"role":"user","content":[{"type":"text","text":"c"}]}]}"#
        );
        assert_eq!(format!("{:?}", conversation.messages()[0]), format!("{:?}", Message::user("a")));
        // A copy taken out is another message.
        assert_eq!(conversation.messages()[0].clone().stamp(), None);
        let copy: Message = serde_json::from_str(&serde_json::to_string(&conversation.messages()[0]).unwrap()).unwrap();
        assert_eq!(copy.stamp(), None);
    }
}
