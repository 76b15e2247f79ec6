//! The reasoning setting for the Anthropic Messages API: extended thinking
//! with a token budget, or adaptive thinking with an effort, by model.
//!
//! The rules, from Anthropic's documentation (extended thinking, adaptive
//! thinking, effort, thinking troubleshooting):
//! - Claude 4.7 and later accept only `thinking: {type: "adaptive"}` (with
//!   `output_config.effort`); `type: "enabled"` is rejected with a 400.
//! - Claude 4.6 models accept both; `enabled` + `budget_tokens` is deprecated,
//!   so adaptive is used unless an explicit budget is set.
//! - Claude 4.5 and earlier accept only `enabled` + `budget_tokens`.
//! - `budget_tokens` is at least 1024 and below `max_tokens`.
//! - With thinking on, `temperature` may only be unset or 1, and
//!   `tool_choice` may not force a tool (`any` / `tool`).
//! - Manual thinking on Claude 4 models thinks between tool calls only with
//!   the `interleaved-thinking-2025-05-14` beta header; adaptive thinking
//!   interleaves by itself.
//! - Newer models hide their thinking unless `thinking.display` is
//!   `"summarized"`.

use crate::reasoning::{ReasoningConfig, ReasoningEffort, ReasoningError};

/// The smallest `budget_tokens` the API accepts.
pub(crate) const MIN_BUDGET_TOKENS: u32 = 1024;
/// The beta header value that lets manual thinking interleave with tool calls.
pub(crate) const INTERLEAVED_THINKING_BETA: &str = "interleaved-thinking-2025-05-14";

/// What to send for a reasoning setting: the `thinking` and `output_config`
/// fields and the `anthropic-beta` header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AnthropicThinking {
    /// `Some(budget)`: `{type: "enabled", budget_tokens}`; `None`: `{type: "adaptive"}`.
    pub(crate) budget_tokens: Option<u32>,
    /// `output_config.effort` (adaptive thinking only).
    pub(crate) effort: Option<&'static str>,
    /// `thinking.display`.
    pub(crate) display: Option<&'static str>,
    /// The `anthropic-beta` header value to add.
    pub(crate) beta: Option<&'static str>,
}

/// How a Claude model takes thinking.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ThinkingSupport {
    /// `enabled` + `budget_tokens` only (Claude 4.5 and earlier).
    BudgetOnly,
    /// Both; adaptive preferred (Claude 4.6, Mythos Preview).
    AdaptiveOrBudget,
    /// `adaptive` only (Claude 4.7 and later, and names this crate does not
    /// know, which are newer than it).
    AdaptiveOnly,
}

/// How `model` takes thinking, from its name.
pub(crate) fn thinking_support(model: &str) -> ThinkingSupport {
    match claude_version(model) {
        Some(version) if version >= (4, 7) => ThinkingSupport::AdaptiveOnly,
        Some(version) if version >= (4, 6) => ThinkingSupport::AdaptiveOrBudget,
        Some(_) => ThinkingSupport::BudgetOnly,
        None if model.contains("mythos-preview") => ThinkingSupport::AdaptiveOrBudget,
        None => ThinkingSupport::AdaptiveOnly,
    }
}

/// The `(major, minor)` version in a Claude model id: `claude-opus-4-6`,
/// `claude-sonnet-4-5-20250929`, `claude-opus-4-20250514` (4.0),
/// `claude-3-7-sonnet-latest`, `anthropic.claude-haiku-4-5-v1:0`.
pub(crate) fn claude_version(model: &str) -> Option<(u32, u32)> {
    let (_, name) = model.split_once("claude-")?;
    // A date (`20250514`) is not a minor version: only short numbers count.
    let number = |token: &str| -> Option<u32> {
        (!token.is_empty() && token.len() <= 2 && token.bytes().all(|b| b.is_ascii_digit()))
            .then(|| token.parse().ok())
            .flatten()
    };
    let mut tokens = name.split(['-', '.', '@', ':']);
    let major = tokens.by_ref().find_map(number)?;
    let minor = tokens.next().and_then(number).unwrap_or(0);
    Some((major, minor))
}

