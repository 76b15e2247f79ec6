//! The provider-neutral model interface: what a run asks a model and what
//! it gets back.
//!
//! [`Model`], [`ModelRequest`], [`ModelResponse`] and [`ModelError`] are
//! also at the crate root. The rest is for code that implements or wraps a
//! model: the streamed form of a response ([`BoxStream`] of
//! [`StreamEvent`]s, put back together by [`ModelResponse::from_stream`]; the
//! partial JSON parser behind streamed tool arguments,
//! [`parse_partial_json`]), prompt caching ([`PromptCache`], [`CacheTtl`]),
//! native structured output ([`ResponseSchema`]) and the kinds of model
//! errors ([`ModelErrorKind`]). The reasoning settings are in
//! [`reasoning`](crate::reasoning).

pub(crate) mod body_cache;
mod error;
mod partial_json;
mod prompt_cache;
mod request;
mod response;
mod response_schema;
pub(crate) mod stream;

use std::sync::Arc;

pub(crate) use crate::reasoning::ReasoningConfig;
pub(crate) use body_cache::BodyCache;
#[cfg(feature = "http")]
pub(crate) use error::ContextOverflow;
pub use error::{ModelError, ModelErrorKind};
pub use partial_json::parse_partial_json;
pub use prompt_cache::{CacheTtl, PromptCache};
pub use request::ModelRequest;
pub use response::ModelResponse;
pub use response_schema::{ResponseSchema, ResponseSchemaSupport};
pub(crate) use stream::ResponseAccumulator;
pub use stream::StreamEvent;
pub(crate) use stream::chunk_response;
pub(crate) use stream::until_content;

/// futures-util's boxed, sendable future, as [`Model::complete`] and
/// [`DynTool::call`](crate::tool::DynTool::call) return it: re-exported so
/// that an implementation names it without depending on futures-util.
#[doc(no_inline)]
pub use futures_util::future::BoxFuture;
/// futures-util's boxed, sendable stream, as [`Model::stream`] returns it
/// (of `Result<StreamEvent, ModelError>`): re-exported so that an
/// implementation names it without depending on futures-util.
#[doc(no_inline)]
pub use futures_util::stream::BoxStream;

/// How many characters of text (or argument JSON) each delta of the default
/// [`Model::stream`] carries.
const DEFAULT_CHUNK: usize = 64;

/// A language model that can call tools: one request in, one response out.
///
/// Implemented by the HTTP providers and by the test models. The trait is
/// object safe, so a run can switch models or fall back to another one
/// through `Arc<dyn Model>`.
///
/// A request carries the raw history ([`ModelRequest::messages`]); a model
/// sends its provider the view [`ModelRequest::view_for`] builds for it, so
/// that a wrapper routing to several providers (like
/// [`Fallback`](crate::providers::Fallback)) passes one request to each.
///
/// ```
/// use toolloop::{Model, ModelError, ModelRequest, ModelResponse};
/// use toolloop::model::BoxFuture;
///
/// struct Echo;
///
/// impl Model for Echo {
///     fn provider(&self) -> &str { "echo" }
///     fn name(&self) -> &str { "echo-1" }
///     fn complete<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
///         Box::pin(async move {
///             let view = request.view_for(self.provider());
///             let last = view.last().map(|m| m.text()).unwrap_or_default();
///             Ok(ModelResponse::from_text(last))
///         })
///     }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a model: `.model(..)` takes a provider, not a model's name",
    label = "not a `Model`",
    note = "make one from the environment, in `toolloop::providers`: `Anthropic::from_env()?`, \
            `OpenAi::from_env()?`, `Ollama::from_env()?` or `Gemini::from_env()?`",
    note = "to choose the model by name, set it on the provider's builder: \
            `Anthropic::builder().model(\"claude-sonnet-4-5\").build()?`; in tests, use `toolloop::testing::ScriptedModel`"
)]
pub trait Model: Send + Sync {
    /// The wire format this model speaks (`"anthropic"`, `"openai"`,
    /// `"ollama"`, ...). Tool calls produced through one provider are shown
    /// as text to another (see [`ModelRequest::view_for`]).
    fn provider(&self) -> &str;

    /// The model's name, for logs and metadata.
    fn name(&self) -> &str;

