//! The Anthropic Messages API (`POST /v1/messages`).
//!
//! ```no_run
//! use toolloop::providers::anthropic::Anthropic;
//!
//! // ANTHROPIC_API_KEY (and optionally ANTHROPIC_BASE_URL) from the environment:
//! let model = Anthropic::from_env()?;
//! // or everything from code:
//! let model = Anthropic::builder().api_key("sk-ant-...").model("claude-opus-4-1").max_tokens(8192).build()?;
//! # Ok::<(), toolloop::BuildError>(())
//! ```

mod convert;
mod fields;
mod output_schema;
mod reasoning;
mod stream;

use stream::MessagesStreamDecoder;
mod output_block;
mod wire;

use convert::AnthropicMessages;

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

/// A Claude model over the Anthropic Messages API (`POST /v1/messages`,
/// key in `x-api-key`): [`Anthropic::builder`], [`Anthropic::from_env`],
/// [`Anthropic::builder_from_env`], and the rest of [`HttpModel`]. Tool
/// calls go as `tool_use` blocks, results as `tool_result` blocks with
/// `is_error`, consecutive turns of one role merged.
///
/// Prompt caching is on by default ([`PromptCache::auto`]): see
/// [`HttpModelBuilder::prompt_cache`].
pub type Anthropic = HttpModel<AnthropicMessages>;

/// Settings of [`Anthropic`] models only.
impl HttpModelBuilder<AnthropicMessages> {
    /// Sets the prompt-cache breakpoints of every request (default:
    /// [`PromptCache::auto`], the tools and system prompt plus the end of
    /// the conversation); [`ModelRequest::prompt_cache`](crate::ModelRequest::prompt_cache)
    /// overrides it per request, and [`PromptCache::off`] turns caching off.
    pub fn prompt_cache(mut self, prompt_cache: PromptCache) -> Self {
        self.format.prompt_cache = prompt_cache;
        self
    }
}
