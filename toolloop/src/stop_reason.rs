//! Why a model stopped generating.

use serde::{Deserialize, Serialize};

/// Why the model ended its response, in provider-neutral terms.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StopReason {
    /// The model finished its turn.
    EndTurn,
    /// The model wants tools to run.
    ToolUse,
    /// The response hit the token limit and may be cut off.
    MaxTokens,
    /// A stop sequence was generated.
    StopSequence,
    /// The provider paused a long-running turn; send the conversation back to
    /// let it continue (Anthropic `pause_turn`).
    PauseTurn,
    /// The model refused to answer.
    Refusal,
    /// The provider's content filter removed output.
    ContentFilter,
    /// A reason this crate does not know, as the provider spelled it.
    Other(String),
}

impl StopReason {
    /// Whether the response may be cut off, so tool calls in it may be incomplete.
    pub fn is_truncated(&self) -> bool {
        matches!(self, Self::MaxTokens)
    }
}
