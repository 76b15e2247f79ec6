//! How long a provider keeps a cached prompt prefix ([`CacheTtl`]), and
//! where a request asks the provider to cache its prompt ([`PromptCache`]),
//! for providers that cache only at explicit breakpoints (Anthropic's
//! `cache_control`). Providers that cache every prompt prefix on their own
//! (OpenAI, Gemini) ignore the breakpoints.

/// How long a provider keeps a cached prompt prefix after its last use.
///
/// Each provider offers a standard retention and a longer, extended one,
/// under its own names and durations; this says which, and each provider
/// sends its own:
///
/// | | Anthropic (`cache_control.ttl`) | OpenAI (`prompt_cache_retention`) |
/// |---|---|---|
/// | [`Standard`](Self::Standard) | `5m` (left unsaid: the default) | `in_memory` |
/// | [`Extended`](Self::Extended) | `1h` | `24h` |
///
/// Anthropic takes it per breakpoint, in a [`PromptCache`]; OpenAI per
/// model, on the Chat or Responses builder (`prompt_cache_retention`).
/// Gemini caches prefixes on its own (implicit caching) and takes no
/// retention.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum CacheTtl {
    /// The provider's standard retention. Anthropic: five minutes,
    /// refreshed at every hit (writes cost 1.25 times the input price).
    /// OpenAI: in memory, typically 5 to 10 minutes of inactivity and at
    /// most an hour.
    #[default]
    Standard,
    /// The provider's extended retention, for prefixes reused across
    /// pauses longer than a few minutes. Anthropic: one hour (writes cost
    /// twice the input price). OpenAI: up to 24 hours, on the models that
    /// offer it (the same price).
    Extended,
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
/// let cache = PromptCache::auto().prefix_ttl(CacheTtl::Extended);
/// assert_eq!(cache.prefix(), Some(CacheTtl::Extended));
/// assert_eq!(cache.conversation(), Some(CacheTtl::Standard));
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
    /// Both breakpoints, with the standard (five-minute) TTL.
    pub const fn auto() -> Self {
        Self { prefix: Some(CacheTtl::Standard), conversation: Some(CacheTtl::Standard) }
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
