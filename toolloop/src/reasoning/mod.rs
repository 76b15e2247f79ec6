//! Reasoning: what a model thought before it answered, and how hard it
//! should think.
//!
//! - In a conversation, reasoning is a [`Reasoning`] block of an assistant
//!   message ([`ContentBlock::Reasoning`](crate::ContentBlock::Reasoning)),
//!   with what only its provider can read kept inside it.
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
/// summaries). What only the provider can read — a signature, redacted or
/// encrypted reasoning — is kept inside, tagged with the provider that
/// issued it ([`opaque_provider`](Self::opaque_provider)): it is sent back
/// byte for byte, in place, to that provider only, and left out of the
/// requests to any other (see [`Conversation::view_for`](crate::Conversation::view_for)).
///
/// Serde keeps every byte of it, so a saved conversation resumes where it
/// was. The opaque part is saved as `"opaque": {"provider": ..., "model":
/// ..., "state": {"type": ..., ...}}`, `type` one of `signed` and `redacted`
/// (Anthropic `thinking` and `redacted_thinking`), `item` (an OpenAI
/// Responses `reasoning` item), `thought` and `thought_signature` (Gemini).
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
    pub(crate) opaque: Option<OpaqueReasoning>,
}

impl Reasoning {
    /// Reasoning shown as `text` with nothing opaque (Ollama `thinking`,
    /// `reasoning_content`, a test model).
    pub fn from_text(text: impl Into<String>) -> Self {
        Self::new(vec![text.into()], Vec::new())
    }

    /// Reasoning with the given readable parts and nothing opaque. Only a
    /// provider's response (or a saved conversation) gives reasoning that
    /// its provider alone can read.
    pub fn new(text: Vec<String>, summary: Vec<String>) -> Self {
        Self { text, summary, opaque: None }
    }

    /// Reasoning with opaque state, as a provider's response gives it.
    #[cfg_attr(not(feature = "http"), allow(dead_code))] // only the HTTP providers use it
    pub(crate) fn with_opaque(text: Vec<String>, summary: Vec<String>, opaque: OpaqueReasoning) -> Self {
        Self { text, summary, opaque: Some(opaque) }
    }

    /// What a reader can see: the text when there is any, else the summary,
    /// parts joined with newlines. Empty for redacted or encrypted-only reasoning.
    pub fn visible_text(&self) -> String {
        let parts = if self.text.is_empty() { &self.summary } else { &self.text };
        parts.join("\n")
    }

    /// The provider that issued the state this reasoning carries that only
    /// it can read ([`Model::provider`](crate::Model::provider)), or `None`
    /// when there is none: readable reasoning goes to every provider.
    pub fn opaque_provider(&self) -> Option<&str> {
        self.opaque.as_ref().map(|opaque| opaque.provider.as_str())
    }

    /// Whether this reasoning carries state that only `provider` can read.
    pub fn is_opaque_to(&self, provider: &str) -> bool {
        self.opaque_provider().is_some_and(|issuer| issuer != provider)
    }

    /// The state only its provider can read, in its saved form (the
    /// `"state"` object above: `{"type": "signed", "signature": "..."}`,
    /// say), or `None` when there is none. For a [`Model`](crate::Model)
    /// implemented outside this crate that speaks one of these wires
    /// (Anthropic's API on another host, say) and sends the state back.
    pub fn opaque_state(&self) -> Option<serde_json::Value> {
        self.opaque.as_ref().and_then(|opaque| serde_json::to_value(&opaque.state).ok())
    }

    /// This reasoning carrying `state` (in the saved form of
    /// [`opaque_state`](Self::opaque_state)) issued by `provider` (and
    /// `model`, for APIs that tie the state to a model): for a
    /// [`Model`](crate::Model) implemented outside this crate that reads
    /// such state from its responses. Fails when `state` is not one of the
    /// saved forms.
    pub fn with_opaque_state(
        mut self,
        provider: impl Into<String>,
        model: Option<String>,
        state: serde_json::Value,
    ) -> Result<Self, serde_json::Error> {
        let state = serde_json::from_value(state)?;
        self.opaque = Some(OpaqueReasoning { provider: provider.into(), model, state });
        Ok(self)
    }

