//! The request-time view: what one provider is sent of a conversation.

use std::borrow::Cow;
use std::collections::HashMap;
use std::num::NonZeroU64;

use super::Conversation;
use crate::message::{ContentBlock, Message};

/// A request-time view of some messages and what building it changed, so
/// that it can be reported (a model switch that dropped reasoning, say: a
/// debug event of [`view_for`]).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RequestView<'m> {
    /// The messages to send; borrowed from the history when nothing changed.
    pub(crate) messages: Cow<'m, [Message]>,
    /// Tool calls made through another provider, shown as text (their
    /// results are shown as text too, and not counted here).
    pub(crate) flattened_tool_calls: usize,
    /// Reasoning blocks left out because their opaque state belongs to
    /// another provider.
    pub(crate) dropped_reasoning: usize,
    /// Messages left out because nothing in them is sent (see [`is_blank`]).
    pub(crate) blank_messages: usize,
}

impl<'m> RequestView<'m> {
    /// Whether the view is the history unchanged.
    pub(crate) fn is_unchanged(&self) -> bool {
        self.flattened_tool_calls == 0 && self.dropped_reasoning == 0 && self.blank_messages == 0
    }

    /// The view of `messages` for `provider`, by the rules of
    /// [`Conversation::view_for`].
    pub(crate) fn of(messages: &'m [Message], provider: &str) -> Self {
        rewrite(messages, Some(provider), |message| has_foreign_calls(message, provider))
    }
}

impl Conversation {
    /// The messages to send to `provider`.
    ///
    /// Tool calls made through another provider (and their results) are
    /// shown as text, because providers reject each other's tool-call
    /// artifacts (ids, argument encodings); Gemini, whose API documents how
    /// to take calls other models made, gets them as tool calls. Reasoning whose opaque state
    /// (a signature, encrypted reasoning) another provider issued is left
    /// out, because only that provider can read it; reasoning issued by
    /// `provider` stays byte for byte, in place and in order; plain
    /// reasoning (no opaque state) goes only to Ollama. A message nothing of
    /// which is sent (no blocks, only blank text, as from a model that
    /// answered nothing, or only reasoning `provider` does not take) is left
    /// out, so that the messages around it, of one role, go as one turn.
    /// Messages with
    /// no such artifacts, or whose artifacts came from `provider` or from no
    /// provider at all (written by hand or by a test model), pass through
    /// untouched. The raw history is never changed: when nothing needs
    /// rewriting the view borrows it. A view that rewrote something says
    /// how many tool calls it showed as text and how many reasoning blocks
    /// it left out in a `debug` event (target `toolloop`).
    ///
    /// Models build this view themselves from the raw history in a request
    /// ([`ModelRequest::view_for`](crate::ModelRequest::view_for)); call it to
    /// see what a provider would be sent.
    pub fn view_for(&self, provider: &str) -> Cow<'_, [Message]> {
        view_for(&self.messages, provider)
    }
}

/// `messages` as `provider` is sent them (see [`Conversation::view_for`]),
/// with a `debug` event saying what was rewritten, if anything.
pub(crate) fn view_for<'m>(messages: &'m [Message], provider: &str) -> Cow<'m, [Message]> {
    let view = RequestView::of(messages, provider);
    if !view.is_unchanged() {
        tracing::debug!(
            provider,
            flattened_tool_calls = view.flattened_tool_calls,
            dropped_reasoning = view.dropped_reasoning,
            blank_messages = view.blank_messages,
            "request view rewrote the history"
        );
    }
    view.messages
}

/// `messages` with every tool call and result shown as text, for a request
/// that offers no tools: providers reject tool-call artifacts in such a
/// request (a text agent continuing a typed agent's conversation, say).
/// Reasoning `provider` cannot read is left out as in [`view_for`].
/// Borrows the messages when nothing needs rewriting.
pub(crate) fn view_without_tools<'m>(messages: &'m [Message], provider: &str) -> Cow<'m, [Message]> {
    rewrite(messages, Some(provider), |message| message.tool_calls().next().is_some()).messages
}

