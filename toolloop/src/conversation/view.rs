//! The request-time view: what one provider is sent of a conversation.

use std::borrow::Cow;
use std::collections::HashMap;

use super::Conversation;
use crate::message::{ContentBlock, Message};

impl Conversation {
    /// The messages to send to `provider`.
    ///
    /// Tool calls made through another provider (and their results) are
    /// shown as text, because providers reject each other's tool-call
    /// artifacts (ids, argument encodings). Messages with no tool calls, or
    /// whose calls came from `provider` or from no provider at all (written by
    /// hand or by a test model), pass through untouched. The raw history is
    /// never changed: when nothing needs flattening the view borrows it.
    ///
    /// Models build this view themselves from the raw history in a request
    /// ([`ModelRequest::view_for`](crate::ModelRequest::view_for)); call it to
    /// see what a provider would be sent.
    pub fn view_for(&self, provider: &str) -> Cow<'_, [Message]> {
        view_for(&self.messages, provider)
    }
}

/// `messages` as `provider` is sent them (see [`Conversation::view_for`]).
pub(crate) fn view_for<'m>(messages: &'m [Message], provider: &str) -> Cow<'m, [Message]> {
    flatten_where(messages, |message| is_foreign(message, provider))
}

/// `messages` with every tool call and result shown as text, for a request
/// that offers no tools: providers reject tool-call artifacts in such a
/// request (a text agent continuing a typed agent's conversation, say).
/// Borrows the messages when they hold none.
pub(crate) fn view_without_tools(messages: &[Message]) -> Cow<'_, [Message]> {
    flatten_where(messages, |message| message.tool_calls().next().is_some())
}

/// `messages` with the tool calls of the messages `foreign` picks, and their
/// results, shown as text.
fn flatten_where(messages: &[Message], foreign: impl Fn(&Message) -> bool) -> Cow<'_, [Message]> {
    if !messages.iter().any(&foreign) {
        return Cow::Borrowed(messages);
    }

    // Names of the calls being flattened, so their results can say which tool answered.
    let mut flattened: HashMap<&str, &str> = HashMap::new();
    for message in messages.iter().filter(|m| foreign(m)) {
        for call in message.tool_calls() {
            flattened.insert(&call.id, &call.name);
        }
    }

    let view = messages
        .iter()
        .map(|message| {
            let touches = message.content.iter().any(|block| match block {
                ContentBlock::ToolCall(call) => flattened.contains_key(call.id.as_str()),
                ContentBlock::ToolResult(result) => flattened.contains_key(result.call_id.as_str()),
                ContentBlock::Text { .. } => false,
            });
            if !touches {
                return message.clone();
            }
            let content = message
                .content
                .iter()
                .map(|block| match block {
                    ContentBlock::ToolCall(call) if flattened.contains_key(call.id.as_str()) => {
                        ContentBlock::text(format!("[called tool `{}` with {}]", call.name, call.input))
                    }
                    ContentBlock::ToolResult(result) if flattened.contains_key(result.call_id.as_str()) => {
                        let name = flattened[result.call_id.as_str()];
                        let label = if result.is_error() { "error from" } else { "result of" };
                        ContentBlock::text(format!("[{label} tool `{name}`: {}]", result.content))
                    }
                    other => other.clone(),
                })
                .collect();
            Message::new(message.role, content)
        })
        .collect();
    Cow::Owned(view)
}

/// How many of `messages` the view for `provider` rewrites (tool calls
/// and their results shown as text): another provider's calls, or with no
/// tools offered every call. Zero, without allocating, when none.
pub(crate) fn rewritten_messages(messages: &[Message], provider: &str, tools_offered: bool) -> usize {
    let rewritten = |message: &Message| {
        if tools_offered { is_foreign(message, provider) } else { message.tool_calls().next().is_some() }
    };
    if !messages.iter().any(rewritten) {
        return 0;
    }
    let ids: std::collections::HashSet<&str> =
        messages.iter().filter(|m| rewritten(m)).flat_map(Message::tool_calls).map(|call| call.id.as_str()).collect();
    messages
        .iter()
        .filter(|message| {
            message.content.iter().any(|block| match block {
                ContentBlock::ToolCall(call) => ids.contains(call.id.as_str()),
                ContentBlock::ToolResult(result) => ids.contains(result.call_id.as_str()),
                ContentBlock::Text { .. } => false,
            })
        })
        .count()
}

/// Whether `message` holds tool calls made through a provider other than `provider`.
pub(crate) fn is_foreign(message: &Message, provider: &str) -> bool {
    message.provider.as_deref().is_some_and(|p| p != provider) && message.tool_calls().next().is_some()
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use serde_json::json;

    use crate::Conversation;
    use crate::message::{ContentBlock, FailureKind, Message, Role, ToolCall, ToolResult};

    fn with_call_from(provider: Option<&str>) -> Conversation {
        let mut conversation = Conversation::new();
        conversation.push_user("weather in Paris?");
        let mut call = Message::new(
            Role::Assistant,
            vec![
                ContentBlock::text("checking"),
                ContentBlock::ToolCall(ToolCall::new("toolu_1", "weather", json!({"city": "Paris"}))),
            ],
        );
        call.provider = provider.map(str::to_owned);
        conversation.push(call);
        conversation.push(Message::from_tool_results([ToolResult::failure(
            "toolu_1",
            FailureKind::ToolFailed,
            "offline",
        )]));
        conversation
    }

    #[test]
    fn same_provider_borrows_the_history() {
        let conversation = with_call_from(Some("anthropic"));
        assert!(matches!(conversation.view_for("anthropic"), Cow::Borrowed(_)));
        let neutral = with_call_from(None);
        assert!(matches!(neutral.view_for("openai"), Cow::Borrowed(_)));
    }

    #[test]
    fn other_provider_sees_tool_artifacts_as_text_and_history_is_untouched() {
        let conversation = with_call_from(Some("anthropic"));
        let before = conversation.clone();
        let view = conversation.view_for("openai");
        assert!(matches!(view, Cow::Owned(_)));
        assert_eq!(view[1].text(), "checking\n[called tool `weather` with {\"city\":\"Paris\"}]");
        assert_eq!(view[2].text(), "[error from tool `weather`: offline]");
        assert!(view.iter().all(|m| m.tool_calls().next().is_none() && m.tool_results().next().is_none()));
        assert_eq!(conversation, before);
    }
}