    /// The opaque state `provider` issued, for its own requests.
    #[cfg_attr(not(feature = "http"), allow(dead_code))] // only the HTTP providers use it
    pub(crate) fn state_for(&self, provider: &str) -> Option<&ReasoningState> {
        self.opaque.as_ref().filter(|opaque| opaque.provider == provider).map(|opaque| &opaque.state)
    }
}

/// Reasoning state only the issuing provider can read.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) struct OpaqueReasoning {
    /// The provider that issued it ([`Model::provider`](crate::Model::provider)).
    pub(crate) provider: String,
    /// The model that issued it, for APIs that tie the state to a model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) model: Option<String>,
    /// The state itself.
    pub(crate) state: ReasoningState,
}

impl OpaqueReasoning {
    /// State issued by `provider` (and `model`, when the API ties it to one).
    #[cfg_attr(not(feature = "http"), allow(dead_code))] // only the HTTP providers use it
    pub(crate) fn new(provider: impl Into<String>, model: Option<String>, state: ReasoningState) -> Self {
        Self { provider: provider.into(), model, state }
    }
}

/// The provider-specific part of [`OpaqueReasoning`]. Its serde form is
/// what saved conversations hold: never change it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum ReasoningState {
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
        let both = Reasoning::new(vec!["a".into(), "b".into()], vec!["s".into()]);
        assert_eq!(both.visible_text(), "a\nb");
        let summary = Reasoning::new(Vec::new(), vec!["s1".into(), "s2".into()]);
        assert_eq!(summary.visible_text(), "s1\ns2");
        assert_eq!(Reasoning::default().visible_text(), "");
    }

    /// Saved conversations resume: the JSON of each kind of opaque state,
    /// as conversations saved so far hold it, reads back as that state and
    /// writes back byte for byte.
    const SAVED: [(&str, &str); 7] = [
        (
            "anthropic signed",
            r#"{"text":["Let me think."],"opaque":{"provider":"anthropic","model":"claude-sonnet-4-5","state":{"type":"signed","signature":"EqQBCgIYAhIM=="}}}"#,
        ),
        ("anthropic redacted", r#"{"opaque":{"provider":"anthropic","state":{"type":"redacted","data":"EmwKAhgB"}}}"#),
        (
            "responses item",
            r#"{"summary":["Compared both."],"opaque":{"provider":"openai-responses","model":"o4-mini","state":{"type":"item","id":"rs_1","encrypted_content":"gAAAAB=="}}}"#,
        ),
        (
            "responses item, not encrypted",
            r#"{"opaque":{"provider":"openai-responses","state":{"type":"item","id":"rs_2"}}}"#,
        ),
        (
            "gemini thought",
            r#"{"summary":["Checking Rome."],"opaque":{"provider":"gemini","model":"gemini-2.5-flash","state":{"type":"thought","signature":"c2ln"}}}"#,
        ),
        (
            "gemini thought, unsigned",
            r#"{"summary":["Short."],"opaque":{"provider":"gemini","state":{"type":"thought"}}}"#,
        ),
        (
            "gemini thought signature",
            r#"{"opaque":{"provider":"gemini","state":{"type":"thought_signature","signature":"c2ln"}}}"#,
        ),
    ];

    fn issued(provider: &str, model: Option<&str>, state: ReasoningState) -> OpaqueReasoning {
        OpaqueReasoning::new(provider, model.map(str::to_owned), state)
    }

    #[test]
    fn the_saved_form_of_every_state_reads_back_and_writes_back_byte_for_byte() {
        let strings = |parts: &[&str]| parts.iter().map(|part| (*part).to_owned()).collect::<Vec<_>>();
        let expected = [
            Reasoning::with_opaque(
                strings(&["Let me think."]),
                Vec::new(),
                issued(
                    "anthropic",
                    Some("claude-sonnet-4-5"),
                    ReasoningState::Signed { signature: "EqQBCgIYAhIM==".into() },
                ),
            ),
            Reasoning::with_opaque(
                Vec::new(),
                Vec::new(),
                issued("anthropic", None, ReasoningState::Redacted { data: "EmwKAhgB".into() }),
            ),
            Reasoning::with_opaque(
                Vec::new(),
                strings(&["Compared both."]),
                issued(
                    "openai-responses",
                    Some("o4-mini"),
                    ReasoningState::Item { id: "rs_1".into(), encrypted_content: Some("gAAAAB==".into()) },
                ),
            ),
            Reasoning::with_opaque(
                Vec::new(),
                Vec::new(),
                issued("openai-responses", None, ReasoningState::Item { id: "rs_2".into(), encrypted_content: None }),
            ),
            Reasoning::with_opaque(
                Vec::new(),
                strings(&["Checking Rome."]),
                issued("gemini", Some("gemini-2.5-flash"), ReasoningState::Thought { signature: Some("c2ln".into()) }),
            ),
            Reasoning::with_opaque(
                Vec::new(),
                strings(&["Short."]),
                issued("gemini", None, ReasoningState::Thought { signature: None }),
            ),
            Reasoning::with_opaque(
                Vec::new(),
                Vec::new(),
                issued("gemini", None, ReasoningState::ThoughtSignature { signature: "c2ln".into() }),
            ),
        ];
        for ((kind, saved), expected) in SAVED.into_iter().zip(expected) {
            let read: Reasoning = serde_json::from_str(saved).unwrap_or_else(|error| panic!("{kind}: {error}"));
            assert_eq!(read, expected, "{kind}: read back as another state");
            assert_eq!(serde_json::to_string(&read).unwrap(), saved, "{kind}: written back differently");
            assert_eq!(serde_json::to_string(&expected).unwrap(), saved, "{kind}: a new state is saved differently");
        }
    }

    #[test]
    fn opaque_state_belongs_to_its_provider() {
        let signed = Reasoning::with_opaque(
            vec!["think".into()],
            Vec::new(),
            OpaqueReasoning::new("anthropic", None, ReasoningState::Signed { signature: "sig".into() }),
        );
        assert_eq!(signed.opaque_provider(), Some("anthropic"));
        assert_eq!(Reasoning::from_text("plain").opaque_provider(), None);
        assert!(!signed.is_opaque_to("anthropic"));
        assert!(signed.is_opaque_to("openai-responses"));
        assert!(!Reasoning::from_text("plain").is_opaque_to("anthropic"));
    }

    /// A provider implemented outside the crate reads and writes the state
    /// in its saved form, and the view rules treat it by its provider name.
    #[test]
    fn a_model_outside_the_crate_reads_and_writes_opaque_state_as_json() {
        let state = serde_json::json!({"type": "signed", "signature": "sig-1"});
        let reasoning = Reasoning::from_text("thinking").with_opaque_state("bedrock", None, state.clone()).unwrap();
        assert_eq!(reasoning.opaque_state(), Some(state));
        assert_eq!(reasoning.opaque_provider(), Some("bedrock"));
        assert!(reasoning.is_opaque_to("anthropic") && !reasoning.is_opaque_to("bedrock"));
        let saved = serde_json::to_value(&reasoning).unwrap();
        assert_eq!(saved["opaque"]["state"]["signature"], "sig-1");
        assert_eq!(Reasoning::from_text("plain").opaque_state(), None);
        let unknown = serde_json::json!({"type": "mystery"});
        assert!(Reasoning::from_text("x").with_opaque_state("bedrock", None, unknown).is_err());
    }
}
