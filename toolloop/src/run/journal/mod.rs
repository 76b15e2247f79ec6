//! The journal: the one seam every side effect of a run passes through.
//!
//! A run is a pure function of what it has already seen, except for a few
//! things it asks the world: a model's response, a tool's result, an
//! approver's decision, a summary for a compaction, and the clock where a
//! `max_duration` reads it. Each of these goes through a [`Journal`], one
//! method per kind of [`Step`]:
//!
//! | step | method | what is recorded |
//! |---|---|---|
//! | `model call N` | [`model_call`](Journal::model_call) | the whole [`ModelResponse`] (content, reasoning, usage, ids) or the [`ModelError`] |
//! | `summary N` | [`summary`](Journal::summary) | the summariser's text or its error |
//! | `tool NAME ID` | [`tool_execution`](Journal::tool_execution) | the [`ToolExecution`]: result, structured output, elapsed time |
//! | `approval NAME ID` | [`approval`](Journal::approval) | the approver's [`Decision`] |
//! | `clock before model call N` | [`elapsed`](Journal::elapsed) | the run's elapsed time, read only when `max_duration` is set |
//!
//! A run in process ([`Agent::run`](crate::Agent::run)) passes every step
//! straight through. A durable engine records each step's outcome the
//! first time and, when the run is replayed after a crash, hands the
//! recorded outcome back instead of doing the step again. Given its journal, a run is
//! deterministic: replaying it from any prefix of its journal rebuilds the
//! same conversation and metadata (elapsed time aside) with no model call
//! and no tool execution for the recorded steps
//! (`tests/journal_replay.rs` pins this over random scripted runs).
//! [`MemoryJournal`] is a journal in memory, for tests and as a reference;
//! `toolloop-restate` records each step with Restate's `ctx.run`; a
//! Temporal activity or a DBOS step fits the same methods.
//!
//! What a journal may rely on, and what it may not:
//!
//! - Steps are named uniquely within a run ([`Step`]'s `Display`). Model
//!   calls, summaries and clock readings happen one at a time, in order;
//!   the tool executions and approvals of one batch may run at once (with
//!   [`parallel_tool_calls`](crate::AgentBuilder::parallel_tool_calls)), and
//!   are *started* in call order. A journal whose engine cannot have two
//!   steps in flight, or replays steps in the order they were issued
//!   rather than the order they finished, says so with
//!   [`parallel_steps`](Journal::parallel_steps): the run then issues a
//!   batch's steps one at a time, in call order, each call done before the
//!   next begins.
//! - Everything else a run does is a function of the recorded outcomes and
//!   the agent's setup: tool call ids are made unique deterministically,
//!   policies ([`Governance::policy`](super::Governance::policy)) and
//!   validators must be pure functions of their input, and hooks are
//!   observers (they fire again when a run is replayed).
//! - Cancellation: a journal that learns the run was cancelled returns
//!   [`Cancelled`] from a tool execution, or cancels the run's
//!   [`CancellationToken`](crate::CancellationToken) and leaves the step
//!   pending; the run then stops as [`Termination::Cancelled`](super::Termination::Cancelled).
//!
//! # The recorded form
//!
//! A journal that stores outcomes outside the process stores them in the
//! form [`encode`] writes and [`decode`] reads: `{"format": 1, "value": ...}` where the
//! value is the serde form of a model call's `Result<ModelResponse,
//! ModelError>` (a [`ModelError`] records everything it says but its source
//! error), a summary's `Result<String, ModelError>`, a [`ToolExecution`], an
//! approver's [`Decision`] or a [`Duration`].
//! [`JOURNAL_FORMAT`] is the version of that form. It changes only when a
//! recorded value could be read differently; adding an optional field does
//! not change it. A record of another format is refused with
//! [`JournalError::Format`], and a record that does not deserialize with
//! [`JournalError::Decode`]: a run never continues on a journal it cannot
//! read.
//!
//! Step *names* are not part of the format: a journal replays by them (or,
//! on Restate, by position), so a change to how a run names or orders its
//! steps — such as numbering model calls by the run's own calls, not its
//! sub-runs' — is a change to the handler, as Restate calls it: finish the
//! runs in flight before deploying it.

