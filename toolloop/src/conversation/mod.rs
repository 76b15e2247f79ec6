//! The caller-owned, append-only conversation.

mod view;
// Only the HTTP providers render wire JSON.
#[cfg_attr(not(feature = "http"), allow(dead_code))]
mod wire_cache;

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::message::{ContentBlock, Message, Role};

pub use view::{RequestView, ViewRewrites};
pub(crate) use wire_cache::WireCache;
#[cfg(feature = "http")]
pub(crate) use wire_cache::{RenderRun, write_array, write_uncached};

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
/// A conversation also keeps, privately, each provider's wire JSON of the
/// messages no later append can change, so a request renders only what is
/// new and its cost stays flat as the conversation grows. That cache is not
/// part of its value: it is not serialised, compared or cloned.
#[derive(Default, Serialize, Deserialize)]
pub struct Conversation {
    messages: Vec<Message>,
    #[serde(skip)]
    wire: WireCache,
}

impl Clone for Conversation {
    fn clone(&self) -> Self {
        Self { messages: self.messages.clone(), wire: WireCache::default() }
    }
}

impl PartialEq for Conversation {
    fn eq(&self, other: &Self) -> bool {
        self.messages == other.messages
    }
}

// The cache is not part of the conversation's value: left out, as the derived
// `Debug` of a conversation without it would.
#[allow(clippy::missing_fields_in_debug)]
impl fmt::Debug for Conversation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Conversation").field("messages", &self.messages).finish()
    }
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

    /// The wire cache of these messages.
    pub(crate) fn wire_cache(&self) -> &WireCache {
        &self.wire
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
        Self { messages, wire: WireCache::default() }
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
