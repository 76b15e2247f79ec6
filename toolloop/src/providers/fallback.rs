//! Trying a second model when the first keeps failing.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use futures_util::{StreamExt as _, stream};

use crate::model::{
    BoxFuture, BoxStream, Model, ModelError, ModelErrorKind, ModelRequest, ModelResponse, StreamEvent, until_content,
};

type Predicate = dyn Fn(&ModelError) -> bool + Send + Sync;

/// A model that asks its models in order, moving on to the next one when a
/// call fails with a persistent provider error (by default: one that is
/// [retryable](ModelError::is_retryable) and outlived the provider's own
/// retries, or a malformed response).
///
/// # How the request is re-targeted
///
/// A request carries the raw history, and each model sends its provider its
/// own view of it ([`ModelRequest::view_for`]), so `Fallback` passes the
/// same request to each: another provider's tool calls and results reach a
/// model as text, its own stay native. The response carries the provider
/// that actually answered ([`ModelResponse::provider`]), so the assistant
/// message appended to the conversation is tagged with it.
///
/// With [`cool_down`](Fallback::cool_down), a model that failed is skipped
/// for a while, so a run does not pay a dead primary's whole retry schedule
/// on every iteration.
///
/// # In traces
///
/// A call through the chain is one `chat` span, as a call the provider
/// retried is: the models it asked make their own spans under it (the
/// HTTP models' `model_call` spans). When the chain mixes providers, the span's
/// `gen_ai.provider.name` (and the metrics' provider) is the provider that
/// answered, or that returned the error, recorded once the call is over
/// ([`Model::provider_is_fixed`]); a call cut short (cancelled, out of time)
/// names the first model's. `gen_ai.request.model` and the span's name stay
/// the first model's, the one the request was made for;
/// `gen_ai.response.model` names the model that answered. The run's
/// `invoke_agent` span names the first model's provider, the one the run was
/// given; [`RunMetadata::models_used`](crate::run::RunMetadata::models_used)
/// counts the models that answered.
///
/// ```
/// use std::sync::Arc;
/// use toolloop::{Model, ModelError, ModelRequest, ModelResponse};
/// use toolloop::model::{BoxFuture, ModelErrorKind};
/// use toolloop::providers::Fallback;
///
/// struct Down;
/// impl Model for Down {
///     fn provider(&self) -> &str { "anthropic" }
///     fn name(&self) -> &str { "down" }
///     fn complete<'a>(&'a self, _: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
///         Box::pin(async { Err(ModelError::new(ModelErrorKind::Overloaded, "anthropic", "overloaded")) })
///     }
/// }
/// struct Up;
/// impl Model for Up {
///     fn provider(&self) -> &str { "openai" }
///     fn name(&self) -> &str { "up" }
///     fn complete<'a>(&'a self, _: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
///         Box::pin(async { Ok(ModelResponse::from_text("hello")) })
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let model = Fallback::new(Down).then(Up);
/// let response = model.complete(ModelRequest::new(&[])).await.unwrap();
/// assert_eq!(response.provider.as_deref(), Some("openai"));
/// # });
/// ```
#[derive(Clone)]
pub struct Fallback {
    models: Vec<Arc<dyn Model>>,
    fall_back_when: Arc<Predicate>,
    cool_down: Option<Duration>,
    /// Per model: skip it until then (after a failure, with a cool-down).
    skip_until: Arc<Mutex<Vec<Option<Instant>>>>,
}

impl fmt::Debug for Fallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let models: Vec<String> = self.models.iter().map(|m| format!("{}/{}", m.provider(), m.name())).collect();
        f.debug_struct("Fallback").field("models", &models).finish_non_exhaustive()
    }
}

impl Fallback {
    /// A fallback chain starting with `primary`.
    pub fn new(primary: impl Model + 'static) -> Self {
        Self {
            models: vec![Arc::new(primary)],
            fall_back_when: Arc::new(Self::persistent),
            cool_down: None,
            skip_until: Arc::new(Mutex::new(vec![None])),
        }
    }

    /// After a model fails with an error that falls back, skip it for
    /// `period` and go straight to the next one (the last model is never
    /// skipped). Off by default: every call starts with the first model.
    pub fn cool_down(mut self, period: Duration) -> Self {
        self.cool_down = Some(period);
        self
    }

    /// Adds `model` as the next one to try.
    #[allow(clippy::should_implement_trait)] // reads as "this model, then that one"
    pub fn then(mut self, model: impl Model + 'static) -> Self {
        self.models.push(Arc::new(model));
        // A new chain: its cool-downs are its own, not shared with clones of the old one.
        self.skip_until = Arc::new(Mutex::new(vec![None; self.models.len()]));
        self
    }

    fn cooling(&self, index: usize) -> bool {
        let skip_until = self.skip_until.lock().unwrap_or_else(PoisonError::into_inner);
        skip_until[index].is_some_and(|until| Instant::now() < until)
    }

