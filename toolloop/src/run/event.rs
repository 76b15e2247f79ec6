//! What a run reports: one event per fact, in the order the facts became true.

use std::time::Duration;

use serde_json::Value;

use super::governance::Verdict;
use super::termination::Termination;
use crate::conversation::Compaction;
use crate::conversation::pending::DeferralReason;
use crate::message::{ToolCall, ToolResult};
use crate::model::ModelResponse;
use crate::usage::Usage;

/// One fact of a run, reported once, when it becomes true. Every observer
/// of a run sees the same events: hooks
/// ([`Hooks::on_event`](super::Hooks::on_event) and the typed hooks,
/// each named for the event it filters, as
/// [`Hooks::on_tool_execution_finished`](super::Hooks::on_tool_execution_finished)), a streamed run's
/// [`RunStream`](crate::stream::RunStream), and the trace-level dump
/// (`RUST_LOG=toolloop=trace`).
///
/// The engine builds an event only when something observes it (a hook, a
/// stream, or the trace level): an unobserved run pays nothing for them.
///
/// Deltas ([`TextDelta`](Self::TextDelta), ...) come only from streamed
/// runs, and are provisional until their iteration finishes: when a model
/// call fails part-way, [`ModelCallDiscarded`](Self::ModelCallDiscarded)
/// tells a consumer to drop the deltas it showed since the iteration
/// started.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Event {
    /// An attempt started (1-based).
    AttemptStarted {
        /// The attempt.
        attempt: u32,
    },
    /// A model call is being sent: the first of an iteration, or the same
    /// iteration's call again after a [compaction](Self::Compacted).
    IterationStarted {
        /// The attempt.
        attempt: u32,
        /// The iteration within the attempt (1-based).
        iteration: u32,
    },
    /// Text the model is writing (streamed runs).
    TextDelta {
        /// The new text.
        text: String,
    },
    /// Reasoning the model is writing (streamed runs).
    ReasoningDelta {
        /// The new reasoning text.
        text: String,
    },
    /// The model started writing a tool call (streamed runs). Nothing runs
    /// yet: see [`ToolExecutionStarted`](Self::ToolExecutionStarted).
    ToolCallStarted {
        /// The block's position in the response.
        index: usize,
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// More of the arguments of a tool call the model is writing (streamed runs).
    ToolCallArgumentsDelta {
        /// The block's position in the response.
        index: usize,
        /// The new JSON text.
        fragment: String,
        /// The arguments so far, completed to a value
        /// ([`parse_partial_json`](crate::model::parse_partial_json)); `None` while
        /// nothing can be shown yet. Past 2 KiB of arguments they are parsed
        /// again only each time they have grown by an eighth (so that a long
        /// argument costs time linear in its length), and the deltas between
        /// carry `None`: keep showing the last value.
        partial: Option<Value>,
    },
    /// The model finished writing a tool call (streamed runs).
    ToolCallWritten {
        /// The block's position in the response.
        index: usize,
        /// The whole call.
        call: ToolCall,
    },
    /// The model call of the iteration failed or was cut short after it may
    /// have streamed deltas: drop the deltas shown since
    /// [`IterationStarted`](Self::IterationStarted).
    ModelCallDiscarded {
        /// The attempt.
        attempt: u32,
        /// The iteration.
        iteration: u32,
        /// What went wrong, in words.
        error: String,
        /// The tokens the call had reported before it failed (providers
        /// may bill them). When the call failed (rather than being
        /// cancelled or outlasting the run's `max_duration`), the run's
        /// usage counts them, as a non-streamed run's does.
        usage: Usage,
    },
    /// The model call of an iteration answered.
    IterationFinished {
        /// The attempt.
        attempt: u32,
        /// The iteration.
        iteration: u32,
        /// The whole answer: content, usage, stop reason.
        response: Box<ModelResponse>,
    },
    /// The view sent to the model was compacted to fit the context window
    /// (see [`ContextPolicy`](super::ContextPolicy)); the call is sent with the compacted view.
    Compacted {
        /// The attempt.
        attempt: u32,
        /// The iteration.
        iteration: u32,
        /// What was compacted.
        compaction: Compaction,
    },
    /// Governance allowed a tool call and it starts running. A denied or
    /// deferred call never reports this.
    ToolExecutionStarted {
        /// The attempt.
        attempt: u32,
        /// The iteration.
        iteration: u32,
        /// The call.
        call: ToolCall,
    },
    /// A tool call has its result: it ran (with output or an error), was
    /// denied, or was not executed (the run stopped first, the response was
    /// cut off at the token limit, or it was beyond
    /// `max_tool_calls_per_iteration`; such a call has no
    /// [`ToolExecutionStarted`](Self::ToolExecutionStarted)). The one record
    /// of every call, for audit: [`AuditRecord`](super::AuditRecord) is its
    /// serialisable form.
    ToolExecutionFinished {
        /// The attempt.
        attempt: u32,
        /// The iteration.
        iteration: u32,
        /// The call.
        call: ToolCall,
        /// What the model is told.
        result: ToolResult,
        /// What governance decided ([`Verdict::Undecided`] when it did
        /// not: the run stopped first, or the call never reached it).
        verdict: Verdict,
        /// How long the call ran (zero when it did not run).
        elapsed: Duration,
    },
    /// A tool call was deferred: the run will pause with it pending, and
    /// end with [`Termination::Deferred`].
    ToolCallDeferred {
        /// The attempt.
        attempt: u32,
        /// The iteration.
        iteration: u32,
        /// The call.
        call: ToolCall,
        /// Why it waits.
        reason: DeferralReason,
    },
    /// A typed agent's output as it forms, completed to a value
    /// ([`parse_partial_json`](crate::model::parse_partial_json)), in streamed
    /// runs: from the output tool's arguments in
    /// [`OutputMode::Tool`](crate::agent::OutputMode::Tool), from the
    /// answer's JSON text in the native and prompted modes. Long outputs are
    /// parsed again only as they grow by an eighth, as
    /// [`ToolCallArgumentsDelta`](Self::ToolCallArgumentsDelta) are.
    /// Provisional, as every delta: validation follows.
    OutputDelta {
        /// The attempt.
        attempt: u32,
        /// The output so far.
        partial: Value,
    },
    /// A typed agent's output was proposed (by its output tool, or in the
    /// answer's text); validation follows.
    OutputProposed {
        /// The attempt.
        attempt: u32,
        /// The proposed output, as the model wrote it.
        input: Value,
    },
    /// An attempt's output failed validation (or was missing); the errors
    /// are fed back.
    ValidationFailed {
        /// The attempt.
        attempt: u32,
        /// Every error found.
        errors: Vec<String>,
    },
    /// An event of a sub-run: the run an [agent used as a tool](crate::agent::AgentTool)
    /// makes for the tool call `call_id`, between that call's
    /// [`ToolExecutionStarted`](Self::ToolExecutionStarted) and
    /// [`ToolExecutionFinished`](Self::ToolExecutionFinished). A sub-run's
    /// own sub-runs nest one level deeper.
    SubRun {
        /// The tool call that started the sub-run.
        call_id: String,
        /// The agent's name, or the tool's when the agent has none.
        agent: String,
        /// What happened in the sub-run.
        event: Box<Event>,
    },
    /// The run ended, however it ended: the last event of every run (a
    /// run refused before it started — nothing to answer, calls left
    /// pending, a resume that does not fit — reaches no hook, but its
    /// stream still ends with this event).
    RunFinished {
        /// Why.
        termination: Termination,
    },
}

