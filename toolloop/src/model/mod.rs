//! The provider-neutral model interface.

mod error;
mod partial_json;
pub(crate) mod stream;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

pub use error::{ModelError, ModelErrorKind};
pub use partial_json::parse_partial_json;
pub use stream::{ReasoningPart, ResponseAccumulator, StreamEvent, chunk_response};

use crate::conversation::{Conversation, WireCache};
use crate::message::{ContentBlock, Message, Role, ToolCall};
use crate::stop_reason::StopReason;
use crate::tool::ToolDefinition;
use crate::usage::Usage;

/// A boxed, sendable future, as returned by [`Model::complete`].
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A language model that can call tools: one request in, one response out.
///
/// Implemented by the HTTP providers and by the test models. The trait is
/// object safe, so a run can switch models or fall back to another one
/// through `Arc<dyn Model>`.
///
/// ```
/// use toolloop::{BoxFuture, Model, ModelError, ModelRequest, ModelResponse};
///
/// struct Echo;
///
/// impl Model for Echo {
///     fn provider(&self) -> &str { "echo" }
///     fn name(&self) -> &str { "echo-1" }
///     fn complete<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
///         Box::pin(async move {
///             let last = request.messages.last().map(|m| m.text()).unwrap_or_default();
///             Ok(ModelResponse::from_text(last))
///         })
///     }
/// }
/// ```
pub trait Model: Send + Sync {
    /// The wire format this model speaks (`"anthropic"`, `"openai"`,
    /// `"ollama"`, ...). Tool calls produced through one provider are shown
    /// as text to another (see [`Conversation::view_for`](crate::Conversation::view_for)).
    fn provider(&self) -> &str;

    /// The model's name, for logs and metadata.
    fn name(&self) -> &str;

    /// Sends one request and waits for the whole response.
    fn complete<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>>;
}

impl<M: Model + ?Sized> Model for Arc<M> {
    fn provider(&self) -> &str {
        (**self).provider()
    }
    fn name(&self) -> &str {
        (**self).name()
    }
    fn complete<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        (**self).complete(request)
    }
}

impl<M: Model + ?Sized> Model for Box<M> {
    fn provider(&self) -> &str {
        (**self).provider()
    }
    fn name(&self) -> &str {
        (**self).name()
    }
    fn complete<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        (**self).complete(request)
    }
}

impl<M: Model + ?Sized> Model for &M {
    fn provider(&self) -> &str {
        (**self).provider()
    }
    fn name(&self) -> &str {
        (**self).name()
    }
    fn complete<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        (**self).complete(request)
    }
}

/// What a model is asked: borrowed from the run, so building a request copies
/// nothing.
#[derive(Clone, Copy)]
#[non_exhaustive]
pub struct ModelRequest<'a> {
    /// The system prompt.
    pub system: Option<&'a str>,
    /// The conversation as this model's provider should see it.
    pub messages: &'a [Message],
    /// The raw conversation the view in `messages` was built from. Models
    /// that route to models of other providers (like
    /// [`Fallback`](crate::providers::Fallback)) build each one's view from
    /// it, as long as `messages` is still that view (see [`source`](Self::source)).
    pub history: &'a [Message],
    /// The tools the model may call.
    pub tools: &'a [ToolDefinition],
    /// Overrides the provider's configured maximum output tokens.
    pub max_tokens: Option<u32>,
    /// Overrides the provider's configured sampling temperature.
    pub temperature: Option<f32>,
    /// Ask the provider to enforce tool input schemas strictly (OpenAI
    /// `strict: true`, sending [`ToolDefinition::strict_input_schema`] for every
    /// tool that has one).
    pub strict_tools: bool,
    /// The conversation `messages` came from, whose wire cache providers
    /// use while `messages` is that whole conversation.
    pub(crate) conversation: Option<&'a Conversation>,
    /// The `messages` that [`with_history`](Self::with_history) declared a
    /// view of `history`; a wrapper that swaps `messages` breaks the link.
    pub(crate) viewed: Option<&'a [Message]>,
}

impl fmt::Debug for ModelRequest<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelRequest")
            .field("system", &self.system)
            .field("messages", &self.messages)
            .field("history", &self.history.len())
            .field("tools", &self.tools)
            .field("max_tokens", &self.max_tokens)
            .field("temperature", &self.temperature)
            .field("strict_tools", &self.strict_tools)
            .finish()
    }
}

impl<'a> ModelRequest<'a> {
    /// A request for `messages` with no system prompt, no tools and the
    /// provider's default settings.
    pub fn new(messages: &'a [Message]) -> Self {
        Self {
            system: None,
            messages,
            history: messages,
            tools: &[],
            max_tokens: None,
            temperature: None,
            strict_tools: false,
            conversation: None,
            viewed: None,
        }
    }

