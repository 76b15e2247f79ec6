//! Reasoning: what a model thought before it answered, and how hard it
//! should think.
//!
//! - In a conversation, reasoning is a [`Reasoning`] block of an assistant
//!   message ([`ContentBlock::Reasoning`](crate::ContentBlock::Reasoning)),
//!   with what only its provider can read in [`OpaqueReasoning`].
//! - In a request, [`ReasoningConfig`] (an [`effort`](ReasoningEffort) or a
//!   token budget, and whether to get a [`summary`](ReasoningSummary)) says
//!   how hard to think; a setting a provider's API would reject fails before
//!   anything is sent, with a [`ModelError`](crate::ModelError) of kind
//!   [`InvalidRequest`](crate::model::ModelErrorKind::InvalidRequest) whose
//!   message says what to change.
//!
//! The guide's [reasoning chapter](crate::guide::reasoning) shows both.

use serde::{Deserialize, Serialize};

mod config;

pub(crate) use config::ReasoningError;
pub use config::{ReasoningConfig, ReasoningEffort, ReasoningSummary};

/// The reasoning a model did before (or between) the parts of its answer, as
/// one piece of an assistant message ([`ContentBlock::Reasoning`](crate::ContentBlock::Reasoning)).
///
/// What is readable sits in [`text`](Self::text) (the reasoning as the model
/// wrote it: Anthropic `thinking`, Ollama `thinking`, the `reasoning_content`
/// of OpenAI-compatible servers) or [`summary`](Self::summary) (a summary the
/// provider wrote about it: OpenAI Responses summary parts, Gemini thought
/// summaries). What only the
/// provider can read — a signature, redacted or encrypted reasoning — sits in
/// [`opaque`](Self::opaque), tagged with the provider that issued it: it is
/// sent back byte for byte, in place, to that provider only, and left out of
/// the requests to any other (see [`Conversation::view_for`](crate::Conversation::view_for)).
/// Serde keeps every byte of it, so a saved conversation resumes where it was.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Reasoning {
    /// The reasoning as the model wrote it, in the parts it came in.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub text: Vec<String>,
    /// A summary of the reasoning, in the parts it came in.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub summary: Vec<String>,
    /// State only the issuing provider can read, replayed to it unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opaque: Option<OpaqueReasoning>,
}

impl Reasoning {
    /// Reasoning shown as `text` with nothing opaque (Ollama `thinking`,
    /// `reasoning_content`, a test model).
    pub fn from_text(text: impl Into<String>) -> Self {
        Self { text: vec![text.into()], summary: Vec::new(), opaque: None }
    }

    /// Reasoning with the given readable parts and opaque state.
    pub fn new(text: Vec<String>, summary: Vec<String>, opaque: Option<OpaqueReasoning>) -> Self {
        Self { text, summary, opaque }
    }

    /// What a reader can see: the text when there is any, else the summary,
    /// parts joined with newlines. Empty for redacted or encrypted-only reasoning.
    pub fn visible_text(&self) -> String {
        let parts = if self.text.is_empty() { &self.summary } else { &self.text };
        parts.join("\n")
    }

    /// Whether this reasoning carries state that only `provider` can read.
    pub fn is_opaque_to(&self, provider: &str) -> bool {
        self.opaque.as_ref().is_some_and(|opaque| opaque.provider != provider)
    }
}

/// Reasoning state only the issuing provider can read.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct OpaqueReasoning {
    /// The provider that issued it ([`Model::provider`](crate::Model::provider)).
    pub provider: String,
    /// The model that issued it, for APIs that tie the state to a model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The state itself.
    pub state: ReasoningState,
}

impl OpaqueReasoning {
    /// State issued by `provider` (and `model`, when the API ties it to one).
    pub fn new(provider: impl Into<String>, model: Option<String>, state: ReasoningState) -> Self {
        Self { provider: provider.into(), model, state }
    }
}

/// The provider-specific part of [`OpaqueReasoning`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ReasoningState {
    /// Anthropic `thinking`: the signature the API verifies against the
    /// thinking text ([`Reasoning::text`], one part).
    Signed {
        /// The `signature` field, as received.
        signature: String,
    },
    /// Anthropic `redacted_thinking`: reasoning encrypted for safety reasons.
    Redacted {
        /// The `data` field, as received.
        data: String,
    },
    /// An OpenAI Responses `reasoning` item.
    Item {
        /// The item's `id` (`rs_...`).
        id: String,
        /// The item's `encrypted_content`, present when the request asked
        /// for `reasoning.encrypted_content`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        encrypted_content: Option<String>,
    },
    /// A Gemini `thought` part: the model's thought summary (in
    /// [`Reasoning::summary`]), with the part's `thoughtSignature` when it
    /// carried one.
    Thought {
        /// The `thoughtSignature` field, as received.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    /// A Gemini `thoughtSignature` that came on the part of the block right
    /// after this reasoning block (a function call or text): it goes back
    /// on that part, byte for byte.
    ThoughtSignature {
        /// The `thoughtSignature` field, as received.
        signature: String,
    },
}

#[cfg(test)]
mod tests {
    use super::{OpaqueReasoning, Reasoning, ReasoningState};

    #[test]
    fn visible_text_prefers_the_text_over_the_summary() {
        let both = Reasoning::new(vec!["a".into(), "b".into()], vec!["s".into()], None);
        assert_eq!(both.visible_text(), "a\nb");
        let summary = Reasoning::new(Vec::new(), vec!["s1".into(), "s2".into()], None);
        assert_eq!(summary.visible_text(), "s1\ns2");
        assert_eq!(Reasoning::default().visible_text(), "");
    }

    #[test]
    fn opaque_state_belongs_to_its_provider() {
        let signed = Reasoning::new(
            vec!["think".into()],
            Vec::new(),
            Some(OpaqueReasoning::new("anthropic", None, ReasoningState::Signed { signature: "sig".into() })),
        );
        assert!(!signed.is_opaque_to("anthropic"));
        assert!(signed.is_opaque_to("openai-responses"));
        assert!(!Reasoning::from_text("plain").is_opaque_to("anthropic"));
    }
}
