//! The reasoning setting for Gemini: `generationConfig.thinkingConfig`.
//!
//! The rules, from Google's Gemini API documentation (thinking, Gemini 3):
//! - Gemini 3 models take `thinkingLevel` (`minimal`, `low`, `medium`,
//!   `high`); Gemini 3 Pro takes only `low` and `high`, later Pro models no
//!   `minimal` (they cannot stop thinking). A `thinkingBudget` is still
//!   accepted there for backwards compatibility.
//! - Gemini 2.5 models take `thinkingBudget` in tokens: 2.5 Pro 128 to
//!   32768 (it cannot turn thinking off), 2.5 Flash 0 to 24576, 2.5 Flash-Lite
//!   512 to 24576 or 0; 0 turns thinking off.
//! - `thinkingBudget` and `thinkingLevel` in one request are rejected
//!   ("`thinking_budget` and `thinking_level` are not supported together"):
//!   exactly one is sent.
//! - `includeThoughts: true` returns thought summaries as `thought` parts.
//! - Models before 2.5 do not think: nothing is sent for them.

use super::wire::GeminiThinking;
use crate::reasoning::{ReasoningConfig, ReasoningEffort, ReasoningError};

/// The `(major, minor)` version in a Gemini model id: `gemini-2.5-flash`,
/// `models/gemini-3-pro-preview` (3.0), `gemini-3.1-pro-preview`. `None`
/// for names without one (`gemini-flash-latest`), which are taken as the
/// newest models.
pub(crate) fn gemini_version(model: &str) -> Option<(u32, u32)> {
    let (_, rest) = model.split_once("gemini-")?;
    let version = rest.split('-').next()?;
    let (major, minor) = version.split_once('.').unwrap_or((version, "0"));
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// The `thinkingConfig` for `config` on `model`; `None` when the model
/// does not think. A budget outside the model's range is an error.
pub(crate) fn gemini_thinking(config: &ReasoningConfig, model: &str) -> Result<Option<GeminiThinking>, ReasoningError> {
    let version = gemini_version(model);
    let include_thoughts = config.summary.is_some() && config.is_on();
    let pro = model.contains("-pro");
    match version {
        Some(version) if version < (2, 5) => Ok(None),
        Some((2, _)) => {
            let (minimum, maximum, can_stop) = if pro {
                (128, 32_768, false)
            } else if model.contains("flash-lite") {
                (512, 24_576, true)
            } else {
                (0, 24_576, true)
            };
            let budget = match (config.budget_tokens, config.effort) {
                (Some(budget), _) => budget,
                (None, ReasoningEffort::Off) if can_stop => 0,
                (None, ReasoningEffort::Off) => minimum,
                (None, ReasoningEffort::Low) => 1024,
                (None, ReasoningEffort::Medium) => 8192,
                (None, ReasoningEffort::High) => 16_384,
                (None, ReasoningEffort::Max) => maximum,
            };
            if budget == 0 && can_stop {
                return Ok(Some(GeminiThinking {
                    thinking_budget: Some(0),
                    thinking_level: None,
                    include_thoughts: false,
                }));
            }
            if budget < minimum {
                return Err(ReasoningError::BudgetTooSmall { budget_tokens: budget, minimum });
            }
            if budget > maximum {
                return Err(ReasoningError::BudgetTooLarge { budget_tokens: budget, maximum });
            }
            Ok(Some(GeminiThinking { thinking_budget: Some(budget), thinking_level: None, include_thoughts }))
        }
        _ => {
            // A budget alone (no effort) is sent as a budget, which Gemini 3 still takes.
            if let (Some(budget), ReasoningEffort::Off) = (config.budget_tokens, config.effort) {
                return Ok(Some(GeminiThinking {
                    thinking_budget: Some(budget),
                    thinking_level: None,
                    include_thoughts,
                }));
            }
            let first_pro = pro && version == Some((3, 0));
            let level = match config.effort {
                ReasoningEffort::Off if pro => "low",
                ReasoningEffort::Off => "minimal",
                ReasoningEffort::Low => "low",
                ReasoningEffort::Medium if first_pro => "high",
                ReasoningEffort::Medium => "medium",
                ReasoningEffort::High | ReasoningEffort::Max => "high",
            };
            Ok(Some(GeminiThinking { thinking_budget: None, thinking_level: Some(level), include_thoughts }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{GeminiThinking, gemini_thinking, gemini_version};
    use crate::reasoning::{ReasoningConfig, ReasoningEffort, ReasoningError, ReasoningSummary};

    #[test]
    fn versions_parse() {
        assert_eq!(gemini_version("gemini-2.5-flash"), Some((2, 5)));
        assert_eq!(gemini_version("models/gemini-3-pro-preview"), Some((3, 0)));
        assert_eq!(gemini_version("gemini-3.1-pro-preview"), Some((3, 1)));
        assert_eq!(gemini_version("gemini-2.0-flash"), Some((2, 0)));
        assert_eq!(gemini_version("gemini-flash-latest"), None);
    }

    fn level(effort: ReasoningEffort, model: &str) -> Option<&'static str> {
        gemini_thinking(&ReasoningConfig::new(effort), model).unwrap().and_then(|t| t.thinking_level)
    }

    #[test]
    fn gemini_3_takes_levels_and_never_a_budget_beside_them() {
        use ReasoningEffort::{High, Low, Max, Medium, Off};
        assert_eq!(level(Off, "gemini-3-flash-preview"), Some("minimal"));
        assert_eq!(level(Off, "gemini-3.1-pro-preview"), Some("low"));
        assert_eq!(level(Low, "gemini-3-flash-preview"), Some("low"));
        assert_eq!(level(Medium, "gemini-3-flash-preview"), Some("medium"));
        assert_eq!(level(Medium, "gemini-3-pro-preview"), Some("high"));
        assert_eq!(level(High, "gemini-flash-latest"), Some("high"));
        assert_eq!(level(Max, "gemini-3.1-pro-preview"), Some("high"));
        let with_budget = ReasoningConfig::new(High).with_budget_tokens(4096).with_summary(ReasoningSummary::Auto);
        let thinking = gemini_thinking(&with_budget, "gemini-3-flash-preview").unwrap().unwrap();
        assert_eq!(
            thinking,
            GeminiThinking { thinking_budget: None, thinking_level: Some("high"), include_thoughts: true }
        );
        let budget_only = ReasoningConfig::off().with_budget_tokens(4096);
        let thinking = gemini_thinking(&budget_only, "gemini-3-flash-preview").unwrap().unwrap();
        assert_eq!((thinking.thinking_budget, thinking.thinking_level), (Some(4096), None));
    }

    #[test]
    fn gemini_2_5_takes_budgets_within_the_models_range() {
        let budget =
            |config: ReasoningConfig, model: &str| gemini_thinking(&config, model).map(|t| t.unwrap().thinking_budget);
        assert_eq!(budget(ReasoningConfig::off(), "gemini-2.5-flash"), Ok(Some(0)));
        assert_eq!(budget(ReasoningConfig::off(), "gemini-2.5-pro"), Ok(Some(128)));
        assert_eq!(budget(ReasoningEffort::Max.into(), "gemini-2.5-pro"), Ok(Some(32_768)));
        assert_eq!(budget(ReasoningEffort::Low.into(), "gemini-2.5-flash-lite"), Ok(Some(1024)));
        assert_eq!(
            budget(ReasoningConfig::off().with_budget_tokens(100), "gemini-2.5-pro"),
            Err(ReasoningError::BudgetTooSmall { budget_tokens: 100, minimum: 128 })
        );
        assert_eq!(
            budget(ReasoningConfig::off().with_budget_tokens(30_000), "gemini-2.5-flash"),
            Err(ReasoningError::BudgetTooLarge { budget_tokens: 30_000, maximum: 24_576 })
        );
        assert_eq!(gemini_thinking(&ReasoningEffort::High.into(), "gemini-2.0-flash"), Ok(None));
    }
}
