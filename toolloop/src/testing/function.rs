//! A model that is a closure.

use std::fmt;
use std::sync::Arc;

use super::{RecordedRequest, TEST_PROVIDER};
use crate::model::{BoxFuture, Model, ModelError, ModelRequest, ModelResponse};

type Respond = dyn Fn(&RecordedRequest) -> Result<ModelResponse, ModelError> + Send + Sync;

/// A model whose answer is computed by a closure from the request.
///
/// Handy when the answer depends on what the model was sent, for example
/// echoing the last tool result back.
///
/// ```
/// use toolloop::testing::FunctionModel;
/// use toolloop::ModelResponse;
///
/// let model = FunctionModel::new(|request| Ok(ModelResponse::from_text(format!("{} messages", request.messages.len()))));
/// # let _ = model;
/// ```
#[derive(Clone)]
pub struct FunctionModel {
    respond: Arc<Respond>,
    provider: Arc<str>,
}

impl FunctionModel {
    /// A model answering with `respond`.
    pub fn new(
        respond: impl Fn(&RecordedRequest) -> Result<ModelResponse, ModelError> + Send + Sync + 'static,
    ) -> Self {
        Self { respond: Arc::new(respond), provider: Arc::from(TEST_PROVIDER) }
    }

    /// Reports `provider` instead of [`TEST_PROVIDER`], so a test (or an
    /// example) can play two providers and watch a conversation switch
    /// between them: each sees the other's tool calls as text
    /// ([`ModelRequest::view_for`]).
    pub fn with_provider(mut self, provider: impl Into<Arc<str>>) -> Self {
        self.provider = provider.into();
        self
    }
}

impl fmt::Debug for FunctionModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FunctionModel").field("provider", &self.provider).finish_non_exhaustive()
    }
}

// Not listed under "other types implement `Model`": its message names the constructors.
#[diagnostic::do_not_recommend]
impl Model for FunctionModel {
    fn provider(&self) -> &str {
        &self.provider
    }

    fn name(&self) -> &'static str {
        "function"
    }

    /// A test model answers as scripted, so it takes any schema, with tools.
    fn response_schema_support(&self, _: &crate::model::ResponseSchema) -> crate::model::ResponseSchemaSupport {
        crate::model::ResponseSchemaSupport::WithTools
    }

    fn complete<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let answer = (self.respond)(&RecordedRequest::sent_to(self.provider(), &request));
        Box::pin(std::future::ready(answer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;

    #[tokio::test]
    async fn answers_from_the_request() {
        let model =
            FunctionModel::new(|request| Ok(ModelResponse::from_text(format!("echo: {}", request.last_text()))));
        let messages = [Message::user("ping")];
        let reply = model.complete(ModelRequest::new(&messages)).await.unwrap();
        assert_eq!(reply.text(), "echo: ping");
        assert_eq!(model.provider(), TEST_PROVIDER);
    }

    #[tokio::test]
    async fn plays_another_provider_whose_view_flattens_the_test_providers_calls() {
        use crate::{ContentBlock, Conversation, ToolCall, ToolResult};
        let mut conversation = Conversation::new();
        conversation.push_user("weather?");
        conversation.push(
            ModelResponse::from_tool_calls([ToolCall::new("1", "weather", serde_json::json!({}))])
                .to_message(TEST_PROVIDER),
        );
        conversation.push(Message::from_tool_results([ToolResult::success("1", "sunny")]));
        let model = FunctionModel::new(|request| {
            let calls =
                request.messages.iter().flat_map(|m| &m.content).filter(|b| matches!(b, ContentBlock::ToolCall(_)));
            Ok(ModelResponse::from_text(format!("{} tool calls", calls.count())))
        })
        .with_provider("other");
        assert_eq!(model.provider(), "other");
        let view = conversation.view_for(model.provider());
        let reply = model.complete(ModelRequest::new(&view)).await.unwrap();
        assert_eq!(reply.text(), "0 tool calls", "the test provider's call reached `other` as text");
    }
}
