//! Executing the tool calls of one response: governance, limits, hooks, order.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use futures_util::StreamExt as _;
use futures_util::stream;

use super::control::ExecutedCall;
use super::engine::{Engine, deadline_passed};
use super::governance::Verdict;
use super::hooks::{AuditRecord, Event, HookError};
use super::metadata::Tally;
use super::stop::{Phase, Stop};
use crate::message::{FailureKind, ToolCall, ToolResult};

/// How one call of a batch went.
enum CallOutcome {
    /// It has a result (success, error or denial); the flag says whether
    /// the tool ran (and so whether it counts in the metadata).
    Done(ExecutedCall, bool),
    /// The run stopped while the call was pending.
    Interrupted(Stop),
    /// The run had already stopped, so it was not started.
    Skipped,
}

/// Shared by the calls of one batch, which may run at once.
struct BatchState {
    stopping: AtomicBool,
    executions: AtomicU32,
}

/// Error results for the calls of a truncated response: they may be cut
/// off, so they are not executed.
pub(crate) fn incomplete(calls: &[ToolCall]) -> Vec<Option<ExecutedCall>> {
    calls
        .iter()
        .map(|call| {
            let message = "the response was cut off at the token limit, so this call may be incomplete and was \
                           not executed; call it again";
            Some(ExecutedCall {
                call: call.clone(),
                result: ToolResult::failure(&call.id, FailureKind::Incomplete, message),
                output: None,
            })
        })
        .collect()
}

