//! What a model answered.

use super::ModelError;
use super::stream::{ResponseAccumulator, StreamEvent};
use crate::message::{ContentBlock, Message, Role, ToolCall};
use crate::reasoning::Reasoning;
use crate::stop_reason::StopReason;
use crate::usage::Usage;

/// What a model answered. It serialises (a durable
/// [journal](crate::run::journal) records it whole).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct ModelResponse {
    /// Reasoning, text and tool calls, in the order the model produced them.
    pub content: Vec<ContentBlock>,
    /// Why the model stopped.
    pub stop_reason: StopReason,
    /// Tokens this call consumed.
    pub usage: Usage,
    /// The model that answered, when the provider says. A run's
    /// [`Event::IterationFinished`](crate::run::Event::IterationFinished)
    /// always has it (and [`provider`](Self::provider)): the run fills in
    /// the model it called when the response does not say.
    pub model: Option<String>,
    /// The provider that produced this response, when it may differ from the
    /// [`Model::provider`](crate::Model::provider) that was asked (a [`Fallback`](crate::providers::Fallback)
    /// that answered with its second model). [`to_message`](Self::to_message)
    /// prefers it, so the tool calls in history are tagged with the provider
    /// that really made them.
    pub provider: Option<String>,
    /// The provider's id of this response (Anthropic `msg_…`, OpenAI
    /// `chatcmpl-…`), when it gives one; traced as `gen_ai.response.id`.
    pub id: Option<String>,
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
        Self { content, stop_reason, usage: Usage::default(), model: None, provider: None, id: None }
    }

    /// The response a streamed answer folds into: the one
    /// [`Model::complete`](crate::Model::complete) returns for the answer
    /// [`Model::stream`](crate::Model::stream) streams. Text and reasoning
    /// blocks, tool calls with their arguments parsed (empty text is an
    /// empty object; text that is not JSON is kept as a JSON string, see
    /// [`ToolCall::input`]), stop reason, usage, model and provider.
    ///
    /// The first error ends it: the stream's own, or a
    /// [`ModelErrorKind::MalformedResponse`](super::ModelErrorKind::MalformedResponse)
    /// for events that break the stream's rules (a tool call delta before
    /// the call started, a block whose kind changes, anything after
    /// [`Finished`](StreamEvent::Finished)), or a
    /// [`Connection`](super::ModelErrorKind::Connection) error for a stream
    /// that ends before `Finished`. The error carries the usage reported
    /// before it ([`ModelError::usage`]).
    ///
    /// ```
    /// use toolloop::testing::ScriptedModel;
    /// use toolloop::{Model, ModelRequest, ModelResponse};
    ///
    /// # tokio_test::block_on(async {
    /// let model = ScriptedModel::new().respond(ModelResponse::from_text("Hello"));
    /// let response = ModelResponse::from_stream(model.stream(ModelRequest::new(&[]))).await?;
    /// assert_eq!(response.text(), "Hello");
    /// # Ok::<(), toolloop::ModelError>(())
    /// # }).unwrap();
    /// ```
    pub async fn from_stream<S>(stream: S) -> Result<Self, ModelError>
    where
        S: futures_util::Stream<Item = Result<StreamEvent, ModelError>>,
    {
        ResponseAccumulator::new().collect(stream).await
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

    /// Sets the provider's id of the response.
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
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

    /// The reasoning blocks, in order.
    pub fn reasoning(&self) -> impl Iterator<Item = &Reasoning> {
        crate::message::reasoning_of(&self.content)
    }

    /// The readable reasoning (thinking text, else summaries) joined with
    /// newlines; empty when there is none or it is all opaque.
    pub fn reasoning_text(&self) -> String {
        crate::message::join_reasoning(&self.content)
    }

    /// The response as an assistant message for the conversation, marked as
    /// produced by [`self.provider`](Self::provider) when set, else by `provider`
    /// (pass the asked model's [`Model::provider`](crate::Model::provider)).
    pub fn to_message(&self, provider: &str) -> Message {
        let provider = self.provider.as_deref().unwrap_or(provider);
        Message::new(Role::Assistant, self.content.clone()).with_provider(provider)
    }
}
