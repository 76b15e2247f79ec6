//! What a run returns: its output, or an error; both carry the metadata.

use std::error::Error;
use std::fmt;

use super::deferral::{DeferredCall, ResumeError};
use super::metadata::RunMetadata;
use super::termination::{AttemptFailure, Termination};
use crate::cancel::Cancelled;
use crate::message::FailureKind;
use crate::model::ModelError;

/// A successful run of an [`Agent`](crate::Agent) or a
/// [`ToolLoop`](super::ToolLoop): the output and what the run did.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct RunOutput<T> {
    /// The text answer, the validated typed output, or how the loop ended.
    pub output: T,
    /// Usage, attempts, iterations, calls, elapsed time, hook errors, and
    /// [why the run ended](RunMetadata::termination).
    pub metadata: RunMetadata,
}

/// A failed run of an [`Agent`](crate::Agent) or a [`ToolLoop`](super::ToolLoop).
///
/// - [`termination`](Self::termination) says why it ended (a limit, a
///   cancellation, a model error, failed validation...); `Display` says it
///   in words.
/// - [`source`](Error::source) is the underlying error, when there is one:
///   the [`ModelError`], the failed tool call under a stop policy, the
///   [`Cancelled`] token.
/// - [`metadata`](Self::metadata) says what the run did, as on success.
/// - The conversation passed to the run holds everything done so far, with
///   every tool call answered, so it can be inspected or sent again.
///
/// The error is one pointer wide, so `Result<_, RunError>` stays small.
pub struct RunError {
    inner: Box<Inner>,
}

struct Inner {
    metadata: RunMetadata,
    cause: Option<Cause>,
    attempt_failures: Vec<AttemptFailure>,
}

/// The error underneath a stop.
#[derive(Debug)]
pub(crate) enum Cause {
    Model(ModelError),
    Cancelled(Cancelled),
    Tool(ToolCallFailed),
    /// The run paused; not an error underneath.
    Deferred(Vec<DeferredCall>),
    Resume(ResumeError),
}

/// A tool call whose failure ended the run under a stop policy.
#[derive(Debug, thiserror::Error)]
#[error("tool `{tool}` failed ({kind}): {message}")]
pub(crate) struct ToolCallFailed {
    pub(crate) tool: String,
    pub(crate) kind: FailureKind,
    pub(crate) message: String,
}

/// Why a loop stopped early, with the error underneath; becomes a
/// [`RunError`] once the run's metadata is known.
#[derive(Debug)]
pub(crate) struct Stop {
    pub(crate) termination: Termination,
    pub(crate) cause: Option<Cause>,
}

impl Stop {
    pub(crate) fn new(termination: Termination) -> Self {
        let cause = match termination {
            Termination::Cancelled { .. } => Some(Cause::Cancelled(Cancelled)),
            _ => None,
        };
        Self { termination, cause }
    }

    pub(crate) fn model(error: ModelError) -> Self {
        Self { termination: Termination::ModelError, cause: Some(Cause::Model(error)) }
    }

    /// The run pauses with `calls` pending.
    pub(crate) fn deferred(calls: Vec<DeferredCall>) -> Self {
        let waiting = calls.iter().filter(|deferred| deferred.reason.needs_resolution()).count();
        let termination = Termination::Deferred { calls: u32::try_from(waiting).unwrap_or(u32::MAX) };
        Self { termination, cause: Some(Cause::Deferred(calls)) }
    }

    /// The calls the run paused with, when it did.
    pub(crate) fn deferred_calls(&self) -> Option<&[DeferredCall]> {
        match &self.cause {
            Some(Cause::Deferred(calls)) => Some(calls),
            _ => None,
        }
    }

    pub(crate) fn tool(tool: &str, kind: FailureKind, message: &str) -> Self {
        let termination = Termination::ToolPolicy { tool: tool.to_owned(), kind };
        let failed = ToolCallFailed { tool: tool.to_owned(), kind, message: message.to_owned() };
        Self { termination, cause: Some(Cause::Tool(failed)) }
    }
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.termination.fmt(f)
    }
}

impl RunError {
    /// The error of a run that ended with `stop`; `metadata.termination`
    /// must be `stop.termination`.
    pub(crate) fn new(stop: Stop, metadata: RunMetadata) -> Self {
        debug_assert_eq!(stop.termination, metadata.termination);
        Self { inner: Box::new(Inner { metadata, cause: stop.cause, attempt_failures: Vec::new() }) }
    }

    /// The error of a run that does not start on `conversation`: it has
    /// deferred calls, or nothing to answer.
    pub(crate) fn cannot_start(conversation: &crate::Conversation) -> Option<Self> {
        if conversation.is_pending() {
            let waiting = conversation.deferred_calls().iter().filter(|call| call.reason.needs_resolution()).count();
            let termination = Termination::PendingCalls { calls: u32::try_from(waiting).unwrap_or(u32::MAX) };
            let metadata = super::tally::Tally::start().finish(termination.clone());
            return Some(Self::new(Stop::new(termination), metadata));
        }
        Self::nothing_to_answer(conversation)
    }

    /// The error of a resume refused for `error`.
    pub(crate) fn invalid_resume(error: ResumeError) -> Self {
        let termination = Termination::InvalidResume;
        let metadata = super::tally::Tally::start().finish(termination.clone());
        Self::new(Stop { termination, cause: Some(Cause::Resume(error)) }, metadata)
    }

    /// The error of a run that does not start because `conversation` gives
    /// the model nothing to answer (see [`Termination::NothingToAnswer`]);
    /// `None` when it ends with a user message (the caller's, or tool results).
    pub(crate) fn nothing_to_answer(conversation: &crate::Conversation) -> Option<Self> {
        if conversation.last().is_some_and(|message| message.role == crate::Role::User) {
            return None;
        }
        let termination = Termination::NothingToAnswer;
        let metadata = super::tally::Tally::start().finish(termination.clone());
        Some(Self::new(Stop::new(termination), metadata))
    }