impl Engine<'_> {
    /// Executes `calls` in order (or up to `parallel` at once, results still
    /// in call order). `counted[i]` says whether call `i` counts toward
    /// `max_tool_executions`. Returns one entry per call (`None` where the
    /// run stopped before a result) and the stop, if any.
    pub(crate) async fn execute_batch(
        &self,
        calls: &[ToolCall],
        counted: &[bool],
        parallel: usize,
        tally: &mut Tally,
        consecutive_failures: &mut u32,
        (attempt, iteration): (u32, u32),
    ) -> (Vec<Option<ExecutedCall>>, Option<Stop>) {
        let state =
            BatchState { stopping: AtomicBool::new(false), executions: AtomicU32::new(tally.limited_tool_calls) };
        let hook_errors = &tally.hook_errors;
        // The futures are made up front (they start only when polled): a
        // closure inside the stream would make the run future not `Send`.
        let pending: Vec<_> = calls
            .iter()
            .zip(counted)
            .map(|(call, &counted)| self.run_call(call, counted, &state, hook_errors, (attempt, iteration)))
            .collect();
        let mut outcomes = stream::iter(pending).buffered(parallel.max(1));

        let mut results = Vec::with_capacity(calls.len());
        let mut stop = None;
        let mut executed_count = 0;
        // Drain every outcome: calls already in flight finish with their real
        // result; calls not yet started see `stopping` and are skipped.
        while let Some(outcome) = outcomes.next().await {
            match outcome {
                CallOutcome::Skipped => results.push(None),
                CallOutcome::Interrupted(interrupted) => {
                    state.stopping.store(true, Ordering::SeqCst);
                    stop.get_or_insert(interrupted);
                    results.push(None);
                }
                CallOutcome::Done(done, executed) => {
                    executed_count += u32::from(executed);
                    if stop.is_none() {
                        stop = self.policy_stop(&done, consecutive_failures);
                        if stop.is_some() {
                            state.stopping.store(true, Ordering::SeqCst);
                        }
                    }
                    results.push(Some(done));
                }
            }
        }
        drop(outcomes);
        tally.tool_calls += executed_count;
        tally.limited_tool_calls = state.executions.load(Ordering::SeqCst);
        (results, stop)
    }

    /// The stop a finished call causes under the stop policies, if any.
    fn policy_stop(&self, done: &ExecutedCall, consecutive_failures: &mut u32) -> Option<Stop> {
        let Some(kind) = done.result.failure else {
            *consecutive_failures = 0;
            return None;
        };
        let denied = matches!(kind, FailureKind::Denied | FailureKind::ApprovalDenied);
        let policy = if denied { self.options.stop_on_denied_tool } else { self.options.stop_on_failed_tool };
        if policy {
            return Some(Stop::ToolPolicy { tool: done.call.name.clone(), kind });
        }
        if denied {
            return None;
        }
        *consecutive_failures += 1;
        match self.options.max_consecutive_tool_failures {
            Some(limit) if *consecutive_failures >= limit => {
                Some(Stop::ConsecutiveToolFailures { count: *consecutive_failures })
            }
            _ => None,
        }
    }

    async fn run_call(
        &self,
        call: &ToolCall,
        counted: bool,
        state: &BatchState,
        hook_errors: &Mutex<Vec<HookError>>,
        (attempt, iteration): (u32, u32),
    ) -> CallOutcome {
        if state.stopping.load(Ordering::SeqCst) {
            return CallOutcome::Skipped;
        }
        self.hooks.fire(&Event::ToolCall { attempt, iteration, call }, hook_errors);
        // Once the tool-call hook has fired, every way out reports a result
        // and an audit record, interrupted calls included.
        let interrupted = |stop: Stop, verdict: Option<Verdict>| {
            let result = super::stop::not_executed(call, &stop);
            let event = Event::ToolResult { attempt, iteration, call, result: &result, elapsed: Duration::ZERO };
            self.hooks.fire(&event, hook_errors);
            let record = AuditRecord {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                input: call.input.clone(),
                verdict: verdict.unwrap_or(Verdict::Interrupted),
                failure: result.failure,
                elapsed_ms: 0,
            };
            self.hooks.fire(&Event::Audit(&record), hook_errors);
            interrupt(state, stop)
        };
        let verdict = tokio::select! {
            biased;
            () = self.cancel.cancelled() => return interrupted(Stop::Cancelled { phase: Phase::ToolExecution }, None),
            () = deadline_passed(self.deadline) => return interrupted(Stop::Deadline, None),
            verdict = self.governance.decide(call) => verdict,
        };
        let (result, output, elapsed, executed) = match &verdict {
            Verdict::Denied(reason) => {
                let message = format!("tool call denied: {reason}");
                (ToolResult::failure(&call.id, FailureKind::Denied, message), None, Duration::ZERO, false)
            }
            Verdict::Rejected(reason) => {
                let message = format!("tool call not approved: {reason}");
                (ToolResult::failure(&call.id, FailureKind::ApprovalDenied, message), None, Duration::ZERO, false)
            }
            // `decide` never answers this; it marks audit records of stopped calls.
            Verdict::Interrupted => {
                let message = "not executed: governance did not decide";
                (ToolResult::failure(&call.id, FailureKind::NotExecuted, message), None, Duration::ZERO, false)
            }
            Verdict::Allowed | Verdict::Approved => {
                if counted
                    && let Some(limit) = self.options.max_tool_executions
                    && state.executions.fetch_add(1, Ordering::SeqCst) >= limit
                {
                    return interrupted(Stop::MaxToolExecutions { limit }, Some(verdict));
                }
                let execution = tokio::select! {
                    biased;
                    () = deadline_passed(self.deadline) => return interrupted(Stop::Deadline, Some(verdict)),
                    execution = self.tools.execute(call, self.cancel) => execution,
                };
                match execution {
                    Ok(execution) => (execution.result, execution.output, execution.elapsed, true),
                    Err(_cancelled) => {
                        let stop = Stop::Cancelled { phase: Phase::ToolExecution };
                        return interrupted(stop, Some(verdict));
                    }
                }
            }
        };
        tracing::debug!(tool = %call.name, id = %call.id, failure = ?result.failure, ?elapsed, "tool call finished");
        self.hooks.fire(&Event::ToolResult { attempt, iteration, call, result: &result, elapsed }, hook_errors);
        let record = AuditRecord {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            input: call.input.clone(),
            verdict,
            failure: result.failure,
            elapsed_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
        };
        self.hooks.fire(&Event::Audit(&record), hook_errors);
        CallOutcome::Done(ExecutedCall { call: call.clone(), result, output }, executed)
    }
}

fn interrupt(state: &BatchState, stop: Stop) -> CallOutcome {
    state.stopping.store(true, Ordering::SeqCst);
    CallOutcome::Interrupted(stop)
}
