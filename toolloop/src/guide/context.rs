//! # Prompt caching and the context window
//!
//! Long tool loops resend the whole history on every call. On Anthropic,
//! toolloop marks cache breakpoints by default
//! ([`PromptCache::auto()`](crate::model::PromptCache::auto)): one on the stable
//! prefix (tool definitions and system prompt, which serialise
//! byte-identically on every call) and one that moves with the end of the
//! conversation, so each call reads everything up to the previous one from
//! the cache. In a 10-call loop with a ~2,000-token system prompt and
//! ~300-token tool results that is 91% of prompt tokens read from cache from
//! the second call on, 74% less price-weighted input (see the repository's
//! `BENCHMARKS.md`). The API looks for a cached prefix only 20 blocks back
//! from a breakpoint, so when one iteration adds more (a dozen parallel
//! tool calls and their results), a second moving breakpoint marks where
//! the previous call ended and the whole previous call is still read from
//! cache (never more than three breakpoints of the API's four).
//!
//! Set the extended TTL (one hour on Anthropic) on the prefix, turn caching
//! off, or override it per request with
//! [`ModelRequest::with_prompt_cache`](crate::ModelRequest::with_prompt_cache):
//!
//! ```
//! use toolloop::providers::anthropic::Anthropic;
//! use toolloop::model::{CacheTtl, PromptCache};
//!
//! let hour = Anthropic::builder().api_key("sk-ant-...").prompt_cache(PromptCache::auto().prefix_ttl(CacheTtl::Extended)).build()?;
//! let none = Anthropic::builder().api_key("sk-ant-...").prompt_cache(PromptCache::off()).build()?;
//! # let _ = (hour, none);
//! # Ok::<(), toolloop::BuildError>(())
//! ```
//!
//! OpenAI caches on its own; set `prompt_cache_key(..)` on the Chat or
//! Responses builder to raise its hit rate, and
//! `prompt_cache_retention(CacheTtl::Extended)` to keep prefixes up to a
//! day ([`CacheTtl`](crate::model::CacheTtl) says what each provider
//! sends). Every provider's cache reads and writes land in
//! [`Usage`](crate::Usage) (on the Responses API: `cached_tokens` as cache
//! reads, `reasoning_tokens` as reasoning), and
//! [`RunMetadata::cache_hit_share()`](crate::run::RunMetadata::cache_hit_share)
//! gives the share of prompt tokens read from cache.
//!
//! ## A prompt longer than the window
//!
//! A prompt that does not fit the context window is a typed error on every
//! provider — [`ModelErrorKind::ContextOverflow`](crate::model::ModelErrorKind::ContextOverflow),
//! with the server's numbers in
//! [`ModelError::prompt_tokens()`](crate::ModelError::prompt_tokens) and
//! [`context_window()`](crate::ModelError::context_window) —
//! and the conversation is left intact. Ollama takes its window as a
//! setting (`Ollama::builder().num_ctx(32_768)`), is asked to fail rather
//! than truncate, and a prompt it truncates anyway is caught.
//!
//! Give an agent or loop a [`ContextPolicy`](crate::run::ContextPolicy) and
//! it compacts what the model is *sent* instead of failing: old tool results
//! are replaced by a short placeholder, then old iterations are dropped (or
//! summarised by a function or another model), tool calls always keep their
//! results, and the call is made again. Each step is an
//! [`Event::Compacted`](crate::run::Event::Compacted) saying what it left
//! out (hooks and a streamed run see it; the `on_compacted` hook gets its
//! reason and token estimates), and
//! [`RunMetadata::compactions`](crate::run::RunMetadata::compactions)
//! counts them.
//! [`Conversation::compact(n)`](crate::Conversation::compact) rewrites the
//! history itself, returning what it removed.
//!
//! ```
//! use toolloop::run::ContextPolicy;
//! use toolloop::testing::ScriptedModel;
//! use toolloop::Agent;
//!
//! /// Read one page of the manual.
//! #[derive(toolloop::Tool)]
//! struct ReadPage {
//!     /// The page number.
//!     page: u32,
//! }
//!
//! impl ReadPage {
//!     async fn run(self) -> Result<String, std::convert::Infallible> {
//!         Ok(format!("page {}", self.page))
//!     }
//! }
//!
//! let agent = Agent::builder()
//!     .model(ScriptedModel::new())
//!     .tool::<ReadPage>()
//!     .context_policy(ContextPolicy::new().window(200_000).trigger(0.8).keep_iterations(3))
//!     .build()?;
//! # let _ = agent;
//! # Ok::<(), toolloop::BuildError>(())
//! ```
//!
//! `examples/context.rs` shows the cache reads and writes of a 10-page loop
//! and a policy compacting what the model is sent when the window is full.
