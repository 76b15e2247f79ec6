//! What a run reports: one event per fact, in the order the facts became true.

use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use super::governance::Verdict;
use super::termination::Termination;
use crate::conversation::CompactionReason;
use crate::conversation::pending::DeferralReason;
use crate::message::{ToolCall, ToolResult};
use crate::model::ModelResponse;
use crate::usage::Usage;

/// One fact of a run, reported once, when it becomes true. Every observer
/// of a run sees the same events: hooks
/// ([`on_event`](crate::AgentBuilder::on_event) and the typed hooks,
/// each named for the event it filters, as
/// [`on_tool_execution_finished`](crate::AgentBuilder::on_tool_execution_finished)), a streamed run's
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
///
/// # The serialised form
///
/// An event serialises (serde) as one JSON object: `"type"` is its
/// [`name`](Self::name), and its fields follow under the names documented
/// here, each in its own serde form, with two exceptions:
/// [`ToolExecutionFinished`](Self::ToolExecutionFinished)'s `elapsed` is
/// `elapsed_ms`, in whole milliseconds, and its [`Verdict`] sits in the
/// object itself (`"verdict"` and, when there is one, `"reason"`). So the
/// events are what an audit log or an SSE endpoint ships as they are:
///
/// ```json
/// {"type": "tool_execution_finished", "attempt": 1, "iteration": 1,
///  "call": {"id": "call_1", "name": "delete_file", "input": {"path": "/etc/hosts"}},
///  "result": {"call_id": "call_1", "content": "...", "failure": "denied"},
///  "verdict": "denied", "reason": "system files are off limits", "elapsed_ms": 0}
/// ```
///
/// These names are part of the API: they change only with a major version.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
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
        /// The whole answer: content, usage, stop reason, and who answered:
        /// [`provider`](ModelResponse::provider) and
        /// [`model`](ModelResponse::model) name the model that did (with a
        /// [`Fallback`](crate::providers::Fallback), the one that answered;
        /// the model called, when the provider does not say).
        response: Box<ModelResponse>,
    },
    /// The model that answered was shown another provider's blocks
    /// rewritten for it: tool calls and results another provider wrote
    /// became text (or were dropped), so the model saw text where the
    /// conversation holds tool calls. `provider` is the answering model's
    /// (behind a [`Fallback`](crate::providers::Fallback), the one that
    /// answered). Comes right before the call's
    /// [`IterationFinished`](Self::IterationFinished); a failed call
    /// reports none.
    ViewRewritten {
        /// The attempt.
        attempt: u32,
        /// The iteration.
        iteration: u32,
        /// The provider the view was built for.
        provider: String,
        /// Messages of the history that were rewritten.
        messages: usize,
    },
    /// The view sent to the model was compacted to fit the context window
    /// (see [`ContextPolicy`](super::ContextPolicy)); the call is sent with
    /// the compacted view. The conversation itself is unchanged.
    Compacted {
        /// The attempt.
        attempt: u32,
        /// The iteration.
        iteration: u32,
        /// Why it was compacted.
        reason: CompactionReason,
        /// Old tool results whose content was replaced with
        /// [`ELIDED_RESULT`](super::ELIDED_RESULT).
        tool_results_elided: usize,
        /// Whole messages left out (old iterations).
        messages_dropped: usize,
        /// Whether the messages left out were replaced by a summary
        /// (see [`Summariser`](super::Summariser)).
        summarised: bool,
        /// The estimated prompt tokens of the view before
        /// ([`estimate_tokens`](super::estimate_tokens)).
        estimated_tokens_before: u64,
        /// The estimated prompt tokens of the view after.
        estimated_tokens_after: u64,
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
    /// of every call, for audit: serialise it as it is (see
    /// [the serialised form](Self#the-serialised-form)).
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
        /// Serialised in the event's object: `"verdict"` and `"reason"`.
        #[serde(flatten)]
        verdict: Verdict,
        /// How long the call ran (zero when it did not run). Serialised as
        /// `elapsed_ms`, in whole milliseconds.
        #[serde(rename = "elapsed_ms", serialize_with = "millis")]
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

fn millis<S: serde::Serializer>(value: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_u64(u64::try_from(value.as_millis()).unwrap_or(u64::MAX))
}

impl Event {
    /// A short name of the event kind (`"text_delta"`, ...), as an SSE
    /// `event:` line would carry it, and as the `"type"` of its
    /// [serialised form](Self#the-serialised-form).
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
            Self::ViewRewritten { .. } => "view_rewritten",
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::Event;
    use crate::conversation::CompactionReason;
    use crate::conversation::pending::DeferralReason;
    use crate::message::{FailureKind, ToolCall, ToolResult};
    use crate::model::ModelResponse;
    use crate::run::{Termination, Verdict};
    use crate::usage::Usage;

    fn every_event() -> Vec<Event> {
        let call = ToolCall::new("c1", "lookup", json!({"q": 1}));
        let finished = Event::ToolExecutionFinished {
            attempt: 1,
            iteration: 2,
            call: call.clone(),
            result: ToolResult::success("c1", "ok"),
            verdict: Verdict::Allowed,
            elapsed: Duration::from_millis(3),
        };
        vec![
            Event::AttemptStarted { attempt: 1 },
            Event::IterationStarted { attempt: 1, iteration: 1 },
            Event::TextDelta { text: "a".into() },
            Event::ReasoningDelta { text: "b".into() },
            Event::ToolCallStarted { index: 0, id: "c1".into(), name: "lookup".into() },
            Event::ToolCallArgumentsDelta { index: 0, fragment: "{".into(), partial: None },
            Event::ToolCallWritten { index: 0, call: call.clone() },
            Event::ModelCallDiscarded { attempt: 1, iteration: 1, error: "boom".into(), usage: Usage::default() },
            Event::IterationFinished { attempt: 1, iteration: 1, response: Box::new(ModelResponse::from_text("hi")) },
            Event::ViewRewritten { attempt: 1, iteration: 1, provider: "openai".into(), messages: 2 },
            compacted(),
            Event::ToolExecutionStarted { attempt: 1, iteration: 1, call: call.clone() },
            finished.clone(),
            Event::ToolCallDeferred { attempt: 1, iteration: 1, call, reason: DeferralReason::External },
            Event::OutputDelta { attempt: 1, partial: json!({}) },
            Event::OutputProposed { attempt: 1, input: json!({}) },
            Event::ValidationFailed { attempt: 1, errors: vec!["no".into()] },
            Event::SubRun { call_id: "c1".into(), agent: "helper".into(), event: Box::new(finished) },
            Event::RunFinished { termination: Termination::Answer },
        ]
    }

    fn compacted() -> Event {
        Event::Compacted {
            attempt: 1,
            iteration: 1,
            reason: CompactionReason::Threshold,
            tool_results_elided: 1,
            messages_dropped: 0,
            summarised: false,
            estimated_tokens_before: 10,
            estimated_tokens_after: 5,
        }
    }

    #[test]
    fn the_serialised_type_is_the_name() {
        for event in every_event() {
            let json = serde_json::to_value(&event).unwrap();
            assert_eq!(json["type"], event.name(), "{json}");
        }
    }

    /// The audit record of a call is its `ToolExecutionFinished`, serialised:
    /// the names below are the documented form.
    #[test]
    fn a_finished_tool_execution_serialises_as_its_audit_record() {
        let denied = Event::ToolExecutionFinished {
            attempt: 1,
            iteration: 2,
            call: ToolCall::new("c1", "delete_file", json!({"path": "/etc/hosts"})),
            result: ToolResult::failure("c1", FailureKind::Denied, "no system files"),
            verdict: Verdict::Denied("no system files".into()),
            elapsed: Duration::from_micros(2500),
        };
        assert_eq!(
            serde_json::to_value(&denied).unwrap(),
            json!({
                "type": "tool_execution_finished",
                "attempt": 1,
                "iteration": 2,
                "call": {"id": "c1", "name": "delete_file", "input": {"path": "/etc/hosts"}},
                "result": {"call_id": "c1", "content": "no system files", "failure": "denied"},
                "verdict": "denied",
                "reason": "no system files",
                "elapsed_ms": 2,
            })
        );
        let Some(sub_run @ Event::SubRun { .. }) = every_event().into_iter().find(|event| event.name() == "sub_run")
        else {
            panic!("no sub-run event");
        };
        let nested = serde_json::to_value(sub_run).unwrap();
        assert_eq!(nested["type"], "sub_run");
        assert_eq!(nested["call_id"], "c1");
        assert_eq!(nested["event"]["type"], "tool_execution_finished");
        assert_eq!(nested["event"]["verdict"], "allowed");
        assert!(nested["event"].get("reason").is_none(), "{nested}");
        assert_eq!(nested["event"]["elapsed_ms"], 3);
    }

    /// What a compaction did, and a view rewrite, are in their events'
    /// objects, flat: nothing else records the details.
    #[test]
    fn compactions_and_view_rewrites_serialise_flat() {
        assert_eq!(
            serde_json::to_value(compacted()).unwrap(),
            json!({
                "type": "compacted",
                "attempt": 1,
                "iteration": 1,
                "reason": "threshold",
                "tool_results_elided": 1,
                "messages_dropped": 0,
                "summarised": false,
                "estimated_tokens_before": 10,
                "estimated_tokens_after": 5,
            })
        );
        let rewritten = Event::ViewRewritten { attempt: 2, iteration: 3, provider: "anthropic".into(), messages: 4 };
        assert_eq!(
            serde_json::to_value(rewritten).unwrap(),
            json!({"type": "view_rewritten", "attempt": 2, "iteration": 3, "provider": "anthropic", "messages": 4})
        );
    }
}
