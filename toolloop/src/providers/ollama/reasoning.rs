//! The reasoning setting for Ollama's `think` field.
//!
//! The rule, from Ollama's API documentation: `think` is `true` / `false`
//! for most thinking models; some (`gpt-oss`) take a level instead,
//! `"low"`, `"medium"` or `"high"`, which must match exactly.

use super::wire::OllamaThink;
use crate::reasoning::ReasoningEffort;

/// The `think` value for `effort` on `model`.
pub(crate) fn ollama_think(effort: ReasoningEffort, model: &str) -> OllamaThink {
    let levels = model.contains("gpt-oss");
    match effort {
        ReasoningEffort::Off => OllamaThink::Enabled(false),
        _ if !levels => OllamaThink::Enabled(true),
        ReasoningEffort::Low => OllamaThink::Level("low"),
        ReasoningEffort::Medium => OllamaThink::Level("medium"),
        ReasoningEffort::High | ReasoningEffort::Max => OllamaThink::Level("high"),
    }
}

#[cfg(test)]
mod tests {
    use super::{OllamaThink, ollama_think};
    use crate::reasoning::ReasoningEffort;

    #[test]
    fn levels_only_for_models_that_take_them() {
        assert_eq!(ollama_think(ReasoningEffort::Off, "qwen3"), OllamaThink::Enabled(false));
        assert_eq!(ollama_think(ReasoningEffort::High, "qwen3"), OllamaThink::Enabled(true));
        assert_eq!(ollama_think(ReasoningEffort::Max, "gpt-oss:20b"), OllamaThink::Level("high"));
        assert_eq!(ollama_think(ReasoningEffort::Low, "gpt-oss:20b"), OllamaThink::Level("low"));
        assert_eq!(serde_json::to_string(&ollama_think(ReasoningEffort::Off, "gpt-oss")).unwrap(), "false");
        assert_eq!(serde_json::to_string(&ollama_think(ReasoningEffort::Medium, "gpt-oss")).unwrap(), "\"medium\"");
    }
}
