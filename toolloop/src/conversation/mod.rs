//! The caller-owned, append-only conversation.

mod view;

use serde::{Deserialize, Serialize};

use crate::message::{ContentBlock, Message, Role};

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
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Conversation {
    messages: Vec<Message>,
}

impl Conversation {
    /// An empty conversation.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a message.
    pub fn push(&mut self, message: Message) {
        self.messages.push(message);
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

    /// Ids of tool calls that have no result anywhere after them.
    ///
    /// Every run leaves this empty; a non-empty answer means the history was
    /// built by hand or came from elsewhere and cannot be sent to a provider
    /// as it is.
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
    fn from(messages: Vec<Message>) -> Self {
        Self { messages }
    }
}

impl Extend<Message> for Conversation {
    fn extend<I: IntoIterator<Item = Message>>(&mut self, iter: I) {
        self.messages.extend(iter);
    }
}

impl<'a> IntoIterator for &'a Conversation {
    type Item = &'a Message;
    type IntoIter = std::slice::Iter<'a, Message>;

    fn into_iter(self) -> Self::IntoIter {
        self.messages.iter()
    }
}
