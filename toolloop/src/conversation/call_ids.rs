//! Tool call ids made unique before a response enters the conversation.
//!
//! Results are paired with calls by id, and APIs reject a request whose
//! ids repeat (Anthropic wants every `tool_use` id unique) or are empty. A
//! model (or a compatible server) that sends two calls with the same id, an
//! id used earlier in the conversation, or none at all would make every later
//! request invalid; renaming the call before anything answers it keeps each
//! result paired with its own call.

use std::collections::HashSet;
use std::num::NonZeroU64;

use super::Conversation;
use crate::message::{ContentBlock, Message};

/// The tool call ids of a conversation's messages, extended as messages are
/// appended, so that checking a new message's ids costs the same however
/// long the conversation is. Valid while the message at its end still bears
/// the stamp it had (a held message that changes is restamped, see
/// [`Conversation`]); rebuilt otherwise.
#[derive(Clone, Default)]
pub(crate) struct CallIds {
    /// How many messages `ids` covers.
    covered: usize,
    /// The stamp of message `covered - 1`.
    last: Option<NonZeroU64>,
    ids: HashSet<String>,
}

impl CallIds {
    /// Brings the ids up to date with `messages`.
    fn update(&mut self, messages: &[Message]) {
        let current = self.covered == 0
            || (self.last.is_some() && messages.get(self.covered - 1).and_then(Message::stamp) == self.last);
        if !current {
            *self = Self::default();
        }
        for message in &messages[self.covered..] {
            self.ids.extend(message.tool_calls().map(|call| call.id.clone()));
        }
        self.covered = messages.len();
        self.last = messages.last().and_then(Message::stamp);
    }
}

/// Not part of a conversation's value: derived from its messages.
impl PartialEq for CallIds {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Conversation {
    /// Renames the tool calls of `message` (about to be appended) whose id is
    /// empty or already used, here or earlier in the conversation: `dup`
    /// becomes `dup_2`, an empty id `call_1`. Returns the renames, `(old, new)`.
    pub(crate) fn make_call_ids_unique(&mut self, message: &mut Message) -> Vec<(String, String)> {
        self.call_ids.update(&self.messages);
        let earlier = &self.call_ids.ids;
        // This message's ids so far; the conversation's stay as they are until it is appended.
        let mut own: HashSet<String> = HashSet::new();
        let mut renamed = Vec::new();
        // The last call's id is checked by no later one: not kept (a single
        // call, the common response, copies no id).
        let mut later = message.tool_calls().count();
        for block in &mut message.content {
            let ContentBlock::ToolCall(call) = block else { continue };
            later -= 1;
            let used = |id: &str, own: &HashSet<String>| earlier.contains(id) || own.contains(id);
            if !call.id.is_empty() && !used(&call.id, &own) {
                if later > 0 {
                    own.insert(call.id.clone());
                }
                continue;
            }
            let base = if call.id.is_empty() { "call" } else { call.id.as_str() };
            let first = if call.id.is_empty() { 1 } else { 2 };
            // One more candidate than there are used ids: one of them is free.
            let fresh = (first..=first + earlier.len() + own.len())
                .map(|n| format!("{base}_{n}"))
                .find(|id| !used(id, &own))
                .unwrap_or_default();
            own.insert(fresh.clone());
            renamed.push((std::mem::replace(&mut call.id, fresh.clone()), fresh));
        }
        renamed
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::conversation::Conversation;
    use crate::message::{ContentBlock, Message, Role, ToolCall};

    fn calls(ids: &[&str]) -> Message {
        Message::new(
            Role::Assistant,
            ids.iter()
                .map(|id| ContentBlock::ToolCall(ToolCall { id: (*id).to_owned(), name: "t".into(), input: json!({}) }))
                .collect(),
        )
    }

    #[test]
    fn repeated_and_empty_ids_are_renamed() {
        let mut conversation = Conversation::new();
        conversation.push(calls(&["a"]));
        let mut message = calls(&["dup", "dup", "", "a", "dup_2", ""]);
        let renamed = conversation.make_call_ids_unique(&mut message);
        let ids: Vec<&str> = message.tool_calls().map(|call| call.id.as_str()).collect();
        assert_eq!(ids, ["dup", "dup_2", "call_1", "a_2", "dup_2_2", "call_2"]);
        assert_eq!(renamed.len(), 5);
        // Once appended, its ids are used too; a message never appended leaves none behind.
        conversation.push(message);
        let mut unsent = calls(&["b"]);
        assert!(conversation.make_call_ids_unique(&mut unsent).is_empty());
        let mut next = calls(&["dup", "b"]);
        conversation.make_call_ids_unique(&mut next);
        let ids: Vec<&str> = next.tool_calls().map(|call| call.id.as_str()).collect();
        assert_eq!(ids, ["dup_3", "b"]);
        // A rewritten history (compaction restamps) is indexed afresh.
        let mut rewritten = Conversation::from(vec![calls(&["x"])]);
        let mut again = calls(&["a", "x"]);
        rewritten.make_call_ids_unique(&mut again);
        assert_eq!(again.tool_calls().map(|call| call.id.as_str()).collect::<Vec<_>>(), ["a", "x_2"]);
    }
}