    /// Declares `messages` (as set now) a view of `history`, the raw conversation.
    pub fn with_history(mut self, history: &'a [Message]) -> Self {
        self.history = history;
        self.viewed = Some(self.messages);
        self
    }

    /// What a model routing to other providers should build its views from:
    /// the raw history while `messages` is still the view declared by
    /// [`with_history`](Self::with_history), and `messages` once something
    /// (a wrapper trimming the context, say) has replaced it.
    pub fn source(&self) -> &'a [Message] {
        match self.viewed {
            Some(viewed) if std::ptr::eq(viewed, self.messages) => self.history,
            _ => self.messages,
        }
    }

    /// Marks `messages` as coming from `conversation`, so that providers may
    /// reuse its wire cache whenever `messages` is the whole conversation (not
    /// a view rewritten for another provider).
    pub(crate) fn with_conversation(mut self, conversation: &'a Conversation) -> Self {
        self.conversation = Some(conversation);
        self
    }

    /// The wire cache for `messages`, when they are exactly the messages of
    /// the conversation the request was built from.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn wire_cache(&self) -> Option<&'a WireCache> {
        self.conversation
            .filter(|conversation| std::ptr::eq(conversation.messages(), self.messages))
            .map(Conversation::wire_cache)
    }

    /// Sets the system prompt.
    pub fn with_system(mut self, system: Option<&'a str>) -> Self {
        self.system = system;
        self
    }

    /// Sets the tools.
    pub fn with_tools(mut self, tools: &'a [ToolDefinition]) -> Self {
        self.tools = tools;
        self
    }

    /// Overrides the maximum output tokens.
    pub fn with_max_tokens(mut self, max_tokens: Option<u32>) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// Overrides the temperature.
    pub fn with_temperature(mut self, temperature: Option<f32>) -> Self {
        self.temperature = temperature;
        self
    }

    /// Turns strict tool schemas on or off.
    pub fn with_strict_tools(mut self, strict: bool) -> Self {
        self.strict_tools = strict;
        self
    }
}

/// What a model answered.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ModelResponse {
    /// Text and tool calls, in the order the model produced them.
    pub content: Vec<ContentBlock>,
    /// Why the model stopped.
    pub stop_reason: StopReason,
    /// Tokens this call consumed.
    pub usage: Usage,
    /// The model that answered, when the provider says.
    pub model: Option<String>,
    /// The provider that produced this response, when it may differ from the
    /// [`Model::provider`] that was asked (a [`Fallback`](crate::providers::Fallback)
    /// that answered with its second model). [`to_message`](Self::to_message)
    /// prefers it, so the tool calls in history are tagged with the provider
    /// that really made them.
    pub provider: Option<String>,
}

impl ModelResponse {
    /// A response made of `content`. The stop reason is
    /// [`StopReason::ToolUse`] when it holds a tool call and
    /// [`StopReason::EndTurn`] otherwise; usage is zero.
    pub fn new(content: Vec<ContentBlock>) -> Self {
        let stop_reason = if content.iter().any(|b| matches!(b, ContentBlock::ToolCall(_))) {
            StopReason::ToolUse
        } else {
            StopReason::EndTurn
        };
        Self { content, stop_reason, usage: Usage::default(), model: None, provider: None }
    }

    /// A text-only response.
    pub fn from_text(text: impl Into<String>) -> Self {
        Self::new(vec![ContentBlock::text(text)])
    }

    /// A response holding only `calls`.
    pub fn from_tool_calls(calls: impl IntoIterator<Item = ToolCall>) -> Self {
        Self::new(calls.into_iter().map(ContentBlock::ToolCall).collect())
    }

    /// Sets the usage.
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = usage;
        self
    }

    /// Sets the stop reason.
    pub fn with_stop_reason(mut self, stop_reason: StopReason) -> Self {
        self.stop_reason = stop_reason;
        self
    }

    /// Sets the answering model's name.
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// Sets the provider that produced the response.
    pub fn with_provider(mut self, provider: impl Into<String>) -> Self {
        self.provider = Some(provider.into());
        self
    }

    /// The tool calls, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.content.iter().filter_map(|block| match block {
            ContentBlock::ToolCall(call) => Some(call),
            _ => None,
        })
    }

    /// Whether the response holds any tool call.
    pub fn has_tool_calls(&self) -> bool {
        self.tool_calls().next().is_some()
    }

    /// The text blocks joined with newlines.
    pub fn text(&self) -> String {
        crate::message::join_text(&self.content)
    }

    /// The response as an assistant message for the conversation, marked as
    /// produced by [`self.provider`](Self::provider) when set, else by `provider`
    /// (pass the asked model's [`Model::provider`]).
    pub fn to_message(&self, provider: &str) -> Message {
        let provider = self.provider.as_deref().unwrap_or(provider);
        Message { role: Role::Assistant, content: self.content.clone(), provider: Some(provider.to_owned()) }
    }
}
