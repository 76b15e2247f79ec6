//! The reasoning setting for OpenAI's effort levels: Chat Completions
//! `reasoning_effort`, and the `effort` of a Responses request's
//! `reasoning` object (`responses::reasoning`).
//!
//! The rules, from OpenAI's API reference (`reasoning.effort`): the values
//! are `none`, `minimal`, `low`, `medium`, `high` and `xhigh`; `gpt-5.1` and
//! later accept `none` (and default to it), earlier models do not, and
//! `gpt-5` turns reasoning down only to `minimal`; `xhigh` is accepted by
//! models after `gpt-5.1-codex-max`; `gpt-5-pro` accepts only `high`.
//! Models outside the `gpt-5` family (the `o` series, compatible servers)
//! get the plain levels, and nothing at all when reasoning is off.

use crate::reasoning::ReasoningEffort;

/// The minor version of a `gpt-5` model id: `gpt-5` and `gpt-5-mini` are
/// 0, `gpt-5.1-codex` is 1, `gpt-5.2` is 2.
fn gpt5_minor(model: &str) -> Option<u32> {
    let rest = model.split_once("gpt-5")?.1;
    match rest.strip_prefix('.') {
        Some(minor) => minor.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok(),
        None if rest.is_empty() || rest.starts_with('-') => Some(0),
        None => None,
    }
}

/// The `reasoning.effort` / `reasoning_effort` value for `effort` on `model`;
/// `None` when the field should be left out.
pub(crate) fn openai_effort(effort: ReasoningEffort, model: &str) -> Option<&'static str> {
    let minor = gpt5_minor(model);
    if model.contains("gpt-5-pro") {
        return (effort != ReasoningEffort::Off).then_some("high");
    }
    match effort {
        ReasoningEffort::Off => match minor {
            Some(0) => Some("minimal"),
            Some(_) => Some("none"),
            None => None,
        },
        ReasoningEffort::Low => Some("low"),
        ReasoningEffort::Medium => Some("medium"),
        ReasoningEffort::Max if minor.is_some_and(|m| m >= 2) || model.contains("codex-max") => Some("xhigh"),
        // Models without `xhigh` top out at `high`.
        ReasoningEffort::High | ReasoningEffort::Max => Some("high"),
    }
}

#[cfg(test)]
mod tests {
    use super::{gpt5_minor, openai_effort};
    use crate::reasoning::ReasoningEffort;

    #[test]
    fn gpt5_versions_parse() {
        assert_eq!(gpt5_minor("gpt-5"), Some(0));
        assert_eq!(gpt5_minor("gpt-5-mini"), Some(0));
        assert_eq!(gpt5_minor("gpt-5.1-codex"), Some(1));
        assert_eq!(gpt5_minor("gpt-5.2"), Some(2));
        assert_eq!(gpt5_minor("o4-mini"), None);
        assert_eq!(gpt5_minor("gpt-50"), None);
    }

    #[test]
    fn efforts_follow_the_model_family() {
        use ReasoningEffort::{High, Low, Max, Medium, Off};
        // (effort, model, what is sent)
        let cases = [
            (Off, "gpt-5.1", Some("none")),
            (Off, "gpt-5", Some("minimal")),
            (Off, "o3", None),
            (Low, "o3", Some("low")),
            (Medium, "gpt-5.1", Some("medium")),
            (High, "gpt-5", Some("high")),
            (Max, "gpt-5.2", Some("xhigh")),
            (Max, "gpt-5.1-codex-max", Some("xhigh")),
            (Max, "gpt-5.1", Some("high")),
            (Low, "gpt-5-pro", Some("high")),
            (Off, "gpt-5-pro", None),
        ];
        for (effort, model, sent) in cases {
            assert_eq!(openai_effort(effort, model), sent, "{effort:?} on {model}");
        }
    }
}
