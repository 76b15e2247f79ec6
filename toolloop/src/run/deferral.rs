//! Deferred tool calls: calls a run leaves pending for a person to approve
//! or for the caller to execute, and how a resumed run answers them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::governance::Verdict;
use super::metadata::SubRun;
use super::tally::Tally;
use super::termination::AttemptFailure;
pub(crate) use crate::conversation::pending::PendingBatch;
pub use crate::conversation::pending::{DeferralReason, DeferredCall};
use crate::message::{ToolCall, ToolResult};
use crate::stop_reason::StopReason;
use crate::usage::Usage;

/// How the caller answers one deferred call when it resumes the run
/// ([`Agent::resume`](crate::Agent::resume),
/// [`ToolLoop::resume`](super::ToolLoop::resume)).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "resolution")]
#[non_exhaustive]
pub enum Resolution {
    /// Run the call now (a call deferred for [approval](DeferralReason::Approval)).
    Approve,
    /// Do not run it; the model reads an error result
    /// ([`FailureKind::ApprovalDenied`](crate::FailureKind::ApprovalDenied))
    /// saying `reason`. Answers any deferred call.
    Deny {
        /// Why, for the model.
        reason: String,
    },
    /// The caller executed an [external](DeferralReason::External) call:
    /// its output, as the model reads it.
    Output {
        /// What the tool returned.
        content: String,
    },
    /// The caller executed an [external](DeferralReason::External) call and
    /// it failed: the model reads an error result
    /// ([`FailureKind::ToolFailed`](crate::FailureKind::ToolFailed)).
    Error {
        /// What went wrong.
        message: String,
    },
}

impl Resolution {
    /// [`Resolution::Deny`] with `reason`.
    pub fn deny(reason: impl Into<String>) -> Self {
        Self::Deny { reason: reason.into() }
    }

    /// [`Resolution::Output`] with `content`.
    pub fn output(content: impl Into<String>) -> Self {
        Self::Output { content: content.into() }
    }

    /// [`Resolution::Error`] with `message`.
    pub fn error(message: impl Into<String>) -> Self {
        Self::Error { message: message.into() }
    }

    /// The name of the variant, for error messages.
    fn name(&self) -> &'static str {
        match self {
            Self::Approve => "approve",
            Self::Deny { .. } => "deny",
            Self::Output { .. } => "output",
            Self::Error { .. } => "error",
        }
    }
}

/// Why a resume was refused. The conversation is left exactly as it was.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResumeError {
    /// The conversation has no deferred calls: run it instead.
    #[error("the conversation has no deferred tool calls to resume: run it instead")]
    NothingPending,
    /// No call of the conversation has this id.
    #[error("no deferred tool call has the id `{id}`")]
    UnknownCall {
        /// The id given.
        id: String,
    },
    /// The call has a result already.
    #[error("tool call `{id}` is already answered")]
    AlreadyAnswered {
        /// The call's id.
        id: String,
    },
    /// The call was held back and needs no resolution: it runs on resume.
    #[error("tool call `{id}` was held back, not deferred: it runs when the run resumes and takes no resolution")]
    NotDeferred {
        /// The call's id.
        id: String,
    },
    /// A deferred call got no resolution.
    #[error("deferred tool call `{id}` ({reason}) has no resolution")]
    MissingResolution {
        /// The call's id.
        id: String,
        /// Why it was deferred.
        reason: DeferralReason,
    },
    /// Two resolutions name the same call.
    #[error("tool call `{id}` has more than one resolution")]
    DuplicateResolution {
        /// The call's id.
        id: String,
    },
    /// The resolution does not fit why the call was deferred: an output for
    /// a call deferred for approval only, or an approval of an external call
    /// (which the caller executes).
    #[error("tool call `{id}` {reason}, so it cannot be resolved with `{resolution}`")]
    WrongResolution {
        /// The call's id.
        id: String,
        /// Why it was deferred.
        reason: DeferralReason,
        /// The resolution given (`approve`, `deny`, `output`, `error`).
        resolution: &'static str,
    },
    /// The conversation no longer matches its deferred calls: messages were
    /// added or changed after the run paused.
    #[error("the conversation was changed after its run paused, so its deferred calls no longer match: {detail}")]
    Mismatch {
        /// What does not match.
        detail: String,
    },
}