mod memory;
mod record;

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

pub use memory::MemoryJournal;
pub use record::{JOURNAL_FORMAT, JournalError, decode, decode_str, encode};

use super::governance::{Approver, Decision};
use super::metadata::SubRun;
use super::sub_runs::SubRuns;
use crate::cancel::{BoxFuture, Cancelled};
use crate::message::ToolCall;
use crate::model::{ModelError, ModelResponse};
use crate::tool::Nested;
use crate::tool::ToolExecution;

/// One side effect of a run, named uniquely within the run.
///
/// `Display` gives the step's name: `model call 3`, `summary 1`,
/// `tool lookup call_7`, `approval delete_file call_2`,
/// `clock before model call 4`.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Step<'a> {
    /// The run's `number`th model call (from 1, over every attempt).
    ModelCall {
        /// Its number.
        number: u32,
    },
    /// The summary for the run's `number`th compaction.
    Summary {
        /// The compaction's number (from 1).
        number: u32,
    },
    /// The execution of a tool call.
    ToolExecution {
        /// The call.
        call: &'a ToolCall,
    },
    /// The approval of a tool call the policy asked about.
    Approval {
        /// The call.
        call: &'a ToolCall,
    },
    /// A reading of the run's elapsed time, before its `before_model_call`th
    /// model call.
    Clock {
        /// The model call the reading precedes.
        before_model_call: u32,
    },
}

impl fmt::Display for Step<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ModelCall { number } => write!(f, "model call {number}"),
            Self::Summary { number } => write!(f, "summary {number}"),
            Self::ToolExecution { call } => write!(f, "tool {} {}", call.name, call.id),
            Self::Approval { call } => write!(f, "approval {} {}", call.name, call.id),
            Self::Clock { before_model_call } => write!(f, "clock before model call {before_model_call}"),
        }
    }
}

/// Where a run's side effects go. See the [module docs](self).
///
/// Each method is handed the step and the work that does it; it returns
/// the step's outcome, by doing the work (and recording its outcome) or by
/// reading an outcome recorded earlier (and dropping the work unpolled).
///
/// A step whose work was never polled was *replayed*: the run marks its
/// span (`toolloop.replayed = true` on a model call's `chat` span and a
/// tool's `execute_tool` span) and leaves a replayed model call out of the
/// model-call metrics. A journal does not say so itself; it only decides
/// whether to do the work.
pub trait Journal: Send + Sync {
    /// A model call; `call` sends the request (the provider's own retries
    /// happen inside it).
    fn model_call<'a>(
        &'a self,
        step: Step<'a>,
        call: BoxFuture<'a, Result<ModelResponse, ModelError>>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>>;

