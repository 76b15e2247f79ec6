//! The journal of a durable run: each side effect one Restate step.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use restate_sdk::prelude::*;
use toolloop::model::ModelErrorKind;
use toolloop::run::journal::{self, Journal, JournalError, Step, ask};
use toolloop::run::{Approver, Decision};
use toolloop::tool::ToolExecution;
use toolloop::{CancellationToken, Cancelled, ModelError, ModelResponse, ToolCall};

use crate::BoxFuture;
use crate::approvals;
use crate::context::{DurableContext, StepWork};
use crate::key::with_key;

/// The [`Journal`] of a run inside a Restate handler: every model call,
/// summary, tool execution and clock reading is one `ctx.run` step, every
/// approval a durable promise.
///
/// - A model call is the step `model call N`; the provider's own retries
///   happen inside it. A call that fails with a retryable error (rate
///   limit, overload, server, timeout, connection) fails the step, which
///   Restate retries under the [retry policy](Self::retry_policy); when
///   that gives up, or for any other error, the run ends with
///   [`Termination::ModelError`](toolloop::run::Termination::ModelError),
///   its conversation consistent.
/// - A tool execution is the step `tool NAME CALL_ID`, with its
///   [`idempotency_key`](crate::idempotency_key) set. A tool's error is a
///   result the model sees, recorded like a success.
/// - An approval ([`Decision::Ask`](toolloop::run::Decision::Ask)) with
///   an approver on the run asks it inside the step `approval NAME CALL_ID`;
///   without one, or when the approver answers `Ask` too (it passes the
///   call on), it is a durable promise listed in [`ToolApprovals`](crate::ToolApprovals)
///   until a person decides, or the [approval timeout](Self::approval_timeout)
///   denies it with a reason the model sees. The invocation suspends
///   meanwhile: no worker holds it.
/// - The calls of one response run in turn, in call order, each call's
///   approval and execution done before the next call begins, whatever
///   [`parallel_tool_calls`](toolloop::AgentBuilder::parallel_tool_calls)
///   says ([`Journal::parallel_steps`] is `false`). Restate's Rust SDK
///   cannot have two steps or promises of an invocation awaited apart:
///   only the last one polled is woken when Restate answers, so the other
///   never resumes; and a replay hands recorded outcomes back in the order
///   the steps are issued, so a call's later steps must not be issued in
///   the order earlier ones finished (which a person's decision or a slow
///   approver sets). In turn, a batch of calls needing a person asks about
///   one call at a time: the next is listed in [`ToolApprovals`](crate::ToolApprovals)
///   once the one before it is decided and done.
/// - Cancelling the invocation (Restate's cancel) stops the run as
///   [`Termination::Cancelled`](toolloop::run::Termination::Cancelled).
///
/// Every step records its outcome in toolloop's recorded form
/// ([`journal::encode`], versioned by [`JOURNAL_FORMAT`](toolloop::run::journal::JOURNAL_FORMAT));
/// a recorded step that no longer reads (written by an incompatible
/// version) stops the run, and [`failure`](Self::failure) says which.
pub struct RestateJournal<'c> {
    ctx: DurableContext<'c>,
    cancel: CancellationToken,
    retry: RunRetryPolicy,
    approvals_key: String,
    approval_timeout: Option<Duration>,
    /// The wall-clock time of the run's first clock reading.
    started: Mutex<Option<Duration>>,
    failure: Mutex<Option<JournalError>>,
}

impl std::fmt::Debug for RestateJournal<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RestateJournal")
            .field("ctx", &self.ctx)
            .field("approvals_key", &self.approvals_key)
            .field("approval_timeout", &self.approval_timeout)
            .finish_non_exhaustive()
    }
}

/// How often a step that failed with a retryable error is tried, by default.
pub const DEFAULT_STEP_ATTEMPTS: u32 = 3;

impl<'c> RestateJournal<'c> {
    /// The journal of a run in the handler whose context is `ctx`.
    pub fn new(ctx: impl Into<DurableContext<'c>>) -> Self {
        let ctx = ctx.into();
        let approvals_key = ctx.key().unwrap_or(ctx.invocation_id()).to_owned();
        Self {
            ctx,
            cancel: CancellationToken::new(),
            retry: RunRetryPolicy::new()
                .initial_delay(Duration::from_millis(200))
                .exponentiation_factor(2.0)
                .max_delay(Duration::from_secs(10))
                .max_attempts(DEFAULT_STEP_ATTEMPTS),
            approvals_key,
            approval_timeout: None,
            started: Mutex::new(None),
            failure: Mutex::new(None),
        }
    }