/// What a paused run had done and where it stood: the resumed run counts
/// its limits and reports its metadata over both segments.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Checkpoint {
    pub(crate) attempt: u32,
    pub(crate) iteration: u32,
    /// The attempt's iteration limit, extensions included.
    pub(crate) iteration_limit: u32,
    pub(crate) confirmation_asked: bool,
    pub(crate) consecutive_failures: u32,
    pub(crate) usage: Usage,
    pub(crate) iterations: u32,
    pub(crate) model_calls: u32,
    /// The run's own model calls (its sub-runs' not counted), which number
    /// its journal steps. Absent from the checkpoints of older versions,
    /// which numbered them by `model_calls`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) own_model_calls: Option<u32>,
    pub(crate) tool_calls: u32,
    pub(crate) limited_tool_calls: u32,
    pub(crate) tools_used: BTreeMap<String, u32>,
    /// Absent from the checkpoints of older versions.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) models_used: BTreeMap<String, u32>,
    /// Run time so far; the pause itself does not count.
    pub(crate) elapsed_ms: u64,
    pub(crate) stop_reason: Option<StopReason>,
    /// An agent's failed attempts before the pause.
    pub(crate) attempt_failures: Vec<AttemptFailure>,
    /// Governance's verdicts on the calls of the paused batch it let
    /// through and the pause held back (calls the control answers), by
    /// call id. Absent from the checkpoints of older versions: those calls
    /// are then put to governance again.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) passed: BTreeMap<String, Passed>,
    /// The failures of hooks and callbacks before the pause. Absent from
    /// the checkpoints of older versions (and when there were none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) hook_errors: Vec<String>,
    /// Compactions of the view before the pause. Absent from the
    /// checkpoints of older versions (and when there were none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) compactions: u32,
    /// The sub-runs before the pause (their counts are in the totals
    /// above). Absent from the checkpoints of older versions (and when
    /// there were none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) sub_runs: Vec<SubRun>,
    /// How many of the conversation's last messages are the run's own (the
    /// paused batch's included), counted from the end, so that compacting
    /// the history before the resume does not move them. Absent from the
    /// checkpoints of older versions (the whole history is then the run's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) run_messages: Option<usize>,
    /// The conversations agents used as tools keep in this run
    /// ([`keep_conversation`](crate::agent::AgentTool::keep_conversation)),
    /// by tool. Absent from the checkpoints of older versions (those
    /// start again empty).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) kept_conversations: BTreeMap<String, crate::conversation::Conversation>,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference
fn is_zero(count: &u32) -> bool {
    *count == 0
}

/// Governance's verdict on a call it let through, as a checkpoint keeps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Passed {
    /// The policy allowed it.
    Allowed,
    /// The approver approved it.
    Approved,
}

impl Passed {
    /// The verdict, when it let the call through.
    fn of(verdict: &Verdict) -> Option<Self> {
        match verdict {
            Verdict::Allowed => Some(Self::Allowed),
            Verdict::Approved => Some(Self::Approved),
            _ => None,
        }
    }

    fn verdict(self) -> Verdict {
        match self {
            Self::Allowed => Verdict::Allowed,
            Self::Approved => Verdict::Approved,
        }
    }
}

/// Where an attempt's iteration loop stands.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cursor {
    pub(crate) iteration: u32,
    pub(crate) limit: u32,
    pub(crate) confirmation_asked: bool,
    pub(crate) consecutive_failures: u32,
}

impl Cursor {
    pub(crate) fn start(limit: u32) -> Self {
        Self { iteration: 0, limit, confirmation_asked: false, consecutive_failures: 0 }
    }
}