    /// Attaches the failures of an agent's attempts.
    pub(crate) fn with_attempt_failures(mut self, failures: Vec<AttemptFailure>) -> Self {
        self.inner.attempt_failures = failures;
        self
    }

    /// Why the run ended (the same as `metadata().termination`).
    pub fn termination(&self) -> &Termination {
        &self.inner.metadata.termination
    }

    /// What the run did before it failed: usage, counts, hook errors.
    pub fn metadata(&self) -> &RunMetadata {
        &self.inner.metadata
    }

    /// The metadata, by value.
    pub fn into_metadata(self) -> RunMetadata {
        self.inner.metadata
    }

    /// The failed model call, when that ended the run
    /// ([`Termination::ModelError`]).
    pub fn model_error(&self) -> Option<&ModelError> {
        match &self.inner.cause {
            Some(Cause::Model(error)) => Some(error),
            _ => None,
        }
    }

    /// The tool calls the run paused with ([`Termination::Deferred`]), in
    /// call order: each with its id, tool, arguments and why it waits.
    /// Empty for any other ending. The conversation holds them too
    /// ([`Conversation::deferred_calls`](crate::Conversation::deferred_calls)).
    pub fn deferred_calls(&self) -> &[DeferredCall] {
        match &self.inner.cause {
            Some(Cause::Deferred(calls)) => calls,
            _ => &[],
        }
    }

    /// Why a resume was refused ([`Termination::InvalidResume`]).
    pub fn resume_error(&self) -> Option<&ResumeError> {
        match &self.inner.cause {
            Some(Cause::Resume(error)) => Some(error),
            _ => None,
        }
    }

    /// Whether the run paused with tool calls pending (see
    /// [`deferred_calls`](Self::deferred_calls)) rather than failed.
    pub fn is_deferred(&self) -> bool {
        self.termination().is_deferred()
    }

    /// Why each failed attempt of an agent failed, in order: every attempt
    /// when the run ended with [`Termination::ValidationFailed`] or
    /// [`Termination::NoOutputCall`], the attempts before the last one
    /// otherwise.
    pub fn attempt_failures(&self) -> &[AttemptFailure] {
        &self.inner.attempt_failures
    }
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let termination = self.termination();
        termination.fmt(f)?;
        // When every attempt failed, the attempts' errors are the run's
        // story rather than one cause underneath it: told here, not through
        // `source`.
        if !matches!(termination, Termination::ValidationFailed { .. } | Termination::NoOutputCall { .. }) {
            return Ok(());
        }
        for (index, failure) in self.attempt_failures().iter().enumerate() {
            f.write_str(if index == 0 { ": " } else { " | " })?;
            failure.fmt(f)?;
        }
        Ok(())
    }
}

impl fmt::Debug for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut debug = f.debug_struct("RunError");
        debug.field("termination", self.termination());
        if let Some(cause) = &self.inner.cause {
            debug.field("cause", cause);
        }
        if !self.inner.attempt_failures.is_empty() {
            debug.field("attempt_failures", &self.inner.attempt_failures);
        }
        debug.field("metadata", self.metadata()).finish()
    }
}

impl Error for RunError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self.inner.cause.as_ref()? {
            Cause::Model(error) => Some(error),
            Cause::Cancelled(cancelled) => Some(cancelled),
            Cause::Tool(failed) => Some(failed),
            Cause::Resume(error) => Some(error),
            Cause::Deferred(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;
    use std::mem::size_of;

    use super::*;
    use crate::model::ModelErrorKind;
    use crate::run::tally::Tally;

    fn error(stop: Stop) -> RunError {
        let metadata = Tally::start().finish(stop.termination.clone());
        RunError::new(stop, metadata)
    }

    #[test]
    fn a_run_error_is_one_pointer_wide() {
        assert_eq!(size_of::<RunError>(), size_of::<usize>());
        assert_eq!(size_of::<Result<(), RunError>>(), size_of::<usize>());
    }

    #[tokio::test]
    async fn the_source_is_the_model_error_and_display_says_what_happened() {
        let model = ModelError::new(ModelErrorKind::RateLimited, "test", "slow down");
        let error = error(Stop::model(model));
        assert_eq!(error.to_string(), "the model call failed");
        let source = error.source().expect("a model error is the source");
        assert!(source.downcast_ref::<ModelError>().is_some());
        assert_eq!(error.model_error().map(ModelError::kind), Some(ModelErrorKind::RateLimited));
        assert!(format!("{error:?}").contains("RateLimited"), "{error:?}");
    }

    #[tokio::test]
    async fn a_tool_policy_stop_chains_to_the_failed_call() {
        let error = error(Stop::tool("lookup", FailureKind::ToolFailed, "no row"));
        assert_eq!(error.to_string(), "tool `lookup` ended with `tool_failed` and the stop policy ends the run");
        assert_eq!(error.source().unwrap().to_string(), "tool `lookup` failed (tool_failed): no row");
    }

    #[tokio::test]
    async fn limits_have_no_source_and_attempt_failures_are_listed() {
        let error = error(Stop::new(Termination::ValidationFailed { attempts: 2 })).with_attempt_failures(vec![
            AttemptFailure::Invalid { attempt: 1, errors: vec!["a".into()] },
            AttemptFailure::Invalid { attempt: 2, errors: vec!["b".into(), "c".into()] },
        ]);
        assert!(error.source().is_none());
        assert_eq!(error.to_string(), "no valid output after 2 attempt(s): attempt 1: a | attempt 2: b; c");
    }
}
