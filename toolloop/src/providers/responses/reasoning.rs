//! The reasoning setting for the OpenAI Responses API: the request's
//! `reasoning: {effort, summary}` object. The effort follows Chat
//! Completions' rules (`openai::reasoning`); a summary is asked for only
//! when reasoning is on.

use super::wire::ResponsesReasoning;
use crate::providers::openai::openai_effort;
use crate::reasoning::{ReasoningConfig, ReasoningSummary};

/// The Responses `reasoning` object for `config` on `model`; `None` when it
/// should be left out.
pub(crate) fn responses_reasoning(config: &ReasoningConfig, model: &str) -> Option<ResponsesReasoning> {
    let effort = openai_effort(config.effort, model);
    // A summary of reasoning that is off would be empty.
    let summary = config.summary.filter(|_| config.is_on()).map(ReasoningSummary::as_str);
    (effort.is_some() || summary.is_some()).then_some(ResponsesReasoning { effort, summary })
}

#[cfg(test)]
mod tests {
    use super::{ResponsesReasoning, responses_reasoning};
    use crate::reasoning::{ReasoningConfig, ReasoningEffort, ReasoningSummary};

    #[test]
    fn the_responses_object_carries_effort_and_summary() {
        let config = ReasoningConfig::new(ReasoningEffort::High).with_summary(ReasoningSummary::Auto);
        assert_eq!(
            serde_json::to_value(responses_reasoning(&config, "gpt-5.2").unwrap()).unwrap(),
            serde_json::json!({"effort": "high", "summary": "auto"})
        );
        let off = ReasoningConfig::off().with_summary(ReasoningSummary::Auto);
        assert_eq!(responses_reasoning(&off, "o3"), None);
        assert_eq!(
            responses_reasoning(&off, "gpt-5.1"),
            Some(ResponsesReasoning { effort: Some("none"), summary: None })
        );
    }
}
