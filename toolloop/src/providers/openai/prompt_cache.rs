//! OpenAI's prompt-cache settings, which Chat Completions and the Responses
//! API take alike: their setters exist once, for both formats.

use crate::providers::http::{HttpModelBuilder, WireFormat};

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

/// The `prompt_cache_key` and `prompt_cache_retention` a format sends.
#[derive(Clone, Debug, Default)]
#[allow(unreachable_pub)] // named by the sealed `PromptCaching`
pub struct PromptCacheSettings {
    key: Option<String>,
    retention: Option<PromptCacheRetention>,
}

impl PromptCacheSettings {
    /// `prompt_cache_key`, when set.
    pub(crate) fn key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// `prompt_cache_retention`, when set.
    pub(crate) fn retention(&self) -> Option<&'static str> {
        self.retention.map(PromptCacheRetention::as_str)
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

    /// Sets how long cached prompt prefixes are kept (`prompt_cache_retention`;
    /// default: the API's). Compatible servers that do not know the field
    /// may reject it.
    pub fn prompt_cache_retention(mut self, retention: PromptCacheRetention) -> Self {
        self.format.prompt_cache_settings().retention = Some(retention);
        self
    }
}