    /// A summary for a compaction of the view sent to the model.
    fn summary<'a>(
        &'a self,
        step: Step<'a>,
        summarise: BoxFuture<'a, Result<String, ModelError>>,
    ) -> BoxFuture<'a, Result<String, ModelError>>;

    /// A tool execution; `execute` runs the tool (its timeout, panics and
    /// errors already turned into an error result).
    fn tool_execution<'a>(
        &'a self,
        step: Step<'a>,
        execute: BoxFuture<'a, Result<ToolExecution, Cancelled>>,
    ) -> BoxFuture<'a, Result<ToolExecution, Cancelled>>;

    /// The decision on a call the policy asked about ([`Decision::Ask`]),
    /// from `approver` (the one configured on the run, if any) or from
    /// wherever the journal gets decisions (a durable promise, for example).
    /// Its step is [`Step::Approval`] of `call`.
    fn approval<'a>(&'a self, call: &'a ToolCall, approver: Option<&'a dyn Approver>) -> BoxFuture<'a, Decision>;

    /// The run's elapsed time, for its `max_duration`; `measured` is what this
    /// process measured since the run started. Only read when the run has
    /// a [`max_duration`](crate::AgentBuilder::max_duration).
    fn elapsed<'a>(&'a self, step: Step<'a>, measured: Duration) -> BoxFuture<'a, Duration>;

    /// Whether the steps of one batch's calls (their approvals and tool
    /// executions) may be in flight at once, up to the run's
    /// [`parallel_tool_calls`](crate::AgentBuilder::parallel_tool_calls).
    /// Yes by default.
    ///
    /// A journal answers `false` when its engine cannot await two steps at
    /// once, or records a step when it is issued and, replaying, hands
    /// outcomes back in that order: calls in flight at once issue their
    /// later steps (a tool execution after an approval) in the order their
    /// earlier ones finished, which a replay cannot reproduce. The run
    /// then executes a batch's calls in turn, in call order, each call's
    /// steps done before the next call begins, whatever
    /// `parallel_tool_calls` says; results, events and stops are those of
    /// `parallel_tool_calls(1)`. Restate's journal (`toolloop-restate`)
    /// answers `false`. A journal that wraps another (adds logging, say)
    /// forwards it.
    fn parallel_steps(&self) -> bool {
        true
    }
}

/// The journal of a run in process: every step is done, nothing recorded.
/// What [`Agent::run`](crate::Agent::run) uses (its model calls and tool
/// executions skip even this layer: see [`Steps`]).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct InProcess;

impl Journal for InProcess {
    fn model_call<'a>(
        &'a self,
        _step: Step<'a>,
        call: BoxFuture<'a, Result<ModelResponse, ModelError>>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        call
    }

    fn summary<'a>(
        &'a self,
        _step: Step<'a>,
        summarise: BoxFuture<'a, Result<String, ModelError>>,
    ) -> BoxFuture<'a, Result<String, ModelError>> {
        summarise
    }

    fn tool_execution<'a>(
        &'a self,
        _step: Step<'a>,
        execute: BoxFuture<'a, Result<ToolExecution, Cancelled>>,
    ) -> BoxFuture<'a, Result<ToolExecution, Cancelled>> {
        execute
    }

    fn approval<'a>(&'a self, call: &'a ToolCall, approver: Option<&'a dyn Approver>) -> BoxFuture<'a, Decision> {
        ask(call, approver)
    }

    fn elapsed<'a>(&'a self, _step: Step<'a>, measured: Duration) -> BoxFuture<'a, Duration> {
        Box::pin(std::future::ready(measured))
    }
}

/// A run's journal as the engine uses it: each step through the
/// [`Journal`], and whether its outcome was replayed (its work never
/// started). `None` is a run in process ([`InProcess`]): its steps are
/// done directly, with no journal layer around them.
#[derive(Clone, Copy)]
pub(crate) struct Steps<'j>(pub(crate) Option<&'j dyn Journal>);

/// A step's outcome, and whether it was replayed.
pub(crate) struct Journaled<T> {
    pub(crate) value: T,
    pub(crate) replayed: bool,
}