/// The thinking budget an effort stands for on models that need a budget,
/// kept to three quarters of `max_tokens` so the answer has room.
fn budget_for(effort: ReasoningEffort, max_tokens: u32) -> Result<u32, ReasoningError> {
    let wanted: u32 = match effort {
        ReasoningEffort::Off | ReasoningEffort::Low => MIN_BUDGET_TOKENS,
        ReasoningEffort::Medium => 4_096,
        ReasoningEffort::High => 16_384,
        ReasoningEffort::Max => 32_000,
    };
    let ceiling = u32::try_from(u64::from(max_tokens) * 3 / 4).unwrap_or(u32::MAX);
    let budget = wanted.min(ceiling);
    if budget < MIN_BUDGET_TOKENS {
        // The smallest max_tokens whose three quarters reach the minimum.
        let needed = (MIN_BUDGET_TOKENS * 4).div_ceil(3);
        return Err(ReasoningError::MaxTokensTooSmall { max_tokens, minimum: MIN_BUDGET_TOKENS, needed });
    }
    Ok(budget)
}

/// Maps `config` for `model` to the request's thinking fields, enforcing the
/// API's rules: `Ok(None)` when reasoning is off.
pub(crate) fn anthropic_thinking(
    config: &ReasoningConfig,
    model: &str,
    max_tokens: u32,
    temperature: Option<f32>,
    tool_choice_forced: bool,
) -> Result<Option<AnthropicThinking>, ReasoningError> {
    if !config.is_on() {
        // Leaving `thinking` out is valid on every model, also on those
        // that reject `{type: "disabled"}`.
        return Ok(None);
    }
    if let Some(temperature) = temperature.filter(|t| (t - 1.0).abs() > f32::EPSILON) {
        return Err(ReasoningError::TemperatureWithThinking { temperature });
    }
    if tool_choice_forced {
        return Err(ReasoningError::ForcedToolChoice);
    }
    let display = config.summary.map(|_| "summarized");
    let support = thinking_support(model);
    let budget = match (support, config.budget_tokens) {
        (ThinkingSupport::AdaptiveOnly, Some(_)) => {
            return Err(ReasoningError::BudgetNotSupported { model: model.to_owned() });
        }
        (ThinkingSupport::AdaptiveOnly | ThinkingSupport::AdaptiveOrBudget, None) => {
            let effort = config.effort.max(ReasoningEffort::Low).as_str();
            return Ok(Some(AnthropicThinking { budget_tokens: None, effort: Some(effort), display, beta: None }));
        }
        (_, Some(budget)) => {
            if budget < MIN_BUDGET_TOKENS {
                return Err(ReasoningError::BudgetTooSmall { budget_tokens: budget, minimum: MIN_BUDGET_TOKENS });
            }
            if budget >= max_tokens {
                return Err(ReasoningError::BudgetNotBelowMaxTokens { budget_tokens: budget, max_tokens });
            }
            budget
        }
        (ThinkingSupport::BudgetOnly, None) => budget_for(config.effort, max_tokens)?,
    };
    // Claude 3.7 has no interleaved thinking; Claude 4 models need the header.
    let beta = claude_version(model).is_none_or(|version| version >= (4, 0)).then_some(INTERLEAVED_THINKING_BETA);
    Ok(Some(AnthropicThinking { budget_tokens: Some(budget), effort: None, display, beta }))
}

#[cfg(test)]
mod tests {
    use super::{
        AnthropicThinking, INTERLEAVED_THINKING_BETA, ThinkingSupport, anthropic_thinking, claude_version,
        thinking_support,
    };
    use crate::reasoning::{ReasoningConfig, ReasoningEffort, ReasoningError, ReasoningSummary};

    #[test]
    fn versions_come_from_every_spelling_of_a_model_id() {
        let cases = [
            ("claude-opus-4-6", Some((4, 6))),
            ("claude-sonnet-4-5-20250929", Some((4, 5))),
            ("claude-opus-4-20250514", Some((4, 0))),
            ("claude-3-7-sonnet-latest", Some((3, 7))),
            ("anthropic.claude-haiku-4-5-v1:0", Some((4, 5))),
            ("claude-sonnet-4-5@20250929", Some((4, 5))),
            ("claude-opus-4-7", Some((4, 7))),
            ("claude-fable-5", Some((5, 0))),
            ("claude-mythos-preview", None),
            ("gpt-5", None),
        ];
        for (model, version) in cases {
            assert_eq!(claude_version(model), version, "{model}");
        }
    }

