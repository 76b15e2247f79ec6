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
/// let model = FunctionModel::new(|request| Ok(ModelResponse::text(format!("{} messages", request.messages.len()))));
/// # let _ = model;
/// ```
#[derive(Clone)]
pub struct FunctionModel {
    respond: Arc<Respond>,
}

impl FunctionModel {
    /// A model answering with `respond`.
    pub fn new(
        respond: impl Fn(&RecordedRequest) -> Result<ModelResponse, ModelError> + Send + Sync + 'static,
    ) -> Self {
        Self { respond: Arc::new(respond) }
    }
}

impl fmt::Debug for FunctionModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FunctionModel").finish_non_exhaustive()
    }
}

impl Model for FunctionModel {
    fn provider(&self) -> &str {
        TEST_PROVIDER
    }

    fn name(&self) -> &'static str {
        "function"
    }

    fn complete<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let answer = (self.respond)(&RecordedRequest::from(&request));
        Box::pin(std::future::ready(answer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;

    #[tokio::test]
    async fn answers_from_the_request() {
        let model = FunctionModel::new(|request| Ok(ModelResponse::text(format!("echo: {}", request.last_text()))));
        let messages = [Message::user("ping")];
        let reply = model.complete(ModelRequest::new(&messages)).await.unwrap();
        assert_eq!(reply.text_content(), "echo: ping");
        assert_eq!(model.provider(), TEST_PROVIDER);
    }
}
