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
//! # Ok::<(), toolloop::providers::ConfigError>(())
//! ```

mod convert;
mod reasoning;
mod stream;
mod wire;

use stream::ChatStreamDecoder;

pub(crate) use convert::error_body;
pub(crate) use reasoning::openai_effort;
pub(crate) use stream::error_kind;

use super::http::{HttpModel, HttpModelBuilder};

/// The provider name, as [`Model::provider`](crate::Model::provider) returns it.
pub const PROVIDER: &str = "openai";
/// Where requests go unless a base URL is set.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// The model used unless another is set.
pub const DEFAULT_MODEL: &str = "gpt-4.1-mini";

/// A model over OpenAI Chat Completions or a compatible server:
/// [`OpenAi::builder`], [`OpenAi::from_env`], and the rest of [`HttpModel`].
///
/// The key is read from `OPENAI_API_KEY` and may be left out when a base URL
/// is set (`OPENAI_BASE_URL`), for compatible servers that need none.
pub type OpenAi = HttpModel<OpenAiChat>;

/// Configures an [`OpenAi`] model.
pub type OpenAiBuilder = HttpModelBuilder<OpenAiChat>;

/// A model behind the OpenAI Responses API (`POST {base}/responses`), with
/// the same builder, environment variables (`OPENAI_API_KEY`,
/// `OPENAI_BASE_URL`) and default model as [`OpenAi`]; made by
/// [`OpenAi::responses`] or `OpenAiResponses::builder()`.
///
/// Its provider name is `"openai-responses"`: reasoning items and tool calls
/// it made go back only to it, and a switch to another provider (or to the
/// Chat Completions [`OpenAi`]) leaves its encrypted reasoning out and shows
/// its tool calls as text. Stateless by default: every call sends the whole
/// conversation with `store: false` and asks for the reasoning encrypted
/// (`include: ["reasoning.encrypted_content"]`), so nothing is kept on
/// OpenAI's side;
/// [`chain_responses`](OpenAiResponsesBuilder::chain_responses) stores
/// responses and sends only new items with `previous_response_id`. Turn
/// reasoning on with
/// [`reasoning`](HttpModelBuilder::reasoning) (`reasoning.effort`, and
/// `reasoning.summary` with [`ReasoningConfig::with_summary`](crate::ReasoningConfig::with_summary)).
pub type OpenAiResponses = HttpModel<OpenAiResponsesApi>;

/// Configures an [`OpenAiResponses`] model.
pub type OpenAiResponsesBuilder = HttpModelBuilder<OpenAiResponsesApi>;

pub use super::responses::OpenAiResponsesApi;

impl OpenAi {
    /// A builder for the Responses API instead of Chat Completions:
    /// `OpenAi::responses().from_env()`-style configuration is
    /// [`OpenAiResponsesBuilder::from_env`].
    pub fn responses() -> OpenAiResponsesBuilder {
        OpenAiResponses::builder()
    }
}

/// The OpenAI Chat Completions wire format (`POST {base}/chat/completions`,
/// bearer key): tool calls as `tool_calls` with JSON-string arguments,
/// results as `tool` messages. Tool results that failed are sent as
/// `Error: <message>`, since the format has no error flag.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct OpenAiChat {
    legacy_max_tokens: bool,
    prompt_cache_key: Option<String>,
    prompt_cache_retention: Option<PromptCacheRetention>,
}

/// How long OpenAI keeps cached prompt prefixes (`prompt_cache_retention`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PromptCacheRetention {
    /// `in_memory`: minutes, the API's default.
    InMemory,
    /// `24h`: up to a day, on the models that offer it.
    Hours24,
}

impl PromptCacheRetention {
    /// The API's name for it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::InMemory => "in_memory",
            Self::Hours24 => "24h",
        }
    }
}

impl OpenAiBuilder {
    /// Sets `prompt_cache_key`, which OpenAI uses with the prompt's prefix to
    /// route requests to the machines holding its cache: one key per
    /// workload that shares a long prefix (a system prompt and tools) raises
    /// the hit rate. OpenAI caches every prompt of 1,024 tokens or more on
    /// its own; request bodies keep their prefixes byte-stable from call to
    /// call for it.
    pub fn prompt_cache_key(mut self, key: impl Into<String>) -> Self {
        self.format.prompt_cache_key = Some(key.into());
        self
    }

    /// Sets how long cached prompt prefixes are kept (`prompt_cache_retention`;
    /// default: the API's). Servers that do not know the field may reject it.
    pub fn prompt_cache_retention(mut self, retention: PromptCacheRetention) -> Self {
        self.format.prompt_cache_retention = Some(retention);
        self
    }

    /// Sends the maximum output tokens as the older `max_tokens` field, for
    /// compatible servers that do not know `max_completion_tokens`.
    pub fn legacy_max_tokens(mut self, legacy: bool) -> Self {
        self.format.legacy_max_tokens = legacy;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::{OpenAi, OpenAiBuilder};
    use crate::Model;
    use crate::providers::ConfigError;

    #[test]
    fn configuration_comes_from_the_environment() {
        let env = |name: &str| match name {
            "OPENAI_API_KEY" => Some("sk-secret".to_owned()),
            "OPENAI_BASE_URL" => Some("http://127.0.0.1:9/v1".to_owned()),
            _ => None,
        };
        let model = OpenAiBuilder::from_lookup(&env).build().unwrap();
        assert_eq!(model.endpoint(), "http://127.0.0.1:9/v1/chat/completions");
        assert_eq!(model.with_model("gpt-other").name(), "gpt-other");
        let missing = OpenAiBuilder::from_lookup(&|_| None).build().unwrap_err();
        assert!(matches!(missing, ConfigError::MissingApiKey { variable: "OPENAI_API_KEY" }));
        // A compatible server may need no key.
        let local = |name: &str| (name == "OPENAI_BASE_URL").then(|| "http://localhost:8000/v1".to_owned());
        assert!(OpenAiBuilder::from_lookup(&local).build().is_ok());
    }

    #[test]
    fn the_key_never_shows_in_debug_output() {
        let model = OpenAi::builder().api_key("sk-secret").build().unwrap();
        assert!(!format!("{model:?}").contains("sk-secret"));
        assert!(!format!("{:?}", OpenAi::builder().api_key("sk-secret")).contains("sk-secret"));
    }
}
