//! Continuing stored responses (`previous_response_id`): which response a
//! request may continue, and which of its messages are new.
//!
//! A response stored on OpenAI's side holds everything its request sent
//! plus its own output. A later request may name it and send only what
//! came after, but only when the conversation really is that prefix plus
//! that output, unchanged. For each conversation the model keeps the last
//! response it got (`Link`): its id, the model that made it, how many
//! messages its request had and the stamp of the last of them, and the
//! content it answered. A request continues it when:
//! - its first message bears the stamp the link is kept under, and its
//!   message at the link's end still bears the stamp it had (stamps are
//!   never reused and only messages a `Conversation` holds, which can no
//!   longer change, have them: so the prefix is the one sent);
//! - the next message is this provider's assistant turn with exactly the
//!   content the response gave (the server's copy of the output);
//! - everything after it is user turns (tool results, text) that need no
//!   rewriting for this provider, the model is the same, and the request
//!   offers tools (without, every call is shown as text).
//!
//! Anything else (another provider or model answered in between, a
//! compacted or deserialised history, an edited answer) is sent whole, as
//! the stateless format does, and continues from there next time.

use std::collections::HashMap;
use std::fmt;
use std::num::NonZeroU64;
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::PROVIDER;
use crate::conversation::needs_view;
use crate::message::{ContentBlock, Message, Role};
use crate::model::ModelResponse;

/// How many conversations' links a model keeps; all are dropped when full
/// (a dropped link costs one request sent whole).
const MAX_LINKS: usize = 4096;

/// The last stored response of each conversation a model has answered.
#[derive(Default)]
pub(crate) struct ResponseChains {
    links: Mutex<HashMap<NonZeroU64, Link>>,
}

/// A stored response and the prefix of the conversation it covers.
struct Link {
    response_id: String,
    model: String,
    /// The messages its request sent.
    sent: usize,
    /// The stamp of message `sent - 1`.
    last: NonZeroU64,
    /// The content it answered, which must follow the `sent` messages.
    answer: Vec<ContentBlock>,
}

/// A request that continues a stored response.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Continuation {
    /// The stored response to continue.
    pub(crate) previous_response_id: String,
    /// Where the new messages start.
    pub(crate) new_from: usize,
}

impl ResponseChains {
    /// The stored response `messages` continue for `model`, when they do.
    /// The conversation's link is used up: the answer to this request makes
    /// the next one, and a request that failed (a stored response OpenAI no
    /// longer holds, say) leaves none, so the next is sent whole.
    pub(crate) fn continuation(&self, model: &str, messages: &[Message], tools_offered: bool) -> Option<Continuation> {
        let key = messages.first()?.stamp()?;
        let link = self.lock().remove(&key)?;
        let answer = messages.get(link.sent)?;
        let new = &messages[link.sent + 1..];
        // A request offering no tools shows every call as text: the stored items do not.
        let continues = tools_offered
            && link.model == model
            && messages[link.sent - 1].stamp() == Some(link.last)
            && answer.role == Role::Assistant
            && answer.provider.as_deref() == Some(PROVIDER)
            && answer.content == link.answer
            && !new.is_empty()
            && new.iter().all(|message| message.role == Role::User && !needs_view(message, PROVIDER, true));
        continues.then(|| Continuation { previous_response_id: link.response_id, new_from: link.sent + 1 })
    }

    /// Remembers `response`, the stored answer of `model` to `messages`.
    /// Copies (unstamped messages) and responses without an id are not
    /// remembered: the next request is sent whole.
    pub(crate) fn record(&self, model: &str, messages: &[Message], response: &ModelResponse) {
        let (Some(key), Some(last), Some(response_id)) =
            (messages.first().and_then(Message::stamp), messages.last().and_then(Message::stamp), &response.id)
        else {
            return;
        };
        let link = Link {
            response_id: response_id.clone(),
            model: model.to_owned(),
            sent: messages.len(),
            last,
            answer: response.content.clone(),
        };
        let mut links = self.lock();
        if links.len() >= MAX_LINKS && !links.contains_key(&key) {
            links.clear();
        }
        links.insert(key, link);
    }