impl Event {
    /// A short name of the event kind (`"text_delta"`, ...), as an SSE
    /// `event:` line would carry it.
    pub fn name(&self) -> &'static str {
        match self {
            Self::AttemptStarted { .. } => "attempt_started",
            Self::IterationStarted { .. } => "iteration_started",
            Self::TextDelta { .. } => "text_delta",
            Self::ReasoningDelta { .. } => "reasoning_delta",
            Self::ToolCallStarted { .. } => "tool_call_started",
            Self::ToolCallArgumentsDelta { .. } => "tool_call_arguments_delta",
            Self::ToolCallWritten { .. } => "tool_call_written",
            Self::ModelCallDiscarded { .. } => "model_call_discarded",
            Self::IterationFinished { .. } => "iteration_finished",
            Self::Compacted { .. } => "compacted",
            Self::ToolExecutionStarted { .. } => "tool_execution_started",
            Self::ToolExecutionFinished { .. } => "tool_execution_finished",
            Self::ToolCallDeferred { .. } => "tool_call_deferred",
            Self::OutputDelta { .. } => "output_delta",
            Self::OutputProposed { .. } => "output_proposed",
            Self::ValidationFailed { .. } => "validation_failed",
            Self::SubRun { .. } => "sub_run",
            Self::RunFinished { .. } => "run_finished",
        }
    }
}