impl Checkpoint {
    /// The checkpoint as the conversation keeps it (opaque to it).
    pub(crate) fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("a checkpoint is plain data: numbers, strings and maps with string keys")
    }

    /// The checkpoint a conversation kept; one that does not read (edited,
    /// or from an incompatible toolloop) is a mismatch, as is one past its
    /// own iteration limit (a run never pauses there: the iteration-limit
    /// hook is told the limit in force as the iterations made).
    pub(crate) fn from_value(value: &serde_json::Value) -> Result<Self, ResumeError> {
        let checkpoint = Self::deserialize(value).map_err(|error| ResumeError::Mismatch {
            detail: format!("the paused run's checkpoint does not read: {error}"),
        })?;
        if checkpoint.iteration > checkpoint.iteration_limit {
            return Err(ResumeError::Mismatch {
                detail: format!(
                    "the paused run's checkpoint is past its iteration limit ({} of {})",
                    checkpoint.iteration, checkpoint.iteration_limit
                ),
            });
        }
        Ok(checkpoint)
    }

    /// A snapshot of `tally` at `cursor`, in `attempt`, of a conversation
    /// of `messages` messages.
    pub(crate) fn capture(tally: &Tally, attempt: u32, cursor: Cursor, messages: usize) -> Self {
        Self {
            attempt,
            iteration: cursor.iteration,
            iteration_limit: cursor.limit,
            confirmation_asked: cursor.confirmation_asked,
            consecutive_failures: cursor.consecutive_failures,
            usage: tally.usage,
            iterations: tally.iterations,
            model_calls: tally.model_calls,
            own_model_calls: Some(tally.own_model_calls),
            tool_calls: tally.tool_calls,
            limited_tool_calls: tally.limited_tool_calls,
            tools_used: tally.tools_used.clone(),
            models_used: tally.models_used.clone(),
            elapsed_ms: u64::try_from(tally.started.elapsed().as_millis()).unwrap_or(u64::MAX),
            stop_reason: tally.stop_reason.clone(),
            attempt_failures: Vec::new(),
            passed: tally.held.iter().filter_map(|(id, verdict)| Some((id.clone(), Passed::of(verdict)?))).collect(),
            hook_errors: tally.hook_errors.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone(),
            compactions: tally.compactions,
            sub_runs: tally.sub_runs.clone(),
            run_messages: Some(messages.saturating_sub(tally.first_message)),
            kept_conversations: tally.nested.kept(),
        }
    }

    /// The cursor of the paused attempt.
    pub(crate) fn cursor(&self) -> Cursor {
        Cursor {
            iteration: self.iteration,
            limit: self.iteration_limit,
            confirmation_asked: self.confirmation_asked,
            consecutive_failures: self.consecutive_failures,
        }
    }

    /// Puts what the paused run had counted back into a fresh `tally`, for
    /// a conversation of `messages` messages.
    pub(crate) fn restore(&self, tally: &mut Tally, messages: usize) {
        tally.usage = self.usage;
        tally.attempts = self.attempt;
        tally.iterations = self.iterations;
        tally.model_calls = self.model_calls;
        tally.own_model_calls = self.own_model_calls.unwrap_or(self.model_calls);
        tally.tool_calls = self.tool_calls;
        tally.limited_tool_calls = self.limited_tool_calls;
        tally.tools_used.clone_from(&self.tools_used);
        tally.models_used.clone_from(&self.models_used);
        tally.stop_reason.clone_from(&self.stop_reason);
        tally.held = self.passed.iter().map(|(id, passed)| (id.clone(), passed.verdict())).collect();
        self.hook_errors.clone_into(tally.hook_errors.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner));
        tally.compactions = self.compactions;
        tally.sub_runs.clone_from(&self.sub_runs);
        tally.first_message = self.run_messages.map_or(0, |own| messages.saturating_sub(own));
        if !self.kept_conversations.is_empty() {
            tally.nested = std::sync::Arc::new(super::sub_runs::SubRuns::keeping(self.kept_conversations.clone()));
        }
        tally.position = (self.attempt, self.iteration);
        let elapsed = std::time::Duration::from_millis(self.elapsed_ms);
        tally.started = tally.started.checked_sub(elapsed).unwrap_or(tally.started);
    }
}

/// How each call of the paused batch is answered on resume.
#[derive(Debug)]
pub(crate) enum Answer {
    /// It has its result already.
    Answered(ToolResult),
    /// It runs now, without asking governance again (approved).
    Approved,
    /// It runs now (held back): through governance, unless governance let
    /// it through before the pause (see [`Checkpoint::passed`]).
    Held,
    /// Its result is given (denied, or executed by the caller); the verdict
    /// is what the audit record says.
    Given(ToolResult, Verdict),
}