    fn failed(&self, index: usize) {
        if let Some(period) = self.cool_down {
            self.skip_until.lock().unwrap_or_else(PoisonError::into_inner)[index] = Some(Instant::now() + period);
        }
    }

    /// Sets which errors make the chain try the next model (the default is
    /// [`Fallback::persistent`]); any other error is returned at once.
    pub fn fall_back_when(mut self, predicate: impl Fn(&ModelError) -> bool + Send + Sync + 'static) -> Self {
        self.fall_back_when = Arc::new(predicate);
        self
    }

    /// The default predicate: retryable errors (rate limits, overload, server
    /// errors, timeouts, connection failures), which reach here only once the
    /// provider's own retries are spent, and malformed responses.
    pub fn persistent(error: &ModelError) -> bool {
        error.is_retryable() || error.kind() == ModelErrorKind::MalformedResponse
    }

    /// The models, in the order they are tried.
    pub fn models(&self) -> impl Iterator<Item = &dyn Model> {
        self.models.iter().map(|model| &**model)
    }
}

// Not listed under "other types implement `Model`": its message names the constructors.
#[diagnostic::do_not_recommend]
impl Model for Fallback {
    /// The first model's provider: requests are built for it. The one that
    /// answered a call is its response's [`provider`](ModelResponse::provider).
    fn provider(&self) -> &str {
        self.models[0].provider()
    }

    /// The first model's name.
    fn name(&self) -> &str {
        self.models[0].name()
    }

    /// Whether every model of the chain has the first one's provider: if
    /// not, which provider answers is known only once a call is over.
    fn provider_is_fixed(&self) -> bool {
        let provider = self.provider();
        self.models.iter().all(|model| model.provider_is_fixed() && model.provider() == provider)
    }

    /// What every model of the chain can take: a schema goes to whichever answers.
    fn response_schema_support(&self, schema: &crate::model::ResponseSchema) -> crate::model::ResponseSchemaSupport {
        use crate::model::ResponseSchemaSupport as Support;
        self.models.iter().map(|model| model.response_schema_support(schema)).fold(
            Support::WithTools,
            |all, one| match (all, one) {
                (Support::Unsupported(reason), _) | (_, Support::Unsupported(reason)) => Support::Unsupported(reason),
                (Support::Unknown, _) | (_, Support::Unknown) => Support::Unknown,
                (Support::WithoutTools, _) | (_, Support::WithoutTools) => Support::WithoutTools,
                _ => Support::WithTools,
            },
        )
    }

