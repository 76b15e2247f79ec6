//! Messages and content blocks: the provider-neutral shape of a conversation.

use std::fmt;
use std::num::NonZeroU64;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::reasoning::Reasoning;

/// Who wrote a message.
///
/// The system prompt is not a message: it is configuration of the run and is
/// sent beside the messages (see [`ModelRequest::system`](crate::ModelRequest)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The caller, tool results, and feedback written by the loop.
    User,
    /// The model.
    Assistant,
}

/// One message of a [`Conversation`](crate::Conversation).
///
/// Build one with [`Message::new`], [`Message::user`], [`Message::assistant`]
/// or [`Message::from_tool_results`]; its fields are public to read and to
/// change while you own it.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// What it says, in order.
    pub content: Vec<ContentBlock>,
    /// The provider that produced the tool calls in this message (for example
    /// `"anthropic"`), when it came from a model. A request to another provider
    /// shows such calls, and their results, as text (see
    /// [`Conversation::view_for`](crate::Conversation::view_for)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Set when a conversation appends the message (see [`Stamp`]).
    #[serde(skip)]
    stamp: Stamp,
}

// The stamp is not part of the message's value: left out, as `PartialEq` and serde leave it out.
#[allow(clippy::missing_fields_in_debug)]
impl fmt::Debug for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Message")
            .field("role", &self.role)
            .field("content", &self.content)
            .field("provider", &self.provider)
            .finish()
    }
}

impl Message {
    /// A message of `role` holding `content`, produced by no provider.
    pub fn new(role: Role, content: Vec<ContentBlock>) -> Self {
        Self { role, content, provider: None, stamp: Stamp::NONE }
    }

    /// Marks the message as produced by `provider` (see [`provider`](Self::provider)).
    pub fn with_provider(mut self, provider: impl Into<String>) -> Self {
        self.provider = Some(provider.into());
        self
    }

    /// A user message holding one text block.
    pub fn user(text: impl Into<String>) -> Self {
        Self::new(Role::User, vec![ContentBlock::text(text)])
    }

    /// An assistant message holding one text block.
    pub fn assistant(text: impl Into<String>) -> Self {
        Self::new(Role::Assistant, vec![ContentBlock::text(text)])
    }

    /// A user message answering tool calls, one block per result, in call order.
    pub fn from_tool_results(results: impl IntoIterator<Item = ToolResult>) -> Self {
        Self::new(Role::User, results.into_iter().map(ContentBlock::ToolResult).collect())
    }

    /// The message's stamp: `Some` only while a conversation holds it.
    #[cfg_attr(not(feature = "http"), allow(dead_code))] // read by the HTTP providers' body cache
    pub(crate) fn stamp(&self) -> Option<NonZeroU64> {
        self.stamp.0
    }

    /// Gives the message a stamp no other message has had. Only
    /// [`Conversation`](crate::Conversation) calls this, as it takes the message in.
    pub(crate) fn restamp(&mut self) {
        self.stamp = Stamp::fresh();
    }

    /// The tool calls in this message, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.content.iter().filter_map(|block| match block {
            ContentBlock::ToolCall(call) => Some(call),
            _ => None,
        })
    }

    /// The tool results in this message, in order.
    pub fn tool_results(&self) -> impl Iterator<Item = &ToolResult> {
        self.content.iter().filter_map(|block| match block {
            ContentBlock::ToolResult(result) => Some(result),
            _ => None,
        })
    }

    /// The text blocks of this message joined with newlines.
    pub fn text(&self) -> String {
        join_text(&self.content)
    }

    /// The reasoning blocks in this message, in order.
    pub fn reasoning(&self) -> impl Iterator<Item = &Reasoning> {
        reasoning_of(&self.content)
    }

    /// The readable reasoning of this message (thinking text, else summaries),
    /// joined with newlines; empty when there is none or it is all opaque.
    pub fn reasoning_text(&self) -> String {
        join_reasoning(&self.content)
    }
}

