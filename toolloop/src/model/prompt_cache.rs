//! Where a request asks the provider to cache its prompt, for providers
//! that cache only at explicit breakpoints (Anthropic's `cache_control`).
//! Providers that cache every prompt prefix on their own (OpenAI) ignore it.

/// How long a provider keeps a cached prompt prefix after its last use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum CacheTtl {
    /// Five minutes, refreshed at every hit (Anthropic's default; writes
    /// cost 1.25 times the input price).
    #[default]
    FiveMinutes,
    /// One hour (writes cost twice the input price): for prefixes reused
    /// across pauses longer than five minutes.
    OneHour,
}

/// Which prompt-cache breakpoints a request carries.
///
/// The default ([`PromptCache::auto`]) marks two: the *stable prefix* (the
/// tool definitions and the system prompt, which serialise byte-identically
/// on every call) and the *end of the conversation*, a breakpoint that moves
/// with each call, so that a tool loop reads everything up to its previous
/// call from the cache and writes only what is new. Anthropic allows four
/// breakpoints per request; these settings never place more than two.
///
/// Set it for every call of a model (`Anthropic::builder().prompt_cache(..)`)
/// or for one request ([`ModelRequest::with_prompt_cache`](crate::ModelRequest::with_prompt_cache)).
///
/// ```
/// use toolloop::model::{CacheTtl, PromptCache};
///
/// // Keep the system prompt and tools for an hour, the conversation for five minutes.
/// let cache = PromptCache::auto().prefix_ttl(CacheTtl::OneHour);
/// assert_eq!(cache.prefix(), Some(CacheTtl::OneHour));
/// assert_eq!(cache.conversation(), Some(CacheTtl::FiveMinutes));
/// assert_eq!(PromptCache::off().prefix(), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PromptCache {
    prefix: Option<CacheTtl>,
    conversation: Option<CacheTtl>,
}

impl Default for PromptCache {
    fn default() -> Self {
        Self::auto()
    }
}

impl PromptCache {
    /// Both breakpoints, with the five-minute TTL.
    pub const fn auto() -> Self {
        Self { prefix: Some(CacheTtl::FiveMinutes), conversation: Some(CacheTtl::FiveMinutes) }
    }

    /// No breakpoint: nothing is cached (on Anthropic) and nothing is billed
    /// as a cache write.
    pub const fn off() -> Self {
        Self { prefix: None, conversation: None }
    }

    /// Only the stable prefix (tools and system prompt), with `ttl`.
    pub const fn prefix_only(ttl: CacheTtl) -> Self {
        Self { prefix: Some(ttl), conversation: None }
    }

    /// Only the moving breakpoint at the end of the conversation, with `ttl`
    /// (it covers the tools and system prompt too, which come first).
    pub const fn conversation_only(ttl: CacheTtl) -> Self {
        Self { prefix: None, conversation: Some(ttl) }
    }

    /// Marks the stable prefix with `ttl`.
    #[must_use]
    pub const fn prefix_ttl(mut self, ttl: CacheTtl) -> Self {
        self.prefix = Some(ttl);
        self
    }

    /// Marks the end of the conversation with `ttl`.
    #[must_use]
    pub const fn conversation_ttl(mut self, ttl: CacheTtl) -> Self {
        self.conversation = Some(ttl);
        self
    }

    /// The stable prefix's TTL, when it is marked. The API wants a longer
    /// TTL never to follow a shorter one, so it is at least the
    /// conversation's.
    pub fn prefix(&self) -> Option<CacheTtl> {
        self.prefix.map(|ttl| self.conversation.map_or(ttl, |conversation| ttl.max(conversation)))
    }

    /// The TTL of the breakpoint at the end of the conversation, when it is marked.
    pub const fn conversation(&self) -> Option<CacheTtl> {
        self.conversation
    }
}