    fn complete<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(async move {
            let last = self.models.len() - 1;
            for (index, model) in self.models.iter().enumerate() {
                if index < last && self.cooling(index) {
                    continue;
                }
                // The raw history: each model builds its own provider's view of it.
                match model.complete(request).await {
                    Ok(mut response) => {
                        response.provider.get_or_insert_with(|| model.provider().to_owned());
                        response.model.get_or_insert_with(|| model.name().to_owned());
                        return Ok(response);
                    }
                    Err(error) if index < last && (self.fall_back_when)(&error) => {
                        self.failed(index);
                        let next = &self.models[index + 1];
                        tracing::warn!(
                            failed = model.name(),
                            next = next.name(),
                            next_provider = next.provider(),
                            %error,
                            "model failed; falling back",
                        );
                    }
                    Err(error) => return Err(error),
                }
            }
            unreachable!("a fallback chain holds at least one model and returns from its last")
        })
    }

    /// Streams from the first model that answers: a model whose stream
    /// fails before its first content (nothing shown yet) is left for the
    /// next as [`complete`](Model::complete) leaves it; a failure after
    /// content ends the stream.
    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> BoxStream<'a, Result<StreamEvent, ModelError>> {
        let opened = async move {
            let last = self.models.len() - 1;
            for (index, model) in self.models.iter().enumerate() {
                if index < last && self.cooling(index) {
                    continue;
                }
                let mut events = model.stream(request);
                match until_content(&mut events).await {
                    Ok(mut held) => {
                        for event in &mut held {
                            if let StreamEvent::Started { provider, model: name, .. } = event {
                                provider.get_or_insert_with(|| model.provider().to_owned());
                                name.get_or_insert_with(|| model.name().to_owned());
                            }
                        }
                        return (held.into_iter().map(Ok).collect::<Vec<_>>(), Some(events));
                    }
                    Err(error) if index < last && (self.fall_back_when)(&error) => {
                        self.failed(index);
                        let next = &self.models[index + 1];
                        tracing::warn!(
                            failed = model.name(),
                            next = next.name(),
                            next_provider = next.provider(),
                            %error,
                            "model stream failed before its first content; falling back",
                        );
                    }
                    Err(error) => return (vec![Err(error)], None),
                }
            }
            unreachable!("a fallback chain holds at least one model and returns from its last")
        };
        Box::pin(stream::once(opened).flat_map(|(held, rest)| stream::iter(held).chain(stream::iter(rest).flatten())))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use serde_json::json;

    use super::Fallback;
    use crate::message::{ContentBlock, Message, Role, ToolCall, ToolResult};
    use crate::model::{BoxFuture, Model, ModelError, ModelErrorKind, ModelRequest, ModelResponse};

    /// A model that records the messages it was sent and answers from a script.
    struct Recording {
        provider: &'static str,
        outcome: Result<&'static str, ModelErrorKind>,
        seen: Mutex<Vec<Vec<Message>>>,
    }

    impl Recording {
        fn new(provider: &'static str, outcome: Result<&'static str, ModelErrorKind>) -> std::sync::Arc<Self> {
            std::sync::Arc::new(Self { provider, outcome, seen: Mutex::new(Vec::new()) })
        }
    }

    impl Model for Recording {
        fn provider(&self) -> &str {
            self.provider
        }
        fn name(&self) -> &str {
            self.provider
        }
        fn complete<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
            self.seen.lock().unwrap().push(request.view_for(self.provider).into_owned());
            let outcome =
                self.outcome.map(ModelResponse::from_text).map_err(|kind| ModelError::new(kind, self.provider, "no"));
            Box::pin(async move { outcome })
        }
    }

    fn history() -> Vec<Message> {
        vec![
            Message::user("weather?"),
            Message::new(
                Role::Assistant,
                vec![ContentBlock::ToolCall(ToolCall::new("toolu_1", "weather", json!({"city": "Paris"})))],
            )
            .with_provider("anthropic"),
            Message::from_tool_results([ToolResult::success("toolu_1", "sunny")]),
        ]
    }

    #[tokio::test]
    async fn a_persistent_error_falls_back_and_the_next_provider_sees_text() {
        let primary = Recording::new("anthropic", Err(ModelErrorKind::Overloaded));
        let secondary = Recording::new("openai", Ok("it is sunny"));
        let model = Fallback::new(primary.clone()).then(secondary.clone());
        assert_eq!(model.provider(), "anthropic");
        let messages = history();
        let response = model.complete(ModelRequest::new(&messages)).await.unwrap();
        assert_eq!(response.text(), "it is sunny");
        assert_eq!(response.provider.as_deref(), Some("openai"));
        assert_eq!(response.to_message(model.provider()).provider.as_deref(), Some("openai"));
        // This request offers no tools, so neither model is sent tool blocks.
        assert_eq!(primary.seen.lock().unwrap()[0][1].text(), "[called tool `weather` with {\"city\":\"Paris\"}]");
        let seen = &secondary.seen.lock().unwrap()[0];
        assert_eq!(seen[1].text(), "[called tool `weather` with {\"city\":\"Paris\"}]");
        assert_eq!(seen[2].text(), "[result of tool `weather`: sunny]");
    }

    #[tokio::test]
    async fn other_errors_are_returned_without_falling_back() {
        let primary = Recording::new("anthropic", Err(ModelErrorKind::Authentication));
        let secondary = Recording::new("openai", Ok("unused"));
        let model = Fallback::new(primary).then(secondary.clone());
        let error = model.complete(ModelRequest::new(&[])).await.unwrap_err();
        assert_eq!(error.kind(), ModelErrorKind::Authentication);
        assert!(secondary.seen.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn when_every_model_fails_the_last_error_is_returned() {
        let model = Fallback::new(Recording::new("anthropic", Err(ModelErrorKind::Overloaded)))
            .then(Recording::new("openai", Err(ModelErrorKind::RateLimited)));
        let error = model.complete(ModelRequest::new(&[])).await.unwrap_err();
        assert_eq!((error.kind(), error.provider()), (ModelErrorKind::RateLimited, "openai"));
    }

    #[test]
    fn the_provider_is_fixed_only_when_every_model_has_the_first_ones() {
        let anthropic = || Recording::new("anthropic", Ok("hi"));
        assert!(Fallback::new(anthropic()).provider_is_fixed(), "one model");
        assert!(Fallback::new(anthropic()).then(anthropic()).provider_is_fixed(), "one provider");
        let mixed = Fallback::new(anthropic()).then(Recording::new("openai", Ok("hi")));
        assert!(!mixed.provider_is_fixed());
        // A chain holding a chain that routes routes too, though every provider() says anthropic.
        let nested = Fallback::new(anthropic()).then(mixed.clone());
        assert_eq!(nested.models().map(Model::provider).collect::<Vec<_>>(), ["anthropic", "anthropic"]);
        assert!(!nested.provider_is_fixed());
        // Through the pointers a run holds it by.
        let shared: std::sync::Arc<dyn Model> =
            std::sync::Arc::new(Fallback::new(anthropic()).then(Recording::new("openai", Ok("hi"))));
        assert!(!shared.provider_is_fixed() && !Box::new(&shared).provider_is_fixed());
    }

    #[tokio::test]
    async fn the_predicate_is_configurable() {
        let secondary = Recording::new("openai", Ok("second"));
        let model = Fallback::new(Recording::new("anthropic", Err(ModelErrorKind::Authentication)))
            .then(secondary)
            .fall_back_when(|_| true);
        assert_eq!(model.complete(ModelRequest::new(&[])).await.unwrap().text(), "second");
    }
}