/// The reasoning blocks of `content`, in order.
pub(crate) fn reasoning_of(content: &[ContentBlock]) -> impl Iterator<Item = &Reasoning> {
    content.iter().filter_map(|block| match block {
        ContentBlock::Reasoning(reasoning) => Some(reasoning),
        _ => None,
    })
}

/// The visible text of the reasoning blocks of `content`, joined with newlines.
pub(crate) fn join_reasoning(content: &[ContentBlock]) -> String {
    let parts: Vec<String> =
        reasoning_of(content).map(Reasoning::visible_text).filter(|text| !text.is_empty()).collect();
    parts.join("\n")
}

/// A message's identity inside the conversation that holds it.
///
/// A conversation stamps each message it takes in with a number no message
/// has had before in this process, and never hands out `&mut` access to its
/// messages nor removes or reorders them (see
/// [`Conversation`](crate::Conversation)). So a stamp names one message
/// whose content and place in its conversation, *and those of every message
/// before it*, will not change: what the HTTP providers need to reuse the
/// wire bytes they rendered for it. A copy of a message is another message:
/// `Clone` and `Deserialize` give "no stamp", and a stamp is never part of a
/// message's value (equality, `Debug`, serde).
#[derive(Default)]
#[cfg_attr(not(feature = "http"), allow(dead_code))] // read by the HTTP providers' body cache
struct Stamp(Option<NonZeroU64>);

impl Stamp {
    const NONE: Self = Self(None);

    /// A stamp never given before; "none" once 2^64 - 1 have been given.
    fn fresh() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let next = NEXT.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |next| next.checked_add(1));
        Self(next.ok().and_then(NonZeroU64::new))
    }
}

impl Clone for Stamp {
    fn clone(&self) -> Self {
        Self::NONE
    }
}

impl PartialEq for Stamp {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// Joins the text blocks of `content` with newlines.
pub(crate) fn join_text(content: &[ContentBlock]) -> String {
    let mut out = String::new();
    for block in content {
        if let ContentBlock::Text { text } = block {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(text);
        }
    }
    out
}

/// A piece of a message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// The model asks for a tool to run.
    ToolCall(ToolCall),
    /// The answer to a tool call.
    ToolResult(ToolResult),
    /// What the model reasoned before the blocks that follow it (see [`Reasoning`]).
    Reasoning(Reasoning),
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }
}

/// A request from the model to run a tool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id for this call; its result must carry the same id.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as the model sent them. Normally a JSON object; when a
    /// provider received arguments that were not valid JSON it keeps the raw
    /// text here as a JSON string, so that executing the call reports the
    /// parse error to the model instead of losing what it wrote.
    pub input: Value,
}

impl ToolCall {
    /// A tool call.
    pub fn new(id: impl Into<String>, name: impl Into<String>, input: Value) -> Self {
        Self { id: id.into(), name: name.into(), input }
    }
}

/// The answer to a [`ToolCall`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The id of the call this answers.
    pub call_id: String,
    /// What the model sees: the tool's output as text, or the error message.
    pub content: String,
    /// Why the call failed; `None` when it succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<FailureKind>,
}

impl ToolResult {
    /// A successful result.
    pub fn success(call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Self { call_id: call_id.into(), content: content.into(), failure: None }
    }

    /// A failed result; the model sees `message` marked as an error.
    pub fn failure(call_id: impl Into<String>, kind: FailureKind, message: impl Into<String>) -> Self {
        Self { call_id: call_id.into(), content: message.into(), failure: Some(kind) }
    }

    /// Whether the provider should mark this result as an error (`is_error`).
    pub fn is_error(&self) -> bool {
        self.failure.is_some()
    }
}