impl<'j> Steps<'j> {
    /// The journal itself, for the steps that need no more.
    pub(crate) fn journal(self) -> &'j dyn Journal {
        self.0.unwrap_or(&InProcess)
    }

    /// `work`, setting `started` when it is first polled: a step whose work
    /// the journal never polled was replayed.
    fn marking<'l, T: 'l>(started: &'l AtomicBool, work: BoxFuture<'l, T>) -> BoxFuture<'l, T> {
        Box::pin(async move {
            started.store(true, Ordering::SeqCst);
            work.await
        })
    }

    /// [`Journal::model_call`].
    /// A run in process awaits `call` as it is; a journal gets it boxed.
    pub(crate) async fn model_call<'a>(
        self,
        step: Step<'a>,
        call: impl Future<Output = Result<ModelResponse, ModelError>> + Send + 'a,
    ) -> Journaled<Result<ModelResponse, ModelError>>
    where
        'j: 'a,
    {
        let Some(journal) = self.0 else {
            return Journaled { value: call.await, replayed: false };
        };
        let started = AtomicBool::new(false);
        let value = journal.model_call(step, Self::marking(&started, Box::pin(call))).await;
        Journaled { value, replayed: !started.load(Ordering::SeqCst) }
    }

    /// [`Journal::tool_execution`] of `call`. Through a journal, what the
    /// call left in `nested` (the sub-runs it started, the messages it added
    /// to the conversation its agent tool keeps) is recorded with its execution
    /// and applied again from it, so that a replayed call, which starts no
    /// sub-run, still counts them and leaves the kept conversation as the
    /// call did.
    pub(crate) async fn tool_execution<'a>(
        self,
        call: &'a ToolCall,
        nested: &'a SubRuns,
        execute: BoxFuture<'a, Result<ToolExecution, Cancelled>>,
    ) -> Journaled<Result<ToolExecution, Cancelled>>
    where
        'j: 'a,
    {
        let Some(journal) = self.0 else {
            return Journaled { value: execute.await, replayed: false };
        };
        let started = AtomicBool::new(false);
        let execute = Box::pin(async move {
            let mut execution = execute.await?;
            let runs = nested.take_for(&call.id);
            let sub_runs: Vec<_> = runs.iter().filter_map(|run| serde_json::to_value(run).ok()).collect();
            let kept = nested.take_left(&call.id).and_then(|kept| serde_json::to_value(kept).ok());
            if !sub_runs.is_empty() || kept.is_some() {
                execution.nested = Some(Box::new(Nested { sub_runs, kept }));
            }
            Ok(execution)
        });
        let mut value = journal.tool_execution(Step::ToolExecution { call }, Self::marking(&started, execute)).await;
        if let Some(left) = value.as_mut().ok().and_then(|execution| execution.nested.take()) {
            let Nested { sub_runs, kept } = *left;
            for run in sub_runs {
                match serde_json::from_value::<SubRun>(run) {
                    Ok(run) => nested.record(run),
                    Err(error) => {
                        tracing::warn!(%error, call = %call.id, "a recorded sub-run does not read; its counts are left out");
                    }
                }
            }
            // A call that ran left its kept conversation as it is; a
            // replayed one adds to it what the call added.
            if let Some(kept) = kept.filter(|_| !started.load(Ordering::SeqCst)) {
                match serde_json::from_value(kept) {
                    Ok(kept) => nested.keep(kept),
                    Err(error) => {
                        tracing::warn!(%error, call = %call.id, "a recorded kept conversation does not read");
                    }
                }
            }
        }
        Journaled { value, replayed: !started.load(Ordering::SeqCst) }
    }

    /// [`Journal::parallel_steps`]: a run in process takes its calls at once.
    pub(crate) fn parallel(self) -> bool {
        self.0.is_none_or(Journal::parallel_steps)
    }

    /// [`Journal::approval`].
    pub(crate) fn approval<'a>(self, call: &'a ToolCall, approver: Option<&'a dyn Approver>) -> BoxFuture<'a, Decision>
    where
        'j: 'a,
    {
        self.journal().approval(call, approver)
    }

    /// [`Journal::elapsed`].
    pub(crate) fn elapsed<'a>(self, step: Step<'a>, measured: Duration) -> BoxFuture<'a, Duration>
    where
        'j: 'a,
    {
        self.journal().elapsed(step, measured)
    }
}

/// Asks `approver` about `call`, as a run in process does: without an
/// approver, the call is denied.
pub fn ask<'a>(call: &'a ToolCall, approver: Option<&'a dyn Approver>) -> BoxFuture<'a, Decision> {
    match approver {
        Some(approver) => approver.approve(call),
        None => Box::pin(std::future::ready(Decision::Deny(
            "approval is required but no approver is configured".to_owned(),
        ))),
    }
}