/// Whether the view of `message` for `provider` differs from it, in a
/// request that offers tools (`tools_offered`) or none.
pub(crate) fn needs_view(message: &Message, provider: &str, tools_offered: bool) -> bool {
    let calls =
        if tools_offered { has_foreign_calls(message, provider) } else { message.tool_calls().next().is_some() };
    calls || message.reasoning().any(|reasoning| reasoning.is_opaque_to(provider)) || is_blank(message, provider)
}

/// Whether nothing in `message` is sent to `provider`: no blocks, or only
/// blank text (a model that answered nothing, say) and reasoning `provider`
/// does not take back (see [`takes_reasoning`]). Providers reject such a
/// turn, or (Gemini) drop it and then refuse the two turns of one role it
/// leaves side by side; the view leaves it out, so that its neighbours, of
/// one role, go as one turn.
pub(crate) fn is_blank(message: &Message, provider: &str) -> bool {
    message.content.iter().all(|block| match block {
        ContentBlock::Text { text } => text.trim().is_empty(),
        ContentBlock::Reasoning(reasoning) => !takes_reasoning(provider, reasoning),
        _ => false,
    })
}

/// Whether `provider` is sent `reasoning` back: the reasoning whose opaque
/// state it issued (a signature, encrypted reasoning), and on Ollama, whose
/// `thinking` field takes any text, plain reasoning too. The other APIs
/// take no reasoning without their own state.
fn takes_reasoning(provider: &str, reasoning: &crate::reasoning::Reasoning) -> bool {
    match reasoning.opaque_provider() {
        Some(issuer) => issuer == provider,
        None => provider == OLLAMA,
    }
}

/// `messages` with the tool calls of the messages `flatten` picks (and their
/// results) shown as text, and, for a `provider`, the reasoning it cannot
/// read left out.
fn rewrite<'m>(messages: &'m [Message], provider: Option<&str>, flatten: impl Fn(&Message) -> bool) -> RequestView<'m> {
    let unreadable = |block: &ContentBlock| match (block, provider) {
        (ContentBlock::Reasoning(reasoning), Some(provider)) => reasoning.is_opaque_to(provider),
        _ => false,
    };
    let blank = |message: &Message| provider.is_some_and(|provider| is_blank(message, provider));
    if !messages.iter().any(|message| flatten(message) || blank(message) || message.content.iter().any(unreadable)) {
        let messages = Cow::Borrowed(messages);
        return RequestView { messages, flattened_tool_calls: 0, dropped_reasoning: 0, blank_messages: 0 };
    }

    // Names of the calls being flattened, so their results can say which tool answered.
    let mut flattened: HashMap<&str, &str> = HashMap::new();
    for message in messages.iter().filter(|m| flatten(m)) {
        for call in message.tool_calls() {
            flattened.insert(&call.id, &call.name);
        }
    }
    let is_flattened = |block: &ContentBlock| match block {
        ContentBlock::ToolCall(call) => flattened.contains_key(call.id.as_str()),
        ContentBlock::ToolResult(result) => flattened.contains_key(result.call_id.as_str()),
        _ => false,
    };

    let (mut flattened_tool_calls, mut dropped_reasoning, mut blank_messages) = (0, 0, 0);
    let mut view = Vec::with_capacity(messages.len());
    for message in messages {
        if blank(message) {
            blank_messages += 1;
            continue;
        }
        if !message.content.iter().any(|block| is_flattened(block) || unreadable(block)) {
            view.push(message.clone());
            continue;
        }
        let mut content = Vec::with_capacity(message.content.len());
        let mut flattened_here = false;
        for block in &message.content {
            match block {
                ContentBlock::ToolCall(call) if is_flattened(block) => {
                    flattened_tool_calls += 1;
                    flattened_here = true;
                    content.push(ContentBlock::text(format!("[called tool `{}` with {}]", call.name, call.input)));
                }
                ContentBlock::ToolResult(result) if is_flattened(block) => {
                    flattened_here = true;
                    let name = flattened[result.call_id.as_str()];
                    let label = if result.is_error() { "error from" } else { "result of" };
                    content.push(ContentBlock::text(format!("[{label} tool `{name}`: {}]", result.content)));
                }
                ContentBlock::Reasoning(_) if unreadable(block) => dropped_reasoning += 1,
                other => content.push(other.clone()),
            }
        }
        // Flattened calls are no longer any provider's artifacts.
        let provider = if flattened_here { None } else { message.provider.clone() };
        let mut rewritten = Message::new(message.role, content);
        rewritten.provider = provider;
        // A message that held only reasoning its provider alone reads is blank now.
        if blank(&rewritten) {
            blank_messages += 1;
            continue;
        }
        view.push(rewritten);
    }
    RequestView { messages: Cow::Owned(view), flattened_tool_calls, dropped_reasoning, blank_messages }
}