/// Why a tool call produced an error result: machine-readable, so that stop
/// policies and callers never parse messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FailureKind {
    /// The arguments were not valid JSON or did not match the tool's input type.
    InvalidArguments,
    /// No tool of that name exists.
    UnknownTool,
    /// The tool's handler returned an error.
    ToolFailed,
    /// The tool's handler panicked.
    Panicked,
    /// The tool did not finish within its timeout.
    TimedOut,
    /// A policy denied the call before it ran.
    Denied,
    /// An approver was asked and said no.
    ApprovalDenied,
    /// The run stopped before the call was executed (a synthetic result).
    NotExecuted,
    /// The model's response was cut off (for example at its token limit), so
    /// the call may be incomplete and was not executed.
    Incomplete,
    /// The call is not allowed in this position, for example `submit` before
    /// any output was proposed.
    Rejected,
    /// The response made more tool calls than one iteration may run
    /// ([`max_tool_calls_per_iteration`](crate::AgentBuilder::max_tool_calls_per_iteration));
    /// the call was not executed.
    TooManyCalls,
}

impl FailureKind {
    /// A short, stable name for logs and metrics (`"invalid_arguments"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidArguments => "invalid_arguments",
            Self::UnknownTool => "unknown_tool",
            Self::ToolFailed => "tool_failed",
            Self::Panicked => "panicked",
            Self::TimedOut => "timed_out",
            Self::Denied => "denied",
            Self::ApprovalDenied => "approval_denied",
            Self::NotExecuted => "not_executed",
            Self::Incomplete => "incomplete",
            Self::Rejected => "rejected",
            Self::TooManyCalls => "too_many_calls",
        }
    }
}

impl std::fmt::Display for FailureKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What `content` holds, for logs: block kinds, sizes, call ids, tool names
/// and failure kinds, never text or arguments:
/// `text(12 chars), tool_call(id=…, name=…), tool_result(call_id=…, error=…)`.
pub(crate) fn summarize(content: &[ContentBlock]) -> String {
    use std::fmt::Write as _;

    let mut out = String::new();
    for block in content {
        if !out.is_empty() {
            out.push_str(", ");
        }
        let _ = match block {
            ContentBlock::Text { text } => write!(out, "text({} chars)", text.chars().count()),
            ContentBlock::ToolCall(call) => write!(out, "tool_call(id={}, name={})", call.id, call.name),
            ContentBlock::ToolResult(result) => match result.failure {
                Some(kind) => write!(out, "tool_result(call_id={}, error={kind})", result.call_id),
                None => write!(out, "tool_result(call_id={})", result.call_id),
            },
            ContentBlock::Reasoning(reasoning) => write!(
                out,
                "reasoning({} chars, opaque={})",
                reasoning.visible_text().chars().count(),
                reasoning.opaque_provider().is_some()
            ),
        };
    }
    out
}

/// Every message summarised (see [`summarize`]) with its role:
/// `user[text(5 chars)] assistant[tool_call(id=…, name=…)]`.
pub(crate) fn summarize_messages(messages: &[Message]) -> String {
    let mut out = String::new();
    for message in messages {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(match message.role {
            Role::User => "user[",
            Role::Assistant => "assistant[",
        });
        out.push_str(&summarize(&message.content));
        out.push(']');
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{ContentBlock, FailureKind, Message, Role, ToolCall, ToolResult, summarize, summarize_messages};

    #[test]
    fn summaries_name_kinds_ids_and_tools_but_not_contents() {
        let content = vec![
            ContentBlock::text("secret plans"),
            ContentBlock::ToolCall(ToolCall::new("c1", "weather", json!({"city": "Paris"}))),
            ContentBlock::ToolResult(ToolResult::failure("c0", FailureKind::ToolFailed, "boom")),
        ];
        assert_eq!(
            summarize(&content),
            "text(12 chars), tool_call(id=c1, name=weather), tool_result(call_id=c0, error=tool_failed)"
        );
        let messages = [Message::user("hello"), Message::new(Role::Assistant, content)];
        let summary = summarize_messages(&messages);
        assert!(summary.starts_with("user[text(5 chars)] assistant[text(12 chars), tool_call(id=c1"), "{summary}");
        assert!(!summary.contains("secret") && !summary.contains("Paris"), "{summary}");
    }
}
