//! OpenAI Chat Completions (`POST {base}/chat/completions`), and any
//! OpenAI-compatible server (vLLM, llama.cpp server, LM Studio, `OpenRouter`,
//! Groq, ...) through its base URL.
//!
//! ```no_run
//! use toolloop::providers::openai::OpenAi;
//!
//! // OPENAI_API_KEY (and optionally OPENAI_BASE_URL) from the environment:
//! let model = OpenAi::from_env()?;
//! // a local compatible server, which needs no key:
//! let local = OpenAi::builder().base_url("http://localhost:8000/v1").model("qwen3").legacy_max_tokens(true).build()?;
//! # Ok::<(), toolloop::BuildError>(())
//! ```

mod convert;
mod prompt_cache;
mod reasoning;
mod stream;
mod wire;

use convert::OpenAiChat;
use stream::ChatStreamDecoder;

pub(crate) use convert::error_body;
pub(crate) use prompt_cache::{PromptCacheSettings, PromptCaching};
pub(crate) use reasoning::openai_effort;
pub(crate) use stream::error_kind;

use super::http::{HttpModel, HttpModelBuilder};
use super::responses::OpenAiResponsesApi;

/// The provider name, as [`Model::provider`](crate::Model::provider) returns it.
pub const PROVIDER: &str = "openai";
/// Where requests go unless a base URL is set.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// The model used unless another is set.
pub const DEFAULT_MODEL: &str = "gpt-4.1-mini";

/// A model over OpenAI Chat Completions (`POST {base}/chat/completions`,
/// bearer key) or a compatible server: [`OpenAi::builder`],
/// [`OpenAi::from_env`], [`OpenAi::builder_from_env`], and the rest of
/// [`HttpModel`]. Tool calls go as `tool_calls` with JSON-string arguments,
/// results as `tool` messages; tool results that failed are sent as
/// `Error: <message>`, since the format has no error flag.
///
/// The key is read from `OPENAI_API_KEY` and may be left out when a base URL
/// is set (`OPENAI_BASE_URL`), for compatible servers that need none.
pub type OpenAi = HttpModel<OpenAiChat>;

/// A model behind the OpenAI Responses API (`POST {base}/responses`), with
/// the same builder, environment variables (`OPENAI_API_KEY`,
/// `OPENAI_BASE_URL`) and default model as [`OpenAi`]; made by
/// [`OpenAi::responses`], `OpenAiResponses::builder()` or
/// `OpenAiResponses::builder_from_env()`.
///
/// Its provider name is `"openai-responses"`: reasoning items and tool calls
/// it made go back only to it, and a switch to another provider (or to the
/// Chat Completions [`OpenAi`]) leaves its encrypted reasoning out and shows
/// its tool calls as text. Stateless by default: every call sends the whole
/// conversation with `store: false` and asks for the reasoning encrypted
/// (`include: ["reasoning.encrypted_content"]`), so nothing is kept on
/// OpenAI's side;
/// [`chain_responses`](HttpModelBuilder::chain_responses) stores
/// responses and sends only new items with `previous_response_id`. Turn
/// reasoning on with
/// [`reasoning`](HttpModelBuilder::reasoning) (`reasoning.effort`, and
/// `reasoning.summary` with [`ReasoningConfig::with_summary`](crate::reasoning::ReasoningConfig::with_summary)).
pub type OpenAiResponses = HttpModel<OpenAiResponsesApi>;

impl OpenAi {
    /// A builder for the Responses API instead of Chat Completions (the same
    /// as `OpenAiResponses::builder()`; `OpenAiResponses::builder_from_env()`
    /// reads the environment first).
    pub fn responses() -> HttpModelBuilder<OpenAiResponsesApi> {
        OpenAiResponses::builder()
    }
}

/// Settings of [`OpenAi`] (Chat Completions) models only.
impl HttpModelBuilder<OpenAiChat> {
    /// Sends the maximum output tokens as the older `max_tokens` field, for
    /// compatible servers that do not know `max_completion_tokens`.
    pub fn legacy_max_tokens(mut self, legacy: bool) -> Self {
        self.format.legacy_max_tokens = legacy;
        self
    }
}
