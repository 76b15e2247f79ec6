//! Executing the tool calls of one response: governance, limits, hooks, order.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use futures_util::StreamExt as _;
use futures_util::future::Either;
use futures_util::stream;
use tracing::{Instrument as _, Span};

use super::control::Control;
use super::deferral::{Answer, DeferralReason, DeferredCall};
use super::engine::Engine;
use super::event::Event;
use super::governance::Verdict;
use super::link::RunLink;
use super::outcome::Stop;
use super::panic::panic_message;
use super::pending::not_executed;
use super::tally::Tally;
use super::termination::{Phase, Termination};
use crate::cancel::{Interruption, guarded};
use crate::message::{FailureKind, ToolCall, ToolResult};
use crate::telemetry::spans;
use crate::tool::{CallScope, ToolExecution};

/// How one call of a batch went.
enum CallOutcome {
    /// It has a result (success, error or denial); the flag says whether
    /// the tool ran (and so whether it counts in the metadata).
    Done(ToolExecution, bool),
    /// Governance let through a call the control answers itself; the
    /// control answers it as the batch's outcomes are collected, in order
    /// (see [`Collected::owned`]). The call's `execute_tool` span stays
    /// open until then: held back with a deferral, it is marked so.
    Owned(Verdict, Span),
    /// The run stopped while the call was pending.
    Interrupted(Stop),
    /// The run had already stopped, so it was not started.
    Skipped,
    /// It waits for a resolution (approval, or the caller's result).
    Deferred(DeferralReason),
    /// Another call of the batch was deferred and the options hold the
    /// rest back, so it was not started.
    Held,
}

/// How one call of a batch is to be answered: by the usual path, or as a
/// resumed run decided.
#[derive(Clone, Copy)]
enum Preset<'a> {
    /// Governance decides, then the tool runs (or the control answers).
    Decide,
    /// Governance decided already: approved when the run was resumed, or
    /// let through before the run paused (a call the control answers, held
    /// back with the deferred ones). It goes on without asking again.
    Decided(&'a Verdict),
    /// Answered when the run was resumed (denied, or executed by the caller).
    Given(&'a ToolResult, &'a Verdict),
}

/// The verdict on a call approved when the run was resumed.
static APPROVED: Verdict = Verdict::Approved;

/// Shared by the calls of one batch, which may run at once.
struct BatchState {
    stopping: AtomicBool,
    /// A call was deferred and the rest of the batch is held back.
    holding: AtomicBool,
    executions: AtomicU32,
    /// What each call's [`ToolContext`](crate::ToolContext) is made from.
    scope: CallScope,
}

/// Cuts `result` to `limit` characters, ending it with a marker the model
/// reads, so it knows the output was longer.
fn cap_result(result: &mut ToolResult, limit: usize) {
    let Some((cut, _)) = result.content.char_indices().nth(limit) else { return };
    let total = result.content.chars().count();
    result.content.truncate(cut);
    let marker = format!("\n[truncated: the tool returned {total} characters; only the first {limit} are shown]");
    result.content.push_str(&marker);
}

/// Whether `kind` says governance refused the call.
fn denied(kind: FailureKind) -> bool {
    matches!(kind, FailureKind::Denied | FailureKind::ApprovalDenied)
}

/// Counts `done` in the run of consecutive failed calls: a success ends
/// the run, a refusal leaves it as it is. Returns whether `done` failed
/// (and so lengthened it).
fn count_failure(done: &ToolExecution, consecutive_failures: &mut u32) -> bool {
    match done.result.failure {
        None => *consecutive_failures = 0,
        Some(kind) if denied(kind) => {}
        Some(_) => {
            *consecutive_failures += 1;
            return true;
        }
    }
    false
}

