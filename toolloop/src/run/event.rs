//! What a streamed run reports, in order.

use std::convert::Infallible;

use serde_json::Value;

use super::outcome::{RunError, RunOutput};
use crate::message::{ToolCall, ToolResult};
use crate::run::DeferralReason;
use crate::stop_reason::StopReason;
use crate::usage::Usage;

/// One event of a streamed run ([`Agent::run_stream`](crate::Agent::run_stream),
/// [`ToolLoop::run_stream`](crate::run::ToolLoop::run_stream)), in the order
/// it happened. The last event is always [`Finished`](Self::Finished), with
/// exactly what the non-streamed run returns.
///
/// Deltas are provisional until their iteration finishes: when a model call
/// fails part-way, [`ModelCallDiscarded`](Self::ModelCallDiscarded) tells a
/// consumer to drop the deltas it showed since the iteration started.
#[derive(Debug)]
#[non_exhaustive]
pub enum RunEvent<T> {
    /// An attempt starts (1-based).
    AttemptStarted {
        /// The attempt.
        attempt: u32,
    },
    /// An iteration starts: its model call is being sent.
    IterationStarted {
        /// The attempt.
        attempt: u32,
        /// The iteration within the attempt (1-based).
        iteration: u32,
    },
    /// Text the model is writing.
    TextDelta {
        /// The new text.
        text: String,
    },
    /// Reasoning the model is writing.
    ReasoningDelta {
        /// The new reasoning text.
        text: String,
    },
    /// The model starts a tool call.
    ToolCallStarted {
        /// The block's position in the response.
        index: usize,
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// More of a tool call's arguments.
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
    /// The model finished writing a tool call.
    ToolCallComplete {
        /// The block's position in the response.
        index: usize,
        /// The whole call.
        call: ToolCall,
    },
    /// The model call of the iteration failed after sending events: drop the
    /// deltas shown since [`IterationStarted`](Self::IterationStarted).
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
        /// The call's usage.
        usage: Usage,
        /// Why the model stopped.
        stop_reason: StopReason,
    },
    /// A tool call is about to run.
    ToolExecutionStarted {
        /// The call.
        call: ToolCall,
    },
    /// A tool call finished (with output, an error, or a denial).
    ToolExecutionFinished {
        /// The call.
        call: ToolCall,
        /// What the model will see.
        result: ToolResult,
    },
    /// A tool call was deferred: the run will pause with it pending, and
    /// end with [`Termination::Deferred`](crate::run::Termination::Deferred).
    ToolCallDeferred {
        /// The call.
        call: ToolCall,
        /// Why it waits.
        reason: DeferralReason,
    },
    /// A typed agent's output as it forms, completed to a value
    /// ([`parse_partial_json`](crate::model::parse_partial_json)): from the output
    /// tool's arguments in [`OutputMode::Tool`](crate::agent::OutputMode::Tool),
    /// from the answer's JSON text in the native and prompted modes. Long
    /// outputs are parsed again only as they grow by an eighth, as
    /// [`ToolCallArgumentsDelta`](Self::ToolCallArgumentsDelta) are.
    /// Provisional, as every delta: validation follows.
    OutputDelta {
        /// The attempt.
        attempt: u32,
        /// The output so far.
        partial: Value,
    },
    /// The agent's output tool was called with this input (the output
    /// being proposed; validation follows).
    OutputProposed {
        /// The attempt.
        attempt: u32,
        /// The proposed output, as the model wrote it.
        input: Value,
    },
    /// The proposed output failed validation; the errors are fed back.
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
    /// own sub-runs nest one level deeper. Never `Finished`: the call's
    /// `ToolExecutionFinished` ends it.
    SubRun {
        /// The tool call that started the sub-run.
        call_id: String,
        /// The agent's name, or the tool's when the agent has none.
        agent: String,
        /// What happened in the sub-run.
        event: Box<RunEvent<Infallible>>,
    },
    /// The run ended: what the non-streamed run returns.
    Finished(Result<RunOutput<T>, RunError>),
}

/// The run-independent events, as the engine sends them: every variant but
/// [`RunEvent::Finished`], whose type it cannot name.
pub(crate) type Progress = RunEvent<Never>;

/// No value: a [`Progress`] event is never `Finished`.
#[derive(Debug)]
pub(crate) enum Never {}

impl<T> RunEvent<T> {
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
            Self::ToolCallComplete { .. } => "tool_call_complete",
            Self::ModelCallDiscarded { .. } => "model_call_discarded",
            Self::IterationFinished { .. } => "iteration_finished",
            Self::ToolExecutionStarted { .. } => "tool_execution_started",
            Self::ToolExecutionFinished { .. } => "tool_execution_finished",
            Self::ToolCallDeferred { .. } => "tool_call_deferred",
            Self::OutputDelta { .. } => "output_delta",
            Self::OutputProposed { .. } => "output_proposed",
            Self::ValidationFailed { .. } => "validation_failed",
            Self::SubRun { .. } => "sub_run",
            Self::Finished(_) => "finished",
        }
    }
}

impl Progress {
    /// The same event, for a run whose output is `T`.
    pub(crate) fn widen<T>(self) -> RunEvent<T> {
        match self {
            Self::AttemptStarted { attempt } => RunEvent::AttemptStarted { attempt },
            Self::IterationStarted { attempt, iteration } => RunEvent::IterationStarted { attempt, iteration },
            Self::TextDelta { text } => RunEvent::TextDelta { text },
            Self::ReasoningDelta { text } => RunEvent::ReasoningDelta { text },
            Self::ToolCallStarted { index, id, name } => RunEvent::ToolCallStarted { index, id, name },
            Self::ToolCallArgumentsDelta { index, fragment, partial } => {
                RunEvent::ToolCallArgumentsDelta { index, fragment, partial }
            }
            Self::ToolCallComplete { index, call } => RunEvent::ToolCallComplete { index, call },
            Self::ModelCallDiscarded { attempt, iteration, error, usage } => {
                RunEvent::ModelCallDiscarded { attempt, iteration, error, usage }
            }
            Self::IterationFinished { attempt, iteration, usage, stop_reason } => {
                RunEvent::IterationFinished { attempt, iteration, usage, stop_reason }
            }
            Self::ToolExecutionStarted { call } => RunEvent::ToolExecutionStarted { call },
            Self::ToolExecutionFinished { call, result } => RunEvent::ToolExecutionFinished { call, result },
            Self::ToolCallDeferred { call, reason } => RunEvent::ToolCallDeferred { call, reason },
            Self::OutputDelta { attempt, partial } => RunEvent::OutputDelta { attempt, partial },
            Self::OutputProposed { attempt, input } => RunEvent::OutputProposed { attempt, input },
            Self::ValidationFailed { attempt, errors } => RunEvent::ValidationFailed { attempt, errors },
            Self::SubRun { call_id, agent, event } => RunEvent::SubRun { call_id, agent, event },
            Self::Finished(never) => match never {
                Ok(output) => match output.output {},
                Err(_) => unreachable!("the engine never sends `Finished`"),
            },
        }
    }
}
