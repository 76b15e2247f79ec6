//! What every run reports, however it ended.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;

use super::termination::Termination;
use crate::stop_reason::StopReason;
use crate::usage::Usage;

/// What a run did: attached to every result, success or error.
///
/// Totals and counts only: the details of each fact (who answered each
/// model call, each compaction, each view rewrite, each tool call) are in
/// the run's [`Event`](super::Event)s, which hooks
/// ([`on_event`](crate::AgentBuilder::on_event)) and a streamed run's
/// [`RunStream`](crate::stream::RunStream) see as they happen.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct RunMetadata {
    /// Tokens summed over every model call of every attempt, and over the
    /// [sub-runs](Self::sub_runs). A call that failed counts the tokens the
    /// provider had reported before it failed ([`ModelError::usage`](crate::ModelError::usage)).
    pub usage: Usage,
    /// Attempts started.
    pub attempts: u32,
    /// Iterations over all attempts (each is one model call and its tool calls).
    pub iterations: u32,
    /// Model calls made (including ones that failed), the sub-runs' included.
    pub model_calls: u32,
    /// Tool calls executed (denied and synthetic results not counted), the
    /// sub-runs' included.
    pub tool_calls: u32,
    /// The tools that ran, by name, with how many times each did (as
    /// counted in [`tool_calls`](Self::tool_calls)).
    pub tools_used: BTreeMap<String, u32>,
    /// The models that answered, as `provider/model` (the names the
    /// response gave, else the called model's), with how many model calls
    /// each answered, the sub-runs' included: behind a
    /// [`Fallback`](crate::providers::Fallback), whether and how often the
    /// run fell back. Each call's answer is in its
    /// [`IterationFinished`](super::Event::IterationFinished) event.
    pub models_used: BTreeMap<String, u32>,
    /// Wall time of the run.
    #[serde(with = "millis")]
    pub elapsed: Duration,
    /// Why the run ended: an output, an answer, a signal, or what stopped it.
    pub termination: Termination,
    /// Why the last model response ended: an answer cut off at the token
    /// limit ([`StopReason::MaxTokens`]) or refused ([`StopReason::Refusal`])
    /// shows here. `None` when no model call succeeded.
    pub stop_reason: Option<StopReason>,
    /// Hooks and callbacks that failed or panicked, in order, each as a
    /// message naming the event it was called for and what went wrong
    /// (``hook for `tool_execution_finished` failed: disk full``); the run
    /// went on regardless.
    pub hook_errors: Vec<String>,
    /// How many times the view sent to the model was compacted (see
    /// [`ContextPolicy`](super::ContextPolicy)); each compaction is an
    /// [`Event::Compacted`](super::Event::Compacted) with what it did.
    pub compactions: u32,
    /// The runs its tool calls started ([agents used as tools](crate::agent::AgentTool)),
    /// in call order, each with its own metadata. Their usage, model calls
    /// and tool calls are also counted in this run's totals above, so the
    /// run's [`token_budget`](crate::AgentBuilder::token_budget) and
    /// [`max_model_calls`](crate::AgentBuilder::max_model_calls) count them.
    pub sub_runs: Vec<SubRun>,
}

impl RunMetadata {
    /// The share of the run's prompt tokens read from the provider's prompt
    /// cache (0 to 1), over every model call; `None` when no prompt token
    /// was counted. See [`Usage::cache_hit_share`].
    pub fn cache_hit_share(&self) -> Option<f64> {
        self.usage.cache_hit_share()
    }
}

mod millis {
    use std::time::Duration;

    pub(super) fn serialize<S: serde::Serializer>(value: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(u64::try_from(value.as_millis()).unwrap_or(u64::MAX))
    }

    pub(super) fn deserialize<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
        <u64 as serde::Deserialize>::deserialize(deserializer).map(Duration::from_millis)
    }
}

/// A run that one of a run's tool calls started: an
/// [agent used as a tool](crate::agent::AgentTool). Listed in the parent's
/// [`RunMetadata::sub_runs`], in call order; its usage and counts are also
/// in the parent's totals.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct SubRun {
    /// The id of the tool call that started it.
    pub call_id: String,
    /// The agent's name ([`AgentBuilder::name`](crate::AgentBuilder::name)),
    /// or the tool's when the agent has none.
    pub agent: String,
    /// What it did and why it ended, its own sub-runs included.
    pub metadata: RunMetadata,
}

impl SubRun {
    /// Why it ended.
    pub fn termination(&self) -> &Termination {
        &self.metadata.termination
    }

    /// The tokens it used, its own sub-runs' included.
    pub fn usage(&self) -> Usage {
        self.metadata.usage
    }
}