/// The outcomes of a batch's calls, collected in call order.
struct Collected {
    /// The result of each call so far, when it has one.
    results: Vec<Option<ToolExecution>>,
    /// The stop, once a call stopped the run.
    stop: Option<Stop>,
    /// Why each call waits, for the calls that do.
    waiting: Vec<Option<DeferralReason>>,
    /// The control's calls governance let through, with its verdicts, not
    /// reported yet. The control answers each as it comes (so its answer
    /// meets the stop policies in call order), unless a call before it
    /// waits; the answer is reported and counted once no deferral can
    /// hold the batch back, and dropped when one does.
    owned: Vec<(usize, Verdict, Span)>,
    /// The tools of the calls that ran (or that the control answered), one
    /// entry per call, for the metadata.
    used: Vec<String>,
    /// The run of consecutive failed calls before the batch.
    failures_before: u32,
}

impl Collected {
    fn new(calls: usize, failures_before: u32) -> Self {
        Self {
            results: Vec::with_capacity(calls),
            stop: None,
            waiting: vec![None; calls],
            owned: Vec::new(),
            used: Vec::new(),
            failures_before,
        }
    }

    /// Whether a call waits (for approval, for the caller, held back).
    fn waits(&self) -> bool {
        self.waiting.iter().any(Option::is_some)
    }
}

/// Why a call waits, in one word, as its span records it.
fn deferral_kind(reason: &DeferralReason) -> &'static str {
    match reason {
        DeferralReason::Approval(_) => "approval",
        DeferralReason::External => "external",
        DeferralReason::Held => "held",
    }
}

/// Where a call stands: which attempt and iteration it belongs to.
#[derive(Clone, Copy)]
struct At {
    attempt: u32,
    iteration: u32,
}