    /// The links. A panic while the lock was held cannot have left a link
    /// half written (links are built outside it), so a poisoned lock is used
    /// as it is.
    fn lock(&self) -> MutexGuard<'_, HashMap<NonZeroU64, Link>> {
        self.links.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A copy of the settings starts with no links: links belong to the model
/// (and server) that stored the responses.
impl Clone for ResponseChains {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl fmt::Debug for ResponseChains {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseChains").field("conversations", &self.lock().len()).finish()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Continuation, ResponseChains};
    use crate::message::{ContentBlock, Message, Role, ToolCall, ToolResult};
    use crate::model::ModelResponse;
    use crate::{Conversation, providers::responses::PROVIDER};

    fn answer(call: &str) -> ModelResponse {
        ModelResponse::from_tool_calls([ToolCall::new(call, "lookup", json!({}))]).with_id(format!("resp_{call}"))
    }

    /// A conversation answered by `response` and its tool result.
    fn answered(conversation: &mut Conversation, response: &ModelResponse, call: &str) {
        conversation.push(response.to_message(PROVIDER));
        conversation.push(Message::from_tool_results([ToolResult::success(call, "ok")]));
    }

    #[test]
    fn only_the_stored_prefix_plus_its_answer_continues() {
        let chains = ResponseChains::default();
        let mut conversation = Conversation::new();
        conversation.push_user("go");
        assert_eq!(chains.continuation("m", conversation.messages(), true), None, "nothing stored yet");
        let first = answer("a");
        chains.record("m", conversation.messages(), &first);
        answered(&mut conversation, &first, "a");
        let expected = Some(Continuation { previous_response_id: "resp_a".into(), new_from: 2 });
        assert_eq!(chains.continuation("m", conversation.messages(), true), expected);
        assert_eq!(chains.continuation("m", conversation.messages(), true), None, "a link is used once");
        // Another model, a copy, or a request without tools (which shows calls as text): sent whole.
        let refused = |model: &str, messages: &[Message], tools: bool| {
            chains.record("m", &conversation.messages()[..1], &first);
            chains.continuation(model, messages, tools).is_none()
        };
        assert!(refused("other", conversation.messages(), true));
        assert!(refused("m", conversation.clone().messages(), true), "a clone restamps");
        let copies = conversation.messages().to_vec();
        assert!(refused("m", &copies, true), "copies have no stamps");
        assert!(refused("m", conversation.messages(), false));

        // The next answer moves the link on.
        let second = answer("b");
        chains.record("m", conversation.messages(), &second);
        answered(&mut conversation, &second, "b");
        assert_eq!(chains.continuation("m", conversation.messages(), true).map(|c| c.new_from), Some(4));
    }

    #[test]
    fn another_answer_in_between_sends_the_whole_conversation() {
        let chains = ResponseChains::default();
        let mut conversation = Conversation::new();
        conversation.push_user("go");
        let first = answer("a");
        chains.record("m", conversation.messages(), &first);
        // The turn in the history is not what the server stored (edited, or another provider's).
        let mut other = first.clone();
        other.content.push(ContentBlock::text("edited"));
        answered(&mut conversation, &other, "a");
        assert_eq!(chains.continuation("m", conversation.messages(), true), None);

        let mut conversation = Conversation::new();
        conversation.push_user("go");
        chains.record("m", conversation.messages(), &first);
        answered(&mut conversation, &first, "a");
        conversation.push(Message::new(Role::Assistant, vec![ContentBlock::text("from elsewhere")]));
        conversation.push_user("and?");
        assert_eq!(chains.continuation("m", conversation.messages(), true), None, "an assistant turn is new");
    }
}