/// How many of `messages` the view for `provider` rewrites (tool calls
/// and their results shown as text): another provider's calls, or with no
/// tools offered every call. Zero, without allocating, when none.
pub(crate) fn rewritten_messages(messages: &[Message], provider: &str, tools_offered: bool) -> usize {
    let rewritten = |message: &Message| needs_view(message, provider, tools_offered);
    if !messages.iter().any(rewritten) {
        return 0;
    }
    let ids: std::collections::HashSet<&str> =
        messages.iter().filter(|m| rewritten(m)).flat_map(Message::tool_calls).map(|call| call.id.as_str()).collect();
    messages
        .iter()
        .filter(|message| {
            rewritten(message)
                || message.content.iter().any(|block| match block {
                    ContentBlock::ToolResult(result) => ids.contains(result.call_id.as_str()),
                    _ => false,
                })
        })
        .count()
}

/// [`rewritten_messages`] along one run, for the usual case where nothing
/// is rewritten: the messages a previous call found clean (none needing a
/// view for the same provider and tools) are not looked at again, so the
/// cost of a call stays flat as the conversation grows. Valid while the
/// request's first message and the message at the end of the clean prefix
/// bear the stamps they had (stamps are never reused, and a held message
/// that changes is restamped).
#[derive(Debug, Default)]
pub(crate) struct RewriteScan {
    clean: Option<CleanPrefix>,
}

#[derive(Debug)]
struct CleanPrefix {
    provider: String,
    tools_offered: bool,
    first: NonZeroU64,
    /// How many messages are clean, and the stamp of the last of them.
    len: usize,
    last: NonZeroU64,
}

impl RewriteScan {
    /// How many of `messages` the view for `provider` rewrites (see [`rewritten_messages`]).
    pub(crate) fn rewritten(&mut self, messages: &[Message], provider: &str, tools_offered: bool) -> usize {
        let known = self.clean.as_ref().filter(|clean| {
            clean.provider == provider
                && clean.tools_offered == tools_offered
                && messages.first().and_then(Message::stamp) == Some(clean.first)
                && messages.get(clean.len - 1).and_then(Message::stamp) == Some(clean.last)
        });
        let from = known.map_or(0, |clean| clean.len);
        if messages[from..].iter().any(|message| needs_view(message, provider, tools_offered)) {
            self.clean = None;
            return rewritten_messages(messages, provider, tools_offered);
        }
        self.clean = match (messages.first().and_then(Message::stamp), messages.last().and_then(Message::stamp)) {
            (Some(first), Some(last)) => {
                Some(CleanPrefix { provider: provider.to_owned(), tools_offered, first, len: messages.len(), last })
            }
            _ => None,
        };
        0
    }
}