impl Engine<'_> {
    /// Executes `calls` in order (or up to `parallel_tool_calls` at once
    /// when the journal allows it, results still in call order); the
    /// control answers the calls to its own tools, in call order. Returns
    /// one entry per call (`None` where the run stopped before a result)
    /// and the stop, if any.
    ///
    /// When calls are deferred and nothing stopped the run, the stop is
    /// [`Stop::deferred`] with them and the calls held back (the control's
    /// calls among them: the control answers them once, when the run is
    /// resumed), and their entries are `None`.
    pub(crate) async fn execute_batch<S>(
        &self,
        calls: &[ToolCall],
        control: &mut dyn Control<S>,
        tally: &mut Tally,
        consecutive_failures: &mut u32,
        at: (u32, u32),
    ) -> (Vec<Option<ToolExecution>>, Option<Stop>) {
        let presets = vec![Preset::Decide; calls.len()];
        self.execute_presets(calls, &presets, control, tally, consecutive_failures, at).await
    }

    /// Answers the calls of a resumed batch as `answers` say (one per call,
    /// in order): answered ones keep their results (and fire no events
    /// again), the others run or get their given results; held calls that
    /// governance let through before the pause (`tally.held`) are not put
    /// to it again. Returns what [`execute_batch`](Self::execute_batch)
    /// does, over the whole batch.
    pub(crate) async fn resume_batch<S>(
        &self,
        calls: &[ToolCall],
        answers: &[Answer],
        control: &mut dyn Control<S>,
        tally: &mut Tally,
        consecutive_failures: &mut u32,
        at: (u32, u32),
    ) -> (Vec<Option<ToolExecution>>, Option<Stop>) {
        let held = std::mem::take(&mut tally.held);
        let passed = |call: &ToolCall| held.iter().find(|(id, _)| *id == call.id).map(|(_, verdict)| verdict);
        let (open, presets): (Vec<ToolCall>, Vec<Preset<'_>>) = calls
            .iter()
            .zip(answers)
            .filter_map(|(call, answer)| {
                let preset = match answer {
                    Answer::Answered(_) => return None,
                    Answer::Approved => Preset::Decided(&APPROVED),
                    Answer::Held => passed(call).map_or(Preset::Decide, Preset::Decided),
                    Answer::Given(result, verdict) => Preset::Given(result, verdict),
                };
                Some((call.clone(), preset))
            })
            .unzip();
        let (mut ran, stop) = self.execute_presets(&open, &presets, control, tally, consecutive_failures, at).await;
        let mut ran = ran.drain(..);
        let results = calls
            .iter()
            .zip(answers)
            .map(|(call, answer)| match answer {
                Answer::Answered(result) => Some(ToolExecution::answered(call, result.clone())),
                _ => ran.next().flatten(),
            })
            .collect();
        (results, stop)
    }

    async fn execute_presets<S>(
        &self,
        calls: &[ToolCall],
        presets: &[Preset<'_>],
        control: &mut dyn Control<S>,
        tally: &mut Tally,
        consecutive_failures: &mut u32,
        (attempt, iteration): (u32, u32),
    ) -> (Vec<Option<ToolExecution>>, Option<Stop>) {
        let at = At { attempt, iteration };
        let state = BatchState {
            stopping: AtomicBool::new(false),
            holding: AtomicBool::new(false),
            executions: AtomicU32::new(tally.limited_tool_calls),
            scope: self.call_scope(tally),
        };
        let shared: &Tally = tally;
        // The futures are made up front (they start only when polled): a
        // closure inside the stream would make the run future not `Send`.
        let pending: Vec<_> = calls
            .iter()
            .zip(presets)
            .map(|(call, preset)| self.run_call(call, *preset, control.owns(&call.name), &state, shared, at))
            .collect();
        let parallel = self.options.parallel_tool_calls.get().min(calls.len());
        // A journal that takes one step at a time gets the calls in turn.
        let mut outcomes = if parallel > 1 && self.journal.parallel() {
            Either::Left(stream::iter(pending).buffered(parallel))
        } else {
            // One at a time (the common batch of one call): each future in
            // turn, without `buffered`'s queue.
            Either::Right(Box::pin(stream::iter(pending).then(|call| call)))
        };

        let mut batch = Collected::new(calls.len(), *consecutive_failures);
        // Drain every outcome: calls already in flight finish with their real
        // result; calls not yet started see `stopping` and are skipped.
        // Outcomes arrive in call order whatever the parallelism, so the
        // control sees its calls in order here.
        let mut calls_left = calls.iter();
        while let Some(outcome) = outcomes.next().await {
            let call = calls_left.next().expect("one outcome per call");
            let index = batch.results.len();
            batch.results.push(None);
            match outcome {
                CallOutcome::Owned(verdict, span) => match &batch.stop {
                    Some(stopped) => {
                        spans::tool_interrupted(&span, &stopped.termination.name());
                        self.report_interrupted(call, stopped, Some(verdict), shared, at);
                    }
                    // A call before it waits: it waits too, unanswered.
                    None if batch.waits() => batch.owned.push((index, verdict, span)),
                    None => {
                        let done = self.answer_owned(call, control);
                        batch.stop = self.policy_stop(&done, consecutive_failures);
                        batch.results[index] = Some(done);
                        batch.owned.push((index, verdict, span));
                    }
                },
                CallOutcome::Skipped => {
                    // Never started, so never reported: reported here, with
                    // the result the conversation will hold.
                    if let Some(stopped) = &batch.stop {
                        self.report_interrupted(call, stopped, None, shared, at);
                    }
                }
                CallOutcome::Deferred(reason) => {
                    if self.options.hold_batch_on_deferral {
                        state.holding.store(true, Ordering::SeqCst);
                    }
                    batch.waiting[index] = Some(reason);
                }
                CallOutcome::Held => batch.waiting[index] = Some(DeferralReason::Held),
                CallOutcome::Interrupted(interrupted) => {
                    batch.stop.get_or_insert(interrupted);
                }
                CallOutcome::Done(done, executed) => {
                    if executed {
                        batch.used.push(done.call.name.clone());
                    }
                    if batch.stop.is_none() {
                        batch.stop = self.policy_stop(&done, consecutive_failures);
                    }
                    batch.results[index] = Some(done);
                }
            }
            if batch.stop.is_some() {
                state.stopping.store(true, Ordering::SeqCst);
                // The run ends with this batch: no deferral holds back the
                // control's answers now.
                self.report_owned(calls, &mut batch, control, shared, at);
            }
        }
        drop(outcomes);
        let deferring = batch.stop.is_none() && batch.waits();
        if deferring {
            tally.held = Self::hold(calls, &mut batch, consecutive_failures);
        } else {
            self.report_owned(calls, &mut batch, control, shared, at);
        }
        let Collected { results, stop, waiting, used, .. } = batch;
        self.report_unsettled(&results, stop.is_some(), control, tally, at);
        if let Some(stopped) = &stop {
            // Calls that waited (for approval, for the caller, held back)
            // will not run: the run ends with this batch.
            for (call, _) in calls.iter().zip(&waiting).filter(|(_, reason)| reason.is_some()) {
                self.report_interrupted(call, stopped, None, tally, at);
            }
        }
        let stop = if deferring { Some(self.defer(calls, waiting, at, tally)) } else { stop };
        tally.tool_calls += u32::try_from(used.len()).unwrap_or(u32::MAX);
        tally.count_sub_runs(calls);
        for name in used {
            *tally.tools_used.entry(name).or_default() += 1;
        }
        tally.limited_tool_calls = state.executions.load(Ordering::SeqCst);
        (results, stop)
    }

    /// Reports the control's answers to its calls of `batch` (but those
    /// whose result event it leaves to whoever settles them) and counts
    /// them; its calls it did not answer (a call before them waited, then
    /// the run stopped) are reported as not executed.
    fn report_owned<S>(
        &self,
        calls: &[ToolCall],
        batch: &mut Collected,
        control: &dyn Control<S>,
        tally: &Tally,
        at: At,
    ) {
        let At { attempt, iteration } = at;
        for (index, verdict, span) in batch.owned.drain(..) {
            let call = &calls[index];
            if let Some(done) = &batch.results[index] {
                self.emit(tally, || Event::ToolExecutionStarted { attempt, iteration, call: call.clone() });
                if control.settles_later(call) {
                    // Reported (and its span told the result) by whoever
                    // settles it, with this verdict.
                    tally.settling(&call.id, verdict, span);
                } else {
                    spans::tool_result(&span, &done.result);
                    self.report(call, &done.result, verdict, Duration::ZERO, tally, at);
                }
                batch.used.push(call.name.clone());
            } else if let Some(stopped) = &batch.stop {
                spans::tool_interrupted(&span, &stopped.termination.name());
                self.report_interrupted(call, stopped, Some(verdict), tally, at);
            }
        }
    }

    /// Holds back the control's calls of a deferred `batch`, answered or
    /// not, with the deferred ones: their answers are dropped (the control
    /// answers them again when the run is resumed), and so is their part in
    /// the run of consecutive failed calls. Returns governance's verdicts
    /// on them, by call id, for the resumed run.
    fn hold(calls: &[ToolCall], batch: &mut Collected, consecutive_failures: &mut u32) -> Vec<(String, Verdict)> {
        let mut held = Vec::with_capacity(batch.owned.len());
        for (index, verdict, span) in batch.owned.drain(..) {
            spans::tool_deferred(&span, deferral_kind(&DeferralReason::Held));
            batch.results[index] = None;
            batch.waiting[index] = Some(DeferralReason::Held);
            held.push((calls[index].id.clone(), verdict));
        }
        *consecutive_failures = batch.failures_before;
        for done in batch.results.iter().flatten() {
            count_failure(done, consecutive_failures);
        }
        held
    }

    /// Reports the calls of a batch whose result event the control left for
    /// later (`submit`, an output call) and that no verdict will settle:
    /// the run ends with this batch (`stopped`), or a later call of the
    /// batch took their place. Their events carry the result the
    /// conversation keeps.
    fn report_unsettled<S>(
        &self,
        results: &[Option<ToolExecution>],
        stopped: bool,
        control: &dyn Control<S>,
        tally: &Tally,
        At { attempt, iteration }: At,
    ) {
        let unsettled =
            |done: &ToolExecution| tally.is_settling(&done.call.id) && (stopped || !control.settles_later(&done.call));
        for done in results.iter().flatten().filter(|done| unsettled(done)) {
            let (verdict, span) = tally.settled(&done.call.id);
            spans::tool_result(&span, &done.result);
            self.emit(tally, || Event::ToolExecutionFinished {
                attempt,
                iteration,
                call: done.call.clone(),
                result: done.result.clone(),
                verdict,
                elapsed: Duration::ZERO,
            });
        }
    }

    /// What the tool calls of a batch see of the run (see [`ToolContext`](crate::ToolContext)).
    fn call_scope(&self, tally: &Tally) -> CallScope {
        let remaining_tokens = self.options.token_budget.map(|budget| budget.saturating_sub(tally.usage.total()));
        let run = RunLink {
            sub_runs: std::sync::Arc::clone(&tally.nested),
            events: self.events.clone(),
            hooks: self.hooks.clone(),
            journaled: self.journal.0.is_some(),
        };
        CallScope::new(self.cancel, self.deadline, remaining_tokens, Some(std::sync::Arc::new(run)))
    }

    /// The stop of a batch whose `waiting` calls wait (the control's own
    /// calls among them, held back), reported.
    fn defer(
        &self,
        calls: &[ToolCall],
        waiting: Vec<Option<DeferralReason>>,
        At { attempt, iteration }: At,
        tally: &Tally,
    ) -> Stop {
        let deferred: Vec<DeferredCall> = calls
            .iter()
            .zip(waiting)
            .filter_map(|(call, reason)| Some(DeferredCall::new(call.clone(), reason?)))
            .collect();
        for call in &deferred {
            tracing::debug!(tool = %call.call.name, id = %call.call.id, reason = %call.reason, "tool call deferred");
            self.emit(tally, || Event::ToolCallDeferred {
                attempt,
                iteration,
                call: call.call.clone(),
                reason: call.reason.clone(),
            });
        }
        Stop::deferred(deferred)
    }

    /// Has the control answer a call to one of its own tools (reported
    /// later: see [`report_owned`](Self::report_owned)).
    fn answer_owned<S>(&self, call: &ToolCall, control: &mut dyn Control<S>) -> ToolExecution {
        let mut result = catch_unwind(AssertUnwindSafe(|| control.answer(call))).unwrap_or_else(|panic| {
            let message = format!("tool `{}` panicked: {}", call.name, panic_message(&*panic));
            ToolResult::failure(&call.id, FailureKind::Panicked, message)
        });
        self.cap(&mut result);
        ToolExecution::answered(call, result)
    }

    /// Cuts a result the model is to read to `max_tool_result_chars`,
    /// before it is reported: the event carries what the model is told.
    fn cap(&self, result: &mut ToolResult) {
        if let Some(limit) = self.options.max_tool_result_chars {
            cap_result(result, limit);
        }
    }

    /// Answers the calls of a truncated response with errors, and reports
    /// them: they may be cut off, so they are not executed (and governance
    /// never decided them).
    pub(crate) fn incomplete(&self, calls: &[ToolCall], tally: &Tally, at: (u32, u32)) -> Vec<Option<ToolExecution>> {
        calls
            .iter()
            .map(|call| {
                let message = "the response was cut off at the token limit, so this call may be incomplete and \
                               was not executed; call it again";
                let result = ToolResult::failure(&call.id, FailureKind::Incomplete, message);
                Some(self.not_run(call, result, tally, at))
            })
            .collect()
    }

    /// Reports a call answered with `result` without running it, before
    /// governance decided it (a truncated response's call, a call beyond
    /// the per-iteration cap).
    pub(crate) fn not_run(
        &self,
        call: &ToolCall,
        result: ToolResult,
        tally: &Tally,
        (attempt, iteration): (u32, u32),
    ) -> ToolExecution {
        self.report(call, &result, Verdict::Undecided, Duration::ZERO, tally, At { attempt, iteration });
        ToolExecution::answered(call, result)
    }

    /// Reports that a call has its result.
    fn report(&self, call: &ToolCall, result: &ToolResult, verdict: Verdict, elapsed: Duration, tally: &Tally, at: At) {
        let At { attempt, iteration } = at;
        self.emit(tally, || Event::ToolExecutionFinished {
            attempt,
            iteration,
            call: call.clone(),
            result: result.clone(),
            verdict,
            elapsed,
        });
    }

    /// Reports a call the run stopped before it ran; returns its synthetic result.
    fn report_interrupted(
        &self,
        call: &ToolCall,
        stop: &Stop,
        verdict: Option<Verdict>,
        tally: &Tally,
        at: At,
    ) -> ToolResult {
        let result = not_executed(call, stop);
        self.report(call, &result, verdict.unwrap_or(Verdict::Undecided), Duration::ZERO, tally, at);
        result
    }

    /// What the model is told when it calls a tool the run does not have.
    fn unknown_tool(&self, call: &ToolCall) -> String {
        let names: Vec<&str> = self.definitions.iter().map(|definition| &*definition.name).collect();
        let names = if names.is_empty() { "(none)".to_owned() } else { names.join(", ") };
        format!("unknown tool `{}`; the tools are: {names}", call.name)
    }

    /// The stop a finished call causes under the stop policies, if any.
    fn policy_stop(&self, done: &ToolExecution, consecutive_failures: &mut u32) -> Option<Stop> {
        if let Some(kind) = done.result.failure {
            let policy = if denied(kind) { self.options.stop_on_denied_tool } else { self.options.stop_on_failed_tool };
            if policy {
                return Some(Stop::tool(&done.call.name, kind, &done.result.content));
            }
        }
        if !count_failure(done, consecutive_failures) {
            return None;
        }
        match self.options.max_consecutive_tool_failures {
            Some(limit) if *consecutive_failures >= limit => {
                Some(Stop::new(Termination::ConsecutiveToolFailures { count: *consecutive_failures }))
            }
            _ => None,
        }
    }

    /// Runs one call in its `execute_tool` span and records how it went.
    async fn run_call(
        &self,
        call: &ToolCall,
        preset: Preset<'_>,
        owned: bool,
        state: &BatchState,
        tally: &Tally,
        at: At,
    ) -> CallOutcome {
        // A result given at resume was produced already (the caller ran
        // the call): a stop or a hold of the batch keeps it, as it keeps
        // the results of calls answered before the pause.
        let given = matches!(preset, Preset::Given(..));
        if state.stopping.load(Ordering::SeqCst) && !given {
            return CallOutcome::Skipped;
        }
        if state.holding.load(Ordering::SeqCst) && !given {
            return CallOutcome::Held;
        }
        let description = || {
            let definition = self.definitions.iter().find(|definition| definition.name == call.name);
            definition.map(|definition| definition.description.to_string())
        };
        let span = spans::execute_tool(call, description);
        let outcome = self.run_call_traced(call, preset, owned, state, tally, at).instrument(span.clone()).await;
        match outcome {
            CallOutcome::Done(ref done, _) => spans::tool_result(&span, &done.result),
            CallOutcome::Interrupted(ref stop) => spans::tool_interrupted(&span, &stop.termination.name()),
            CallOutcome::Deferred(ref reason) => spans::tool_deferred(&span, deferral_kind(reason)),
            // The control answers its own calls later (and they cannot
            // fail): their span goes with them, to be marked if they wait.
            CallOutcome::Owned(verdict, _) => return CallOutcome::Owned(verdict, span),
            CallOutcome::Skipped | CallOutcome::Held => {}
        }
        outcome
    }

    async fn run_call_traced(
        &self,
        call: &ToolCall,
        preset: Preset<'_>,
        owned: bool,
        state: &BatchState,
        tally: &Tally,
        at: At,
    ) -> CallOutcome {
        let At { attempt, iteration } = at;
        // Every way out reports a result, interrupted calls included.
        let interrupted = |stop: Stop, verdict: Option<Verdict>| {
            self.report_interrupted(call, &stop, verdict, tally, at);
            state.stopping.store(true, Ordering::SeqCst);
            CallOutcome::Interrupted(stop)
        };
        let cancelled = || Stop::new(Termination::Cancelled { attempt, iteration, phase: Phase::ToolExecution });
        let verdict = match preset {
            Preset::Decide => {
                let decision = pin!(self.governance.decide(call, |approver| self.journal.approval(call, approver)));
                match guarded(Some(self.cancel), self.deadline, decision).await {
                    Ok(verdict) => verdict,
                    Err(Interruption::Cancelled) => return interrupted(cancelled(), None),
                    Err(Interruption::Deadline) => return interrupted(self.deadline_stop(), None),
                }
            }
            Preset::Decided(verdict) => verdict.clone(),
            Preset::Given(result, verdict) => {
                let mut result = result.clone();
                self.cap(&mut result);
                self.report(call, &result, verdict.clone(), Duration::ZERO, tally, at);
                let done = ToolExecution::answered(call, result);
                return CallOutcome::Done(done, verdict.allows());
            }
        };
        let (mut done, executed) = match &verdict {
            Verdict::Deferred(reason) => return CallOutcome::Deferred(DeferralReason::Approval(reason.clone())),
            Verdict::Allowed | Verdict::Approved if !owned && self.tools.is_external(&call.name) => {
                return CallOutcome::Deferred(DeferralReason::External);
            }
            Verdict::Denied(reason) => {
                let message = format!("tool call denied: {reason}");
                (ToolExecution::answered(call, ToolResult::failure(&call.id, FailureKind::Denied, message)), false)
            }
            Verdict::ApprovalDenied(reason) => {
                let message = format!("tool call not approved: {reason}");
                let result = ToolResult::failure(&call.id, FailureKind::ApprovalDenied, message);
                (ToolExecution::answered(call, result), false)
            }
            // `decide` never answers this; it marks audit records of stopped calls.
            Verdict::Undecided => {
                let message = "not executed: governance did not decide";
                (ToolExecution::answered(call, ToolResult::failure(&call.id, FailureKind::NotExecuted, message)), false)
            }
            Verdict::Allowed | Verdict::Approved if owned => return CallOutcome::Owned(verdict, Span::none()),
            Verdict::Allowed | Verdict::Approved => {
                if let Some(limit) = self.options.max_tool_executions
                    && state.executions.fetch_add(1, Ordering::SeqCst) >= limit
                {
                    return interrupted(Stop::new(Termination::MaxToolExecutions { limit }), Some(verdict));
                }
                self.emit(tally, || Event::ToolExecutionStarted { attempt, iteration, call: call.clone() });
                if self.tools.get(&call.name).is_none() {
                    // The tool set knows only its own tools; the model is
                    // told every tool of the run, the control's included.
                    let result = ToolResult::failure(&call.id, FailureKind::UnknownTool, self.unknown_tool(call));
                    (ToolExecution::answered(call, result), true)
                } else {
                    // The token is the tool's to watch (through its context):
                    // a cancelled call ends with its own result.
                    let execution = pin!(self.journal.tool_execution(
                        call,
                        &tally.nested,
                        Box::pin(self.tools.execute_in(call, state.scope.context(call))),
                    ));
                    let execution = match guarded(None, self.deadline, execution).await {
                        Ok(execution) => execution,
                        Err(_deadline) => return interrupted(self.deadline_stop(), Some(verdict)),
                    };
                    if execution.replayed {
                        spans::tool_replayed(&tracing::Span::current());
                    }
                    match execution.value {
                        // The execution names its call (a replayed one is
                        // named here): not copied again.
                        Ok(mut execution) => {
                            if execution.call != *call {
                                execution.call = call.clone();
                            }
                            (execution, true)
                        }
                        Err(_cancelled) => return interrupted(cancelled(), Some(verdict)),
                    }
                }
            }
        };
        tracing::debug!(tool = %call.name, id = %call.id, failure = ?done.result.failure, elapsed = ?done.elapsed, "tool call finished");
        self.cap(&mut done.result);
        self.report(call, &done.result, verdict, done.elapsed, tally, at);
        CallOutcome::Done(done, executed)
    }
}
