//! The Anthropic Messages API (`POST /v1/messages`).
//!
//! ```no_run
//! use toolloop::providers::anthropic::Anthropic;
//!
//! // ANTHROPIC_API_KEY (and optionally ANTHROPIC_BASE_URL) from the environment:
//! let model = Anthropic::from_env()?;
//! // or everything from code:
//! let model = Anthropic::builder().api_key("sk-ant-...").model("claude-opus-4-1").max_tokens(8192).build()?;
//! # Ok::<(), toolloop::providers::ConfigError>(())
//! ```

mod convert;
mod output_schema;
mod reasoning;
mod stream;

use stream::MessagesStreamDecoder;
mod wire;

use super::http::{HttpModel, HttpModelBuilder};
use crate::model::PromptCache;

/// The provider name, as [`Model::provider`](crate::Model::provider) returns it.
pub const PROVIDER: &str = "anthropic";
/// Where requests go unless a base URL is set.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The model used unless another is set.
pub const DEFAULT_MODEL: &str = "claude-sonnet-4-5";
/// `max_tokens` sent unless another is set (the API requires one).
pub const DEFAULT_MAX_TOKENS: u32 = 4096;
/// The `anthropic-version` header sent with every request.
pub const API_VERSION: &str = "2023-06-01";

/// A Claude model over the Anthropic Messages API: [`Anthropic::builder`],
/// [`Anthropic::from_env`], and the rest of [`HttpModel`].
pub type Anthropic = HttpModel<AnthropicMessages>;

/// Configures an [`Anthropic`] model.
pub type AnthropicBuilder = HttpModelBuilder<AnthropicMessages>;

/// The Anthropic Messages wire format (`POST /v1/messages`, key in
/// `x-api-key`): tool calls as `tool_use` blocks, results as `tool_result`
/// blocks with `is_error`, consecutive turns of one role merged.
///
/// Prompt caching is on by default ([`PromptCache::auto`]): see
/// [`AnthropicBuilder::prompt_cache`].
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct AnthropicMessages {
    prompt_cache: PromptCache,
}

impl AnthropicBuilder {
    /// Sets the prompt-cache breakpoints of every request (default:
    /// [`PromptCache::auto`], the tools and system prompt plus the end of
    /// the conversation); [`ModelRequest::prompt_cache`](crate::ModelRequest::prompt_cache)
    /// overrides it per request, and [`PromptCache::off`] turns caching off.
    pub fn prompt_cache(mut self, prompt_cache: PromptCache) -> Self {
        self.format.prompt_cache = prompt_cache;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::{Anthropic, AnthropicBuilder};
    use crate::Model;
    use crate::providers::ConfigError;

    #[test]
    fn configuration_comes_from_the_environment() {
        let env = |name: &str| match name {
            "ANTHROPIC_API_KEY" => Some("sk-ant-secret".to_owned()),
            "ANTHROPIC_BASE_URL" => Some("http://127.0.0.1:9/".to_owned()),
            _ => None,
        };
        let model = AnthropicBuilder::from_lookup(&env).build().unwrap();
        assert_eq!(model.endpoint(), "http://127.0.0.1:9/v1/messages");
        assert_eq!((model.provider(), model.name()), ("anthropic", super::DEFAULT_MODEL));
        assert_eq!(model.with_model("claude-haiku").name(), "claude-haiku");
        let missing = AnthropicBuilder::from_lookup(&|_| None).build().unwrap_err();
        assert!(matches!(missing, ConfigError::MissingApiKey { variable: "ANTHROPIC_API_KEY" }));
    }

    #[test]
    fn the_key_never_shows_in_debug_output() {
        let builder = Anthropic::builder().api_key("sk-ant-secret");
        assert!(!format!("{builder:?}").contains("sk-ant-secret"));
        let model = builder.build().unwrap();
        let debug = format!("{model:?}");
        assert!(!debug.contains("sk-ant-secret"), "{debug}");
        assert!(debug.contains("api.anthropic.com"));
    }
}