/// Whether `message` holds tool calls made through a provider other than
/// `provider`, which that provider cannot take as tool calls.
fn has_foreign_calls(message: &Message, provider: &str) -> bool {
    !takes_foreign_calls(provider)
        && message.provider.as_deref().is_some_and(|p| p != provider)
        && message.tool_calls().next().is_some()
}

/// Whether `provider` takes tool calls made through other providers as
/// tool calls. Gemini does: its API documents a placeholder thought
/// signature for calls its models did not make, which its wire format
/// writes (ids and arguments are plain data to it).
fn takes_foreign_calls(provider: &str) -> bool {
    provider == GEMINI
}

/// The Gemini provider's name (see `crate::providers::gemini::PROVIDER`).
const GEMINI: &str = "gemini";

/// The Ollama provider's name (see `crate::providers::ollama::PROVIDER`).
const OLLAMA: &str = "ollama";

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use serde_json::json;

    use super::RequestView;
    use crate::Conversation;
    use crate::message::{ContentBlock, FailureKind, Message, Role, ToolCall, ToolResult};
    use crate::reasoning::{OpaqueReasoning, Reasoning, ReasoningState};

    fn with_call_from(provider: Option<&str>) -> Conversation {
        let mut conversation = Conversation::new();
        conversation.push_user("weather in Paris?");
        conversation.push({
            let mut message = Message::new(
                Role::Assistant,
                vec![
                    ContentBlock::text("checking"),
                    ContentBlock::ToolCall(ToolCall::new("toolu_1", "weather", json!({"city": "Paris"}))),
                ],
            );
            message.provider = provider.map(str::to_owned);
            message
        });
        conversation.push(Message::from_tool_results([ToolResult::failure(
            "toolu_1",
            FailureKind::ToolFailed,
            "offline",
        )]));
        conversation
    }

    #[test]
    fn blank_messages_are_left_out_so_their_neighbours_go_as_one_turn() {
        use crate::message::Role;
        let messages = [
            Message::user("a"),
            Message::new(Role::Assistant, Vec::new()),
            Message::user("b"),
            Message::assistant("  "),
            Message::assistant("c"),
        ];
        let view = super::view_for(&messages, "anthropic");
        let texts: Vec<String> = view.iter().map(Message::text).collect();
        assert_eq!(texts, ["a", "b", "c"]);
        assert!(
            super::needs_view(&messages[1], "anthropic", true) && !super::needs_view(&messages[0], "anthropic", true)
        );

        // An Ollama model's thinking (plain reasoning) goes back to Ollama
        // only: a turn of nothing else is blank for the other providers.
        let thinking =
            Message::new(Role::Assistant, vec![ContentBlock::Reasoning(crate::reasoning::Reasoning::from_text("hmm"))])
                .with_provider("ollama");
        let messages = [Message::user("a"), thinking, Message::user("b")];
        for provider in ["gemini", "anthropic", "openai"] {
            assert_eq!(super::view_for(&messages, provider).len(), 2, "{provider}");
        }
        assert_eq!(super::view_for(&messages, "ollama").len(), 3);
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

    fn with_reasoning_from(provider: &str) -> Conversation {
        let state = if provider == "anthropic" {
            ReasoningState::Signed { signature: "sig-1".into() }
        } else {
            ReasoningState::Item { id: "rs_1".into(), encrypted_content: Some("gAAA".into()) }
        };
        let opaque = OpaqueReasoning::new(provider, Some("m".into()), state);
        let mut conversation = Conversation::new();
        conversation.push_user("weather in Paris?");
        conversation.push({
            let mut message = Message::new(
                Role::Assistant,
                vec![
                    ContentBlock::Reasoning(Reasoning::with_opaque(vec!["think".into()], Vec::new(), opaque)),
                    ContentBlock::Reasoning(Reasoning::from_text("plain")),
                    ContentBlock::text("checking"),
                    ContentBlock::ToolCall(ToolCall::new("call_1", "weather", json!({"city": "Paris"}))),
                ],
            );
            message.provider = Some(provider.to_owned());
            message
        });
        conversation.push(Message::from_tool_results([ToolResult::success("call_1", "sunny")]));
        conversation
    }

    #[test]
    fn reasoning_stays_byte_for_byte_for_its_provider() {
        let conversation = with_reasoning_from("anthropic");
        assert!(matches!(conversation.view_for("anthropic"), Cow::Borrowed(_)));
        let view = RequestView::of(conversation.messages(), "anthropic");
        assert!(view.is_unchanged());
        assert_eq!(&*view.messages, conversation.messages());
    }

    #[test]
    fn another_provider_gets_no_opaque_reasoning_and_the_view_says_so() {
        let conversation = with_reasoning_from("anthropic");
        let before = conversation.clone();
        let view = RequestView::of(conversation.messages(), "openai-responses");
        assert_eq!((view.flattened_tool_calls, view.dropped_reasoning), (1, 1));
        // The plain reasoning stays (each wire format decides whether it can send it).
        assert_eq!(view.messages[1].reasoning().count(), 1);
        assert_eq!(view.messages[1].reasoning_text(), "plain");
        assert!(view.messages[1].reasoning().all(|r| r.opaque_provider().is_none()));
        assert!(matches!(conversation.view_for("openai-responses"), Cow::Owned(_)));
        assert_eq!(conversation, before);
    }

    #[test]
    fn reasoning_alone_is_dropped_without_flattening_the_calls() {
        // Same tool-call provider tag, but reasoning from another: only the reasoning goes.
        let mut conversation = with_reasoning_from("openai-responses");
        let mut message = conversation.messages()[1].clone();
        message.provider = Some("anthropic".into());
        conversation =
            Conversation::from(vec![conversation.messages()[0].clone(), message, conversation.messages()[2].clone()]);
        let view = RequestView::of(conversation.messages(), "anthropic");
        assert_eq!((view.flattened_tool_calls, view.dropped_reasoning), (0, 1));
        assert_eq!(view.messages[1].tool_calls().count(), 1);
        assert_eq!(view.messages[1].provider.as_deref(), Some("anthropic"));
        assert!(matches!(conversation.view_for("anthropic"), Cow::Owned(_)));
    }

    #[test]
    fn gemini_takes_other_providers_calls_as_calls_but_not_their_reasoning() {
        let conversation = with_reasoning_from("anthropic");
        let view = RequestView::of(conversation.messages(), "gemini");
        assert_eq!((view.flattened_tool_calls, view.dropped_reasoning), (0, 1));
        assert_eq!(view.messages[1].tool_calls().count(), 1);
        assert_eq!(view.messages[2].tool_results().count(), 1);
        assert_eq!(view.messages[1].provider.as_deref(), Some("anthropic"));
    }

    #[test]
    fn a_run_scans_each_message_once_and_counts_as_a_fresh_scan() {
        let mut conversation = with_call_from(Some("openai"));
        let mut scan = super::RewriteScan::default();
        assert_eq!(scan.rewritten(conversation.messages(), "openai", true), 0);
        conversation.push(Message::assistant("more"));
        assert_eq!(scan.rewritten(conversation.messages(), "openai", true), 0);
        // Another provider, or no tools: rewritten, counted as a full scan counts.
        for (provider, tools) in [("anthropic", true), ("openai", false), ("openai", true)] {
            let fresh = super::rewritten_messages(conversation.messages(), provider, tools);
            assert_eq!(scan.rewritten(conversation.messages(), provider, tools), fresh, "{provider} {tools}");
        }
        assert!(super::rewritten_messages(conversation.messages(), "anthropic", true) > 0);
        // Copies (no stamps) are scanned whole.
        let copies = conversation.messages().to_vec();
        assert_eq!(scan.rewritten(&copies, "anthropic", true), super::rewritten_messages(&copies, "anthropic", true));
    }
}
