//! One reasoning setting for every provider, and the error for a setting an
//! API rules out.
//!
//! [`ReasoningConfig`] says how hard a model should think. Each wire format
//! maps it to its own fields, and checks its API's rules before anything is
//! sent, in its provider module (`providers::<provider>::reasoning`), so a
//! request the API would reject fails there, as a [`ModelError`] of kind
//! [`ModelErrorKind::InvalidRequest`] saying what to change (from a
//! [`ReasoningError`]), instead of an HTTP 400.

use serde::{Deserialize, Serialize};

/// How much a model should reason before it answers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ReasoningEffort {
    /// No reasoning where the model allows turning it off.
    #[default]
    Off,
    /// Little reasoning: fast and cheap.
    Low,
    /// A balance of speed and depth.
    Medium,
    /// Deep reasoning.
    High,
    /// The deepest the model offers.
    Max,
}

impl ReasoningEffort {
    /// A short, stable name (`"off"`, `"low"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::Max => "max",
        }
    }
}

/// How much of a summary of its reasoning a provider should return, for
/// providers that summarise (OpenAI Responses `reasoning.summary`; Anthropic
/// models that hide their thinking unless asked, `thinking.display`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ReasoningSummary {
    /// The most detailed summary the model offers.
    Auto,
    /// A short summary.
    Concise,
    /// A detailed summary.
    Detailed,
}

impl ReasoningSummary {
    /// The API's name for it (`"auto"`, `"concise"`, `"detailed"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Concise => "concise",
            Self::Detailed => "detailed",
        }
    }
}

/// The reasoning setting: an effort, optionally an exact thinking budget in
/// tokens, optionally a summary. Set it on a provider's builder or per
/// request ([`ModelRequest::reasoning`](crate::ModelRequest::reasoning)).
///
/// ```
/// use toolloop::reasoning::{ReasoningConfig, ReasoningEffort, ReasoningSummary};
///
/// let high = ReasoningConfig::from(ReasoningEffort::High).with_summary(ReasoningSummary::Auto);
/// assert!(high.is_on());
/// let budget = ReasoningConfig::new(ReasoningEffort::Medium).with_budget_tokens(8_000);
/// assert_eq!(budget.budget_tokens, Some(8_000));
/// assert!(!ReasoningConfig::off().is_on());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ReasoningConfig {
    /// How hard to think.
    pub effort: ReasoningEffort,
    /// An exact thinking budget, for APIs that take one (Anthropic
    /// `budget_tokens`, on models that still accept it). It turns thinking on
    /// there even when [`effort`](Self::effort) is off; APIs without budgets
    /// use the effort.
    pub budget_tokens: Option<u32>,
    /// Ask for a summary of the reasoning.
    pub summary: Option<ReasoningSummary>,
}

impl ReasoningConfig {
    /// Reasoning at `effort`.
    pub fn new(effort: ReasoningEffort) -> Self {
        Self { effort, budget_tokens: None, summary: None }
    }

    /// No reasoning.
    pub fn off() -> Self {
        Self::default()
    }

    /// Sets an exact thinking budget (see [`budget_tokens`](Self::budget_tokens)).
    pub fn with_budget_tokens(mut self, budget_tokens: u32) -> Self {
        self.budget_tokens = Some(budget_tokens);
        self
    }

    /// Asks for a summary of the reasoning.
    pub fn with_summary(mut self, summary: ReasoningSummary) -> Self {
        self.summary = Some(summary);
        self
    }

    /// Whether this asks for any reasoning.
    pub fn is_on(&self) -> bool {
        self.effort != ReasoningEffort::Off || self.budget_tokens.is_some()
    }
}

impl From<ReasoningEffort> for ReasoningConfig {
    fn from(effort: ReasoningEffort) -> Self {
        Self::new(effort)
    }
}

/// A reasoning setting the target API would reject, found before sending.
/// Users get it as a [`ModelError`] ([`into_model_error`](Self::into_model_error)):
/// its message says what to change.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[cfg_attr(not(feature = "http"), allow(dead_code))] // only the HTTP providers use it
pub(crate) enum ReasoningError {
    /// Thinking needs the temperature unset or 1.
    #[error("thinking requires the temperature to be unset or 1, but it is {temperature}")]
    TemperatureWithThinking {
        /// The temperature that was set.
        temperature: f32,
    },
    /// Thinking cannot be combined with a tool choice that forces a tool.
    #[error("thinking cannot be combined with a tool choice that forces tool use; let the model choose (auto)")]
    ForcedToolChoice,
    /// The thinking budget is below the API's minimum.
    #[error("the thinking budget must be at least {minimum} tokens, but it is {budget_tokens}")]
    BudgetTooSmall {
        /// The budget that was set.
        budget_tokens: u32,
        /// The API's minimum.
        minimum: u32,
    },
    /// The thinking budget is above the model's maximum.
    #[error("the thinking budget must be at most {maximum} tokens, but it is {budget_tokens}")]
    BudgetTooLarge {
        /// The budget that was set.
        budget_tokens: u32,
        /// The model's maximum.
        maximum: u32,
    },
    /// The thinking budget is not below `max_tokens`.
    #[error("the thinking budget ({budget_tokens} tokens) must be below max_tokens ({max_tokens})")]
    BudgetNotBelowMaxTokens {
        /// The budget that was set.
        budget_tokens: u32,
        /// The request's maximum output tokens.
        max_tokens: u32,
    },
    /// `max_tokens` leaves no room for the smallest thinking budget.
    #[error(
        "max_tokens ({max_tokens}) leaves no room for a thinking budget of {minimum} tokens; raise it to at least {needed}"
    )]
    MaxTokensTooSmall {
        /// The request's maximum output tokens.
        max_tokens: u32,
        /// The API's minimum budget.
        minimum: u32,
        /// The smallest `max_tokens` that works.
        needed: u32,
    },
    /// The model only thinks adaptively and rejects a token budget.
    #[error("{model} supports only adaptive thinking and rejects a token budget; set an effort instead")]
    BudgetNotSupported {
        /// The model.
        model: String,
    },
}

#[cfg(test)]
mod tests {
    use super::{ReasoningConfig, ReasoningEffort, ReasoningSummary};

    #[test]
    fn a_budget_turns_reasoning_on_even_without_an_effort() {
        assert!(!ReasoningConfig::off().is_on());
        assert!(ReasoningConfig::off().with_budget_tokens(2048).is_on());
        assert!(ReasoningConfig::from(ReasoningEffort::Low).is_on());
        let config = ReasoningConfig::new(ReasoningEffort::Max).with_summary(ReasoningSummary::Detailed);
        assert_eq!((config.effort.as_str(), config.summary.map(ReasoningSummary::as_str)), ("max", Some("detailed")));
    }
}
