//! Resuming a paused run: its deferred calls checked against the caller's
//! resolutions before anything runs, and where the run goes on from.

use super::deferral::{Answer, Checkpoint, Resolution, ResumeError, plan};
use super::outcome::RunError;
use super::tally::Tally;
use crate::conversation::Conversation;
use crate::message::{Message, Role, ToolCall};
use crate::usage::Usage;

/// A resume checked against the conversation: one answer per call of the
/// paused batch, and where the paused run stood.
#[derive(Debug)]
pub(crate) struct Resume {
    pub(crate) answers: Vec<Answer>,
    /// Boxed: a resume is rare, and a run's future holds room for it.
    pub(crate) checkpoint: Box<Checkpoint>,
}

impl Resume {
    /// Checks `resolutions` against the paused batch of `conversation`;
    /// the error of a refused resume otherwise. Changes nothing.
    pub(crate) fn prepare<I, K>(conversation: &Conversation, resolutions: I) -> Result<Self, RunError>
    where
        I: IntoIterator<Item = (K, Resolution)>,
        K: Into<String>,
    {
        let Some(batch) = conversation.pending() else {
            return Err(RunError::invalid_resume(ResumeError::NothingPending));
        };
        let calls: Vec<ToolCall> = conversation
            .last()
            .filter(|last| last.role == Role::Assistant)
            .map(|last| last.tool_calls().cloned().collect())
            .unwrap_or_default();
        let resolutions = resolutions.into_iter().map(|(id, resolution)| (id.into(), resolution)).collect();
        let answers = plan(batch, &calls, resolutions).map_err(|error| match error {
            // A call of an earlier turn: answered long ago.
            ResumeError::UnknownCall { id }
                if conversation.iter().flat_map(Message::tool_calls).any(|c| c.id == id) =>
            {
                RunError::invalid_resume(ResumeError::AlreadyAnswered { id })
            }
            error => RunError::invalid_resume(error),
        })?;
        let checkpoint = Checkpoint::from_value(&batch.checkpoint).map_err(RunError::invalid_resume)?;
        Ok(Self { answers, checkpoint: Box::new(checkpoint) })
    }

    /// A fresh tally holding what the paused run had counted, for its
    /// conversation of `messages` messages.
    pub(crate) fn tally(&self, messages: usize) -> Tally {
        let mut tally = Tally::start();
        self.checkpoint.restore(&mut tally, messages);
        tally
    }

    /// The usage of the paused segment, which the resumed run's span does
    /// not report again.
    pub(crate) fn carried_usage(&self) -> Usage {
        self.checkpoint.usage
    }
}

/// The usage of a run's segment: the run's, less what an earlier segment reported.
pub(crate) fn segment_usage(total: Usage, carried: Usage) -> Usage {
    Usage {
        input_tokens: total.input_tokens.saturating_sub(carried.input_tokens),
        output_tokens: total.output_tokens.saturating_sub(carried.output_tokens),
        cache_read_tokens: total.cache_read_tokens.saturating_sub(carried.cache_read_tokens),
        cache_write_tokens: total.cache_write_tokens.saturating_sub(carried.cache_write_tokens),
        reasoning_tokens: total.reasoning_tokens.saturating_sub(carried.reasoning_tokens),
    }
}

/// Records how the run that ended with `metadata` (or the segment of a
/// paused run it resumed, whose `carried` usage the earlier segment's span
/// reported) ended on its `invoke_agent` span, as plain values.
pub(crate) fn trace_end(span: &tracing::Span, metadata: &super::RunMetadata, carried: Usage) {
    if span.is_disabled() {
        return;
    }
    let termination = &metadata.termination;
    let deferred = match termination {
        super::Termination::Deferred { calls } => Some(*calls),
        _ => None,
    };
    let succeeded = termination.is_success() || termination.is_deferred();
    let usage = segment_usage(metadata.usage, carried);
    crate::telemetry::spans::end_segment(span, usage, &termination.name(), succeeded, deferred);
}