    /// Whether every call is answered by [`provider`](Self::provider) (the
    /// default), or the provider is chosen per call, as a
    /// [`Fallback`](crate::providers::Fallback) over several providers
    /// chooses it. Such a model names the provider that answered in
    /// [`ModelResponse::provider`] (and the one that failed in
    /// [`ModelError::provider`]); the call's `chat` span then records its
    /// `gen_ai.provider.name` from there when the call ends, instead of
    /// from `provider` when it starts. A model that wraps another (adds
    /// logging, say) forwards it, as `Arc`, `Box` and `&` do.
    fn provider_is_fixed(&self) -> bool {
        true
    }

    /// Sends one request and waits for the whole response.
    fn complete<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>>;

    /// Sends one request and streams the response as it arrives: collecting
    /// the events with [`ModelResponse::from_stream`] gives what
    /// [`complete`](Self::complete) returns.
    ///
    /// The default waits for [`complete`](Self::complete) and replays its
    /// response in chunks ([`chunk_response`]), so every model streams; the
    /// HTTP providers stream from the wire.
    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> BoxStream<'a, Result<StreamEvent, ModelError>> {
        replay(self.complete(request))
    }

    /// Whether this model can be sent `schema` as its native structured
    /// output ([`ModelRequest::response_schema`]), and whether it may still
    /// call tools then. Typed agents ask it when they are built, to reject
    /// (or, in [`OutputMode::Auto`](crate::agent::OutputMode::Auto), avoid)
    /// a native output the model cannot give. The default is
    /// [`ResponseSchemaSupport::Unknown`].
    fn response_schema_support(&self, schema: &ResponseSchema) -> ResponseSchemaSupport {
        let _ = schema;
        ResponseSchemaSupport::Unknown
    }
}

/// The stream of a whole response once `complete` gives it.
pub(crate) fn replay(
    complete: BoxFuture<'_, Result<ModelResponse, ModelError>>,
) -> BoxStream<'_, Result<StreamEvent, ModelError>> {
    use futures_util::StreamExt as _;
    Box::pin(futures_util::stream::once(complete).flat_map(|outcome| {
        let events: Vec<Result<StreamEvent, ModelError>> = match outcome {
            Ok(response) => chunk_response(&response, DEFAULT_CHUNK).into_iter().map(Ok).collect(),
            Err(error) => vec![Err(error)],
        };
        futures_util::stream::iter(events)
    }))
}

#[diagnostic::do_not_recommend]
impl<M: Model + ?Sized> Model for Arc<M> {
    fn provider(&self) -> &str {
        (**self).provider()
    }
    fn name(&self) -> &str {
        (**self).name()
    }
    fn provider_is_fixed(&self) -> bool {
        (**self).provider_is_fixed()
    }
    fn complete<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        (**self).complete(request)
    }
    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> BoxStream<'a, Result<StreamEvent, ModelError>> {
        (**self).stream(request)
    }
    fn response_schema_support(&self, schema: &ResponseSchema) -> ResponseSchemaSupport {
        (**self).response_schema_support(schema)
    }
}

#[diagnostic::do_not_recommend]
impl<M: Model + ?Sized> Model for Box<M> {
    fn provider(&self) -> &str {
        (**self).provider()
    }
    fn name(&self) -> &str {
        (**self).name()
    }
    fn provider_is_fixed(&self) -> bool {
        (**self).provider_is_fixed()
    }
    fn complete<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        (**self).complete(request)
    }
    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> BoxStream<'a, Result<StreamEvent, ModelError>> {
        (**self).stream(request)
    }
    fn response_schema_support(&self, schema: &ResponseSchema) -> ResponseSchemaSupport {
        (**self).response_schema_support(schema)
    }
}

#[diagnostic::do_not_recommend]
impl<M: Model + ?Sized> Model for &M {
    fn provider(&self) -> &str {
        (**self).provider()
    }
    fn name(&self) -> &str {
        (**self).name()
    }
    fn provider_is_fixed(&self) -> bool {
        (**self).provider_is_fixed()
    }
    fn complete<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        (**self).complete(request)
    }
    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> BoxStream<'a, Result<StreamEvent, ModelError>> {
        (**self).stream(request)
    }
    fn response_schema_support(&self, schema: &ResponseSchema) -> ResponseSchemaSupport {
        (**self).response_schema_support(schema)
    }
}