/// The paused batch, checked against `resolutions`: one answer per call of
/// the conversation's last message, in call order. The conversation is not
/// changed.
pub(crate) fn plan(
    batch: &PendingBatch,
    calls: &[ToolCall],
    resolutions: Vec<(String, Resolution)>,
) -> Result<Vec<Answer>, ResumeError> {
    use crate::message::FailureKind;

    check_match(batch, calls)?;
    let mut given: BTreeMap<String, Resolution> = BTreeMap::new();
    for (id, resolution) in resolutions {
        let Some(deferred) = batch.deferred.iter().find(|deferred| deferred.call.id == id) else {
            if batch.answered.iter().any(|result| result.call_id == id) || calls.iter().any(|call| call.id == id) {
                return Err(ResumeError::AlreadyAnswered { id });
            }
            return Err(ResumeError::UnknownCall { id });
        };
        let fits = match (&deferred.reason, &resolution) {
            (DeferralReason::Held, _) => return Err(ResumeError::NotDeferred { id }),
            (_, Resolution::Deny { .. })
            | (DeferralReason::Approval(_), Resolution::Approve)
            | (DeferralReason::External, Resolution::Output { .. } | Resolution::Error { .. }) => true,
            _ => false,
        };
        if !fits {
            let reason = deferred.reason.clone();
            return Err(ResumeError::WrongResolution { id, reason, resolution: resolution.name() });
        }
        if given.contains_key(&id) {
            return Err(ResumeError::DuplicateResolution { id });
        }
        given.insert(id, resolution);
    }
    if let Some(missing) = batch
        .deferred
        .iter()
        .find(|deferred| deferred.reason.needs_resolution() && !given.contains_key(&deferred.call.id))
    {
        return Err(ResumeError::MissingResolution { id: missing.call.id.clone(), reason: missing.reason.clone() });
    }
    Ok(calls
        .iter()
        .map(|call| {
            if let Some(result) = batch.answered.iter().find(|result| result.call_id == call.id) {
                return Answer::Answered(result.clone());
            }
            match given.remove(&call.id) {
                None => Answer::Held,
                Some(Resolution::Approve) => Answer::Approved,
                Some(Resolution::Deny { reason }) => {
                    let message = format!("tool call not approved: {reason}");
                    let result = ToolResult::failure(&call.id, FailureKind::ApprovalDenied, message);
                    Answer::Given(result, Verdict::ApprovalDenied(reason))
                }
                Some(Resolution::Output { content }) => {
                    Answer::Given(ToolResult::success(&call.id, content), Verdict::Allowed)
                }
                Some(Resolution::Error { message }) => {
                    Answer::Given(ToolResult::failure(&call.id, FailureKind::ToolFailed, message), Verdict::Allowed)
                }
            }
        })
        .collect())
}

/// Checks that the paused batch answers exactly the calls of the
/// conversation's last message, each once.
fn check_match(batch: &PendingBatch, calls: &[ToolCall]) -> Result<(), ResumeError> {
    let mismatch = |detail: String| Err(ResumeError::Mismatch { detail });
    if calls.is_empty() {
        return mismatch("the last message is not the model's message with the deferred calls".to_owned());
    }
    let mut ids: Vec<&str> = batch.answered.iter().map(|result| &*result.call_id).collect();
    for deferred in &batch.deferred {
        match calls.iter().find(|call| call.id == deferred.call.id) {
            Some(call) if *call == deferred.call => ids.push(&deferred.call.id),
            Some(_) => return mismatch(format!("tool call `{}` was changed", deferred.call.id)),
            None => return mismatch(format!("tool call `{}` is not in the last message", deferred.call.id)),
        }
    }
    for call in calls {
        match ids.iter().filter(|id| **id == call.id).count() {
            1 => {}
            0 => return mismatch(format!("tool call `{}` is neither answered nor deferred", call.id)),
            _ => return mismatch(format!("tool call `{}` is answered more than once", call.id)),
        }
    }
    if ids.len() != calls.len() {
        return mismatch("the paused batch answers calls the last message does not make".to_owned());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{Checkpoint, Cursor};
    use crate::run::tally::Tally;

    /// What a checkpoint keeps comes back after JSON into a fresh tally:
    /// the counts a resumed run's metadata adds to.
    #[test]
    fn a_checkpoint_keeps_the_counts_through_json() {
        let mut tally = Tally::start();
        tally.model_calls = 5;
        tally.own_model_calls = 3;
        tally.compactions = 2;
        tally.push_hook_error("tool_execution_started", "cannot log");
        tally.first_message = 4;
        let json = serde_json::to_string(&Checkpoint::capture(&tally, 1, Cursor::start(10), 7)).unwrap();
        let checkpoint: Checkpoint = serde_json::from_str(&json).unwrap();
        let mut restored = Tally::start();
        // Compacted meanwhile to 5 messages: the run's own 3 are the last 3.
        checkpoint.restore(&mut restored, 5);
        assert_eq!((restored.model_calls, restored.own_model_calls, restored.compactions), (5, 3, 2));
        assert_eq!(restored.first_message, 2);
        assert_eq!(*restored.hook_errors.lock().unwrap(), *tally.hook_errors.lock().unwrap());

        // A checkpoint of an earlier version: its steps were numbered by every model call.
        let mut old: serde_json::Value = serde_json::from_str(&json).unwrap();
        for field in ["own_model_calls", "hook_errors", "compactions", "run_messages"] {
            old.as_object_mut().unwrap().remove(field);
        }
        let checkpoint: Checkpoint = serde_json::from_value(old).unwrap();
        let mut restored = Tally::start();
        checkpoint.restore(&mut restored, 7);
        assert_eq!((restored.own_model_calls, restored.compactions, restored.first_message), (5, 0, 0));
        assert!(restored.hook_errors.lock().unwrap().is_empty());
    }
}
