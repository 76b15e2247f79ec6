//! The calls a paused run left pending, as the conversation keeps them
//! (see [`Conversation::deferred_calls`](super::Conversation::deferred_calls)).
//! How a run pauses and resumes is the run layer's (`crate::run`); the
//! conversation only holds what it needs to go on.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::message::{ToolCall, ToolResult};

/// Why a tool call waits instead of running.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "reason")]
#[non_exhaustive]
pub enum DeferralReason {
    /// Governance wants a decision first ([`Decision::Defer`](crate::run::Decision::Defer),
    /// or the tool [needs approval](crate::run::Governance::needs_approval)):
    /// resume with [`Resolution::Approve`](crate::run::Resolution::Approve) (the tool runs then) or
    /// [`Resolution::Deny`](crate::run::Resolution::Deny).
    Approval(String),
    /// The tool is [external](crate::ToolSet::add_external): the caller
    /// executes it and resumes with [`Resolution::Output`](crate::run::Resolution::Output) or
    /// [`Resolution::Error`](crate::run::Resolution::Error) (or [`Resolution::Deny`](crate::run::Resolution::Deny)).
    External,
    /// The call needs no resolution but waits with the deferred ones: a
    /// call held back by
    /// [`hold_batch_on_deferral`](crate::AgentBuilder::hold_batch_on_deferral)
    /// (it runs, governance first, when the run is resumed), or a typed
    /// agent's output call or `submit` (answered when the run is resumed,
    /// with the verdict governance gave it before the pause).
    Held,
}

impl DeferralReason {
    /// Whether resuming needs a [`Resolution`](crate::run::Resolution) for the call (every reason
    /// but [`Held`](Self::Held)).
    pub fn needs_resolution(&self) -> bool {
        !matches!(self, Self::Held)
    }
}

impl fmt::Display for DeferralReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Approval(reason) => write!(f, "waits for approval: {reason}"),
            Self::External => f.write_str("waits for the caller to execute it"),
            Self::Held => f.write_str("held back until the deferred calls of its batch are resolved"),
        }
    }
}

/// A tool call a run left pending, with why; listed by
/// [`RunError::deferred_calls`](crate::RunError::deferred_calls) and
/// [`Conversation::deferred_calls`](crate::Conversation::deferred_calls).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DeferredCall {
    /// The call, as the model made it (id, tool, arguments).
    pub call: ToolCall,
    /// Why it waits.
    pub reason: DeferralReason,
}

impl DeferredCall {
    /// A deferred call.
    pub fn new(call: ToolCall, reason: DeferralReason) -> Self {
        Self { call, reason }
    }
}

/// The batch of a paused run: the assistant message that made the calls
/// is the conversation's last message; this holds the answers it has so
/// far, the calls still waiting, and where the run was.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct PendingBatch {
    /// Results of the calls that ran (or were refused) before the pause.
    pub(crate) answered: Vec<ToolResult>,
    /// The calls still waiting, in call order.
    pub(crate) deferred: Vec<DeferredCall>,
    /// Where the run was, so that the resumed run goes on from there: the
    /// run layer's checkpoint, kept as data the conversation does not read.
    pub(crate) checkpoint: serde_json::Value,
}
