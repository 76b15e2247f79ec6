//! Tool call ids made unique before a response enters the conversation.
//!
//! Results are paired with calls by id, and APIs reject a request whose
//! ids repeat (Anthropic wants every `tool_use` id unique) or are empty. A
//! model (or a compatible server) that sends two calls with the same id, an
//! id used earlier in the conversation, or none at all would make every later
//! request invalid; renaming the call before anything answers it keeps each
//! result paired with its own call.

use std::collections::HashSet;

use super::Conversation;
use crate::message::{ContentBlock, Message};

impl Conversation {
    /// Renames the tool calls of `message` (about to be appended) whose id is
    /// empty or already used, here or earlier in the conversation: `dup`
    /// becomes `dup_2`, an empty id `call_1`. Returns the renames, `(old, new)`.
    pub(crate) fn make_call_ids_unique(&self, message: &mut Message) -> Vec<(String, String)> {
        let mut used: HashSet<String> = self.iter().flat_map(Message::tool_calls).map(|call| call.id.clone()).collect();
        let mut renamed = Vec::new();
        for block in &mut message.content {
            let ContentBlock::ToolCall(call) = block else { continue };
            if !call.id.is_empty() && used.insert(call.id.clone()) {
                continue;
            }
            let base = if call.id.is_empty() { "call" } else { call.id.as_str() };
            let first = if call.id.is_empty() { 1 } else { 2 };
            // One more candidate than there are used ids: one of them is free.
            let fresh = (first..=first + used.len())
                .map(|n| format!("{base}_{n}"))
                .find(|id| !used.contains(id))
                .unwrap_or_default();
            used.insert(fresh.clone());
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
    }
}
