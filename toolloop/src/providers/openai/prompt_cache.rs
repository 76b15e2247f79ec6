//! OpenAI's prompt-cache settings, which Chat Completions and the Responses
//! API take alike: their setters exist once, for both formats.

use crate::model::CacheTtl;
use crate::providers::http::{HttpModelBuilder, WireFormat};

/// OpenAI's name for a retention (`prompt_cache_retention`).
const fn retention_name(ttl: CacheTtl) -> &'static str {
    match ttl {
        CacheTtl::Standard => "in_memory",
        CacheTtl::Extended => "24h",
    }
}

/// The `prompt_cache_key` and `prompt_cache_retention` a format sends.
#[derive(Clone, Debug, Default)]
#[allow(unreachable_pub)] // named by the sealed `PromptCaching`
pub struct PromptCacheSettings {
    key: Option<String>,
    retention: Option<CacheTtl>,
}

impl PromptCacheSettings {
    /// `prompt_cache_key`, when set.
    pub(crate) fn key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// `prompt_cache_retention`, when set.
    pub(crate) fn retention(&self) -> Option<&'static str> {
        self.retention.map(retention_name)
    }
}

/// The OpenAI wire formats, which take prompt-cache settings: those of
/// [`OpenAi`](super::OpenAi) and [`OpenAiResponses`](super::OpenAiResponses).
/// Public only as the setters' bound; users never name it.
#[allow(unreachable_pub)]
pub trait PromptCaching: WireFormat {
    /// The format's prompt-cache settings.
    fn prompt_cache_settings(&mut self) -> &mut PromptCacheSettings;
}

/// Settings of both OpenAI formats: [`OpenAi`](super::OpenAi) and
/// [`OpenAiResponses`](super::OpenAiResponses) models.
impl<W: PromptCaching> HttpModelBuilder<W> {
    /// Sets `prompt_cache_key`, which OpenAI uses with the prompt's prefix to
    /// route requests to the machines holding its cache: one key per
    /// workload that shares a long prefix (a system prompt and tools) raises
    /// the hit rate. OpenAI caches every prompt of 1,024 tokens or more on
    /// its own; request bodies keep their prefixes byte-stable from call to
    /// call for it. Cached input is reported as
    /// [`Usage::cache_read_tokens`](crate::Usage::cache_read_tokens).
    pub fn prompt_cache_key(mut self, key: impl Into<String>) -> Self {
        self.format.prompt_cache_settings().key = Some(key.into());
        self
    }

    /// Sets how long cached prompt prefixes are kept
    /// (`prompt_cache_retention`; default: the API's, in memory):
    /// [`CacheTtl::Standard`] sends `in_memory` (typically 5 to 10 minutes of
    /// inactivity, at most an hour), [`CacheTtl::Extended`] sends `24h` (up
    /// to a day, on the models that offer it). Compatible servers that do
    /// not know the field may reject it.
    pub fn prompt_cache_retention(mut self, ttl: CacheTtl) -> Self {
        self.format.prompt_cache_settings().retention = Some(ttl);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::{CacheTtl, PromptCacheSettings};

    #[test]
    fn each_retention_has_its_openai_name() {
        let sent = |ttl| PromptCacheSettings { key: None, retention: Some(ttl) }.retention();
        assert_eq!(sent(CacheTtl::Standard), Some("in_memory"));
        assert_eq!(sent(CacheTtl::Extended), Some("24h"));
        assert_eq!(PromptCacheSettings::default().retention(), None, "the API's default: the field is left out");
    }
}