    #[test]
    fn support_follows_the_documented_model_table() {
        assert_eq!(thinking_support("claude-sonnet-4-5"), ThinkingSupport::BudgetOnly);
        assert_eq!(thinking_support("claude-opus-4-1"), ThinkingSupport::BudgetOnly);
        assert_eq!(thinking_support("claude-haiku-4-5-20251001"), ThinkingSupport::BudgetOnly);
        assert_eq!(thinking_support("claude-sonnet-4-6"), ThinkingSupport::AdaptiveOrBudget);
        assert_eq!(thinking_support("claude-opus-4-6"), ThinkingSupport::AdaptiveOrBudget);
        assert_eq!(thinking_support("claude-mythos-preview"), ThinkingSupport::AdaptiveOrBudget);
        assert_eq!(thinking_support("claude-opus-4-7"), ThinkingSupport::AdaptiveOnly);
        assert_eq!(thinking_support("claude-sonnet-5"), ThinkingSupport::AdaptiveOnly);
    }

    fn map(config: ReasoningConfig, model: &str, max_tokens: u32) -> Result<Option<AnthropicThinking>, ReasoningError> {
        anthropic_thinking(&config, model, max_tokens, None, false)
    }

    #[test]
    fn adaptive_models_get_an_effort_and_budget_models_a_budget() {
        let high = ReasoningConfig::new(ReasoningEffort::High);
        assert_eq!(
            map(high, "claude-opus-4-6", 4096).unwrap(),
            Some(AnthropicThinking { budget_tokens: None, effort: Some("high"), display: None, beta: None })
        );
        let max = ReasoningConfig::new(ReasoningEffort::Max).with_summary(ReasoningSummary::Auto);
        assert_eq!(
            map(max, "claude-opus-4-7", 4096).unwrap(),
            Some(AnthropicThinking {
                budget_tokens: None,
                effort: Some("max"),
                display: Some("summarized"),
                beta: None
            })
        );
        // High wants 16k; three quarters of max_tokens caps it.
        assert_eq!(
            map(high, "claude-sonnet-4-5", 4096).unwrap(),
            Some(AnthropicThinking {
                budget_tokens: Some(3072),
                effort: None,
                display: None,
                beta: Some(INTERLEAVED_THINKING_BETA)
            })
        );
        assert_eq!(map(high, "claude-sonnet-4-5", 64_000).unwrap().unwrap().budget_tokens, Some(16_384));
        assert_eq!(map(high, "claude-3-7-sonnet-latest", 64_000).unwrap().unwrap().beta, None);
        assert_eq!(map(ReasoningConfig::off(), "claude-opus-4-7", 10).unwrap(), None);
    }

    #[test]
    fn an_explicit_budget_is_checked_against_the_api_rules() {
        let budget = |n| ReasoningConfig::new(ReasoningEffort::Off).with_budget_tokens(n);
        assert_eq!(map(budget(2048), "claude-opus-4-6", 4096).unwrap().unwrap().budget_tokens, Some(2048));
        assert_eq!(
            map(budget(1000), "claude-sonnet-4-5", 4096),
            Err(ReasoningError::BudgetTooSmall { budget_tokens: 1000, minimum: 1024 })
        );
        assert_eq!(
            map(budget(4096), "claude-sonnet-4-5", 4096),
            Err(ReasoningError::BudgetNotBelowMaxTokens { budget_tokens: 4096, max_tokens: 4096 })
        );
        assert_eq!(
            map(budget(2048), "claude-opus-4-7", 4096),
            Err(ReasoningError::BudgetNotSupported { model: "claude-opus-4-7".into() })
        );
        assert_eq!(
            map(ReasoningConfig::new(ReasoningEffort::Low), "claude-sonnet-4-5", 1000),
            Err(ReasoningError::MaxTokensTooSmall { max_tokens: 1000, minimum: 1024, needed: 1366 })
        );
        assert!(map(ReasoningConfig::new(ReasoningEffort::Low), "claude-sonnet-4-5", 1366).is_ok());
    }

    #[test]
    fn temperature_and_forced_tools_are_rejected_with_thinking_on() {
        let on = ReasoningConfig::new(ReasoningEffort::Medium);
        assert_eq!(
            anthropic_thinking(&on, "claude-opus-4-6", 4096, Some(0.2), false),
            Err(ReasoningError::TemperatureWithThinking { temperature: 0.2 })
        );
        assert!(anthropic_thinking(&on, "claude-opus-4-6", 4096, Some(1.0), false).is_ok());
        assert_eq!(anthropic_thinking(&on, "claude-opus-4-6", 4096, None, true), Err(ReasoningError::ForcedToolChoice));
        // Off: nothing to check.
        assert_eq!(anthropic_thinking(&ReasoningConfig::off(), "claude-opus-4-6", 4096, Some(0.2), true), Ok(None));
    }
}