    /// How Restate retries a step that failed with a retryable error
    /// (default: [`DEFAULT_STEP_ATTEMPTS`] attempts, 200 ms apart, doubling).
    #[must_use]
    pub fn retry_policy(mut self, policy: RunRetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Denies a call nobody decided on within `timeout`; the model sees why.
    /// Without it, a pending approval waits as long as it takes. The calls
    /// of a batch wait in turn, so each has its own `timeout`, counted from
    /// when it is listed.
    #[must_use]
    pub fn approval_timeout(mut self, timeout: Duration) -> Self {
        self.approval_timeout = Some(timeout);
        self
    }

    /// The [`ToolApprovals`](crate::ToolApprovals) key pending approvals are
    /// listed under: by default the object's key (a session's id), or the
    /// invocation id in a service.
    #[must_use]
    pub fn approvals_key(mut self, key: impl Into<String>) -> Self {
        self.approvals_key = key.into();
        self
    }

    /// Where pending approvals of this run are listed.
    pub fn pending_approvals_key(&self) -> &str {
        &self.approvals_key
    }

    /// The token that stops the run: pass it to
    /// [`Agent::run_journaled`](toolloop::Agent::run_journaled). The journal
    /// cancels it when Restate cancels the invocation.
    pub fn cancel_token(&self) -> &CancellationToken {
        &self.cancel
    }

    /// The recorded step the run could not read, if any; the run was
    /// stopped there.
    pub fn failure(&self) -> Option<JournalError> {
        self.failure.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    fn invocation_id(&self) -> &str {
        self.ctx.invocation_id()
    }

    /// Stops the run on an entry it cannot read.
    fn fail(&self, error: JournalError) {
        tracing::error!(%error, "a journal entry does not read; the run stops");
        self.failure.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert(error);
        self.cancel.cancel();
    }

    /// One step: its recorded JSON, or `None` when the run must stop
    /// (cancelled, or its entry does not read), after stopping it.
    async fn step<T: serde::de::DeserializeOwned>(
        &self,
        name: &str,
        work: StepWork<'_>,
    ) -> Option<Result<T, TerminalError>> {
        match self.ctx.run_step(name.to_owned(), self.retry.clone(), work).await {
            Ok(json) => match journal::decode::<T>(name, &json) {
                Ok(value) => Some(Ok(value)),
                Err(error) => {
                    self.fail(error);
                    None
                }
            },
            Err(error) if is_cancellation(&error) => {
                self.cancel.cancel();
                None
            }
            Err(error) => Some(Err(error)),
        }
    }
}

fn is_cancellation(error: &TerminalError) -> bool {
    error.code() == 409
}

/// A step's outcome as recorded JSON.
fn recorded<T: serde::Serialize>(value: T) -> HandlerResult<Json<serde_json::Value>> {
    let json = journal::encode(&value).map_err(|error| TerminalError::new(error.to_string()))?;
    Ok(Json(json))
}

/// A retryable model error, for Restate to retry the step; its message is
/// the error in recorded form, so the run reads it back when Restate gives up.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Retryable(String);

fn retryable(error: &ModelError) -> HandlerError {
    HandlerError::from(Retryable(serde_json::to_string(error).unwrap_or_else(|_| error.to_string())))
}

/// The model error of a step Restate gave up on.
fn gave_up(error: &TerminalError) -> ModelError {
    match serde_json::from_str::<ModelError>(error.message()) {
        Ok(recorded) => recorded,
        Err(_) => ModelError::new(ModelErrorKind::Journal, "restate", error.message().to_owned()),
    }
}

async fn model_step(call: BoxFuture<'_, Result<ModelResponse, ModelError>>) -> HandlerResult<Json<serde_json::Value>> {
    match call.await {
        Ok(response) => recorded(Ok::<ModelResponse, ModelError>(response)),
        Err(error) if error.is_retryable() => Err(retryable(&error)),
        Err(error) => recorded(Err::<ModelResponse, ModelError>(error)),
    }
}

impl Journal for RestateJournal<'_> {
    fn model_call<'a>(
        &'a self,
        step: Step<'a>,
        call: BoxFuture<'a, Result<ModelResponse, ModelError>>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(async move {
            let name = step.to_string();
            let work = Box::pin(model_step(call));
            match self.step::<Result<ModelResponse, ModelError>>(&name, work).await {
                Some(Ok(record)) => record,
                Some(Err(error)) => Err(gave_up(&error)),
                // The run's token is cancelled: the run stops there.
                None => std::future::pending().await,
            }
        })
    }

    fn summary<'a>(
        &'a self,
        step: Step<'a>,
        summarise: BoxFuture<'a, Result<String, ModelError>>,
    ) -> BoxFuture<'a, Result<String, ModelError>> {
        Box::pin(async move {
            let name = step.to_string();
            let work = Box::pin(async move {
                match summarise.await {
                    Ok(summary) => recorded(Ok::<String, ModelError>(summary)),
                    Err(error) if error.is_retryable() => Err(retryable(&error)),
                    Err(error) => recorded(Err::<String, ModelError>(error)),
                }
            });
            match self.step::<Result<String, ModelError>>(&name, work).await {
                Some(Ok(record)) => record,
                Some(Err(error)) => Err(gave_up(&error)),
                None => std::future::pending().await,
            }
        })
    }

    fn tool_execution<'a>(
        &'a self,
        step: Step<'a>,
        execute: BoxFuture<'a, Result<ToolExecution, Cancelled>>,
    ) -> BoxFuture<'a, Result<ToolExecution, Cancelled>> {
        Box::pin(async move {
            let name = step.to_string();
            let call_id = match step {
                Step::ToolExecution { call } => call.id.as_str(),
                _ => "",
            };
            let key = format!("{}/{call_id}", self.invocation_id());
            let work = Box::pin(async move {
                match with_key(key, execute).await {
                    Ok(execution) => recorded(execution),
                    Err(Cancelled) => Err(TerminalError::new_with_code(409, "cancelled").into()),
                }
            });
            // A step cannot fail otherwise: a tool's errors are results.
            if let Some(Ok(execution)) = self.step::<ToolExecution>(&name, work).await {
                Ok(execution)
            } else {
                self.cancel.cancel();
                Err(Cancelled)
            }
        })
    }

    fn approval<'a>(&'a self, call: &'a ToolCall, approver: Option<&'a dyn Approver>) -> BoxFuture<'a, Decision> {
        Box::pin(async move {
            let decided = match approver {
                Some(approver) => {
                    let name = Step::Approval { call }.to_string();
                    let work = Box::pin(async move { recorded(ask(call, Some(approver)).await) });
                    match self.step::<Decision>(&name, work).await {
                        // The approver passed the call on: a person decides,
                        // as when the run has no approver.
                        Some(Ok(Decision::Ask)) => self.wait_for_person(call).await,
                        Some(Ok(approval)) => Ok(approval),
                        Some(Err(error)) => Err(error),
                        None => return std::future::pending().await,
                    }
                }
                None => self.wait_for_person(call).await,
            };
            match decided {
                Ok(approval) => approval,
                Err(error) if is_cancellation(&error) => {
                    self.cancel.cancel();
                    std::future::pending().await
                }
                Err(error) => Decision::Deny(format!("the approval failed: {}", error.message())),
            }
        })
    }

    /// No: a batch's calls go in turn (see [`RestateJournal`]).
    fn parallel_steps(&self) -> bool {
        false
    }

    fn elapsed<'a>(&'a self, step: Step<'a>, measured: Duration) -> BoxFuture<'a, Duration> {
        Box::pin(async move {
            let name = step.to_string();
            let work = Box::pin(async { recorded(SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default()) });
            let Some(Ok(now)) = self.step::<Duration>(&name, work).await else {
                // Stopping (the token is cancelled): what this process measured will do.
                return measured;
            };
            let started = *self.started.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert(now);
            now.saturating_sub(started)
        })
    }
}

impl RestateJournal<'_> {
    fn wait_for_person<'a>(&'a self, call: &'a ToolCall) -> BoxFuture<'a, Result<Decision, TerminalError>> {
        let key = self.approvals_key.clone();
        let invocation = self.invocation_id().to_owned();
        let timeout = self.approval_timeout;
        match self.ctx {
            DurableContext::Service(ctx) => Box::pin(approvals::wait_in_service(ctx, key, call, invocation, timeout)),
            DurableContext::Object(ctx) => Box::pin(approvals::wait_in_object(ctx, key, call, invocation, timeout)),
            DurableContext::Workflow(ctx) => Box::pin(approvals::wait_in_workflow(ctx, key, call, invocation, timeout)),
        }
    }
}

#[cfg(test)]
mod tests {
    use restate_sdk::errors::TerminalError;
    use toolloop::ModelError;
    use toolloop::model::ModelErrorKind;

    use super::gave_up;

    #[test]
    fn a_step_given_up_on_is_its_recorded_model_error_or_a_journal_error() {
        let recorded = ModelError::new(ModelErrorKind::Overloaded, "anthropic", "busy");
        let error = gave_up(&TerminalError::new(serde_json::to_string(&recorded).unwrap()));
        assert_eq!(
            (error.kind(), error.provider(), error.message()),
            (ModelErrorKind::Overloaded, "anthropic", "busy")
        );
        // Anything else Restate ended the step with: the journal's own error, not a model's.
        let error = gave_up(&TerminalError::new("retries exhausted"));
        assert_eq!((error.kind(), error.provider()), (ModelErrorKind::Journal, "restate"));
        assert_eq!(error.message(), "retries exhausted");
    }
}
