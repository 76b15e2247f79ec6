//! A run of an agent: attempts of the loop, validation, feedback.

use std::panic::AssertUnwindSafe;
use std::pin::pin;

use futures_util::FutureExt as _;
use tracing::Instrument as _;

use super::agent::Agent;
use super::answer_json::answer_json;
use super::constraints;
use super::output::{AgentOutput, DEFAULT_OUTPUT_TOOL};
use super::output_mode::OutputMode;
use super::own_tools::{AgentControl, AgentSignal, OwnTools, Proposal, SUBMIT_TOOL};
use super::spec::Check;
use crate::cancel::{CancellationToken, Interruption, guarded};
use crate::conversation::Conversation;
use crate::message::{ContentBlock, FailureKind, Message, ToolResult};
use crate::run::EventSink;
use crate::run::deferral::Checkpoint;
use crate::run::journal::Journal;
use crate::run::{
    AttemptFailure, Engine, Event, LoopOutput, OutputSource, Phase, Resume, RunError, RunOutput, Segment, Setup, Stop,
    Tally, Termination,
};
use crate::stop_reason::StopReason;
use crate::telemetry::spans;

impl<O: AgentOutput, R> Agent<O, R> {
    pub(super) async fn execute(
        &self,
        conversation: &mut Conversation,
        cancel: &CancellationToken,
        events: Option<EventSink>,
        resume: Option<Resume>,
        journal: Option<&dyn Journal>,
    ) -> Result<RunOutput<O::Value>, RunError> {
        let setup = Setup {
            name: self.name.as_deref(),
            model: &*self.model,
            tools: &self.tools,
            definitions: &self.definitions,
            system: self.system.as_deref(),
            options: &self.options,
            hooks: &self.hooks,
            governance: &self.governance,
            confirmation: self.text.confirmation.as_deref(),
            response_schema: self.response_schema.as_ref(),
            output: match (&self.output_definition, self.output_mode) {
                (None, _) => None,
                (Some(definition), OutputMode::Tool) => Some(OutputSource::Tool(&definition.name)),
                (Some(_), _) => Some(OutputSource::Text),
            },
        };
        let mut segment = Segment::start(setup, conversation, cancel, events, resume.as_ref(), journal)?;
        let mut failures = resume.as_ref().map(|resume| resume.checkpoint.attempt_failures.clone()).unwrap_or_default();
        let attempts = self.attempts(&segment.engine, conversation, &mut segment.tally, &mut failures, resume);
        let outcome = attempts.instrument(segment.span.clone()).await;
        if let Err(stop) = &outcome
            && stop.termination.is_deferred()
            && let Some(pending) = conversation.pending_mut()
        {
            // A resumed run reports the failed attempts of both segments.
            if let Ok(mut checkpoint) = Checkpoint::from_value(&pending.checkpoint) {
                checkpoint.attempt_failures.clone_from(&failures);
                pending.checkpoint = checkpoint.to_value();
            }
        }
        segment.finish(outcome).map_err(|error| error.with_attempt_failures(failures))
    }

    async fn attempts(
        &self,
        engine: &Engine<'_>,
        conversation: &mut Conversation,
        tally: &mut Tally,
        failures: &mut Vec<AttemptFailure>,
        mut resume: Option<Resume>,
    ) -> Result<(O::Value, Termination), Stop> {
        // One control for every attempt: with reflection, an output proposed
        // but not submitted can still be submitted in the next attempt.
        // Without reflection, the native and prompted modes own no tool.
        let offered = self.output_mode == OutputMode::Tool;
        // Made in place: a local moved into the control would keep its room
        // in the run's future beside the control's.
        let mut control = AgentControl {
            text: &self.text,
            own_tools: (self.output_definition.as_ref())
                .filter(|_| offered || self.typed.reflection.is_some())
                .map(|definition| OwnTools::new(definition, offered, self.typed.reflection.as_deref())),
        };
        if let (Some(own_tools), Some(_)) = (&mut control.own_tools, &resume) {
            // The control of the paused run is gone: what it held (an
            // output proposed, not submitted) is read back from the history.
            own_tools.recall(conversation, tally.first_message);
        }
        let first = resume.as_ref().map_or(1, |resume| resume.checkpoint.attempt.max(1));
        for attempt in first..=self.max_attempts.max(first) {
            tally.attempts = attempt;
            let span = spans::attempt(attempt);
            let end = if let Some(Resume { answers, checkpoint }) = resume.take() {
                // The paused attempt goes on where it was.
                let cursor = checkpoint.cursor();
                // Boxed, as every rare step: the run's future is as large as
                // its largest state, and every run in flight holds it.
                let resumed = engine.drive_from(conversation, tally, attempt, &mut control, cursor, Some(answers));
                Box::pin(resumed.instrument(span)).await?
            } else {
                engine.emit(tally, || Event::AttemptStarted { attempt });
                engine.drive(conversation, tally, attempt, &mut control).instrument(span).await?
            };
            // Whether the verdict already answers an output (or `submit`) call.
            let mut verdict_in_result = false;
            let failure = match end {
                // Only text agents have terminal checks, so a typed agent never gets here.
                LoopOutput::Signal(AgentSignal::Text(text)) => match O::from_text(text.clone()) {
                    Some(output) => return Ok((output, Termination::Signal)),
                    None => AttemptFailure::NoOutputCall { attempt, text },
                },
                LoopOutput::Answer(text)
                    if self.output_definition.is_some()
                        && matches!(tally.stop_reason, Some(StopReason::Refusal | StopReason::ContentFilter)) =>
                {
                    let message = if text.trim().is_empty() && tally.stop_reason == Some(StopReason::ContentFilter) {
                        "the provider's content filter blocked the answer".to_owned()
                    } else {
                        text
                    };
                    return Err(Stop::new(Termination::Refused { attempt, message }));
                }
                // The validation steps are boxed too (rare: once per attempt).
                LoopOutput::Answer(text) if self.output_mode.reads_text() => {
                    match Box::pin(self.read_answer(engine, tally, attempt, &text)).await? {
                        Ok(output) => return Ok((output, Termination::Output)),
                        Err(errors) => AttemptFailure::Invalid { attempt, errors },
                    }
                }
                LoopOutput::Answer(text) => match O::from_text(text.clone()) {
                    Some(output) => return Ok((output, Termination::Answer)),
                    None => AttemptFailure::NoOutputCall { attempt, text },
                },
                LoopOutput::Signal(AgentSignal::SubmitBeforeOutput) => {
                    return Err(Stop::new(Termination::SubmitBeforeOutput { attempt }));
                }
                LoopOutput::Signal(AgentSignal::Output(proposal)) => {
                    verdict_in_result = true;
                    match Box::pin(self.settle(engine, conversation, tally, attempt, proposal)).await? {
                        Ok(output) => return Ok((output, Termination::Output)),
                        Err(errors) => AttemptFailure::Invalid { attempt, errors },
                    }
                }
            };
            let errors = failure.errors();
            tracing::debug!(attempt, ?errors, "attempt failed");
            engine.emit(tally, || Event::ValidationFailed { attempt, errors: errors.clone() });
            // A rejected output's verdict is already in its call's result;
            // only a text answer needs a message of its own.
            let proposed = control.own_tools.as_ref().is_some_and(OwnTools::has_unsubmitted_proposal);
            if attempt < self.max_attempts {
                match &failure {
                    AttemptFailure::NoOutputCall { .. } => {
                        conversation.push(Message::user(self.no_output_feedback(proposed)));
                    }
                    // No output call to answer: the verdict is a message (with
                    // reflection, `submit`'s result already carries it).
                    AttemptFailure::Invalid { errors, .. } if self.output_mode.reads_text() && !verdict_in_result => {
                        conversation.push(Message::user(answer_rejection(errors)));
                    }
                    _ => {}
                }
            }
            failures.push(failure);
        }
        let attempts = self.max_attempts;
        Err(Stop::new(match failures.last() {
            Some(AttemptFailure::NoOutputCall { .. }) => Termination::NoOutputCall { attempts },
            _ => Termination::ValidationFailed { attempts },
        }))
    }

    /// The output of a text answer (native and prompted modes), validated.
    async fn read_answer(
        &self,
        engine: &Engine<'_>,
        tally: &Tally,
        attempt: u32,
        text: &str,
    ) -> Result<Result<O::Value, Vec<String>>, Stop> {
        let Some(definition) = &self.output_definition else {
            return Ok(Err(vec!["a text agent has no typed output".to_owned()]));
        };
        let cut_off = tally.stop_reason.as_ref().is_some_and(StopReason::is_truncated);
        let value = match answer_json(text) {
            Ok(value) => value,
            Err(error) if cut_off => {
                let cut =
                    "your answer was cut off at the output token limit before it was complete: give a shorter output";
                return Ok(Err(vec![cut.to_owned(), error]));
            }
            Err(error) => return Ok(Err(vec![error])),
        };
        engine.emit(tally, || Event::OutputProposed { attempt, input: value.clone() });
        self.checked(engine, tally, Proposal::from_input(String::new(), &value, definition)).await
    }

    /// Validates a proposed output and answers its call with the verdict
    /// (the output call, or `submit` with reflection).
    async fn settle(
        &self,
        engine: &Engine<'_>,
        conversation: &mut Conversation,
        tally: &Tally,
        attempt: u32,
        proposal: Proposal<O>,
    ) -> Result<Result<O::Value, Vec<String>>, Stop> {
        let call_id = proposal.call_id.clone();
        let parsed = proposal.parsed.is_ok();
        engine.emit(tally, || Event::OutputProposed { attempt, input: proposal.value.clone() });
        // The verdict answers the output call (or `submit`, with
        // reflection), whose result event the loop left to it
        // (`Control::settles_later`).
        let checked = match self.checked(engine, tally, proposal).await {
            Ok(checked) => checked,
            Err(stop) => {
                report_result(engine, conversation, tally, &call_id);
                return Err(stop);
            }
        };
        // The verdict answers the call that proposed (or submitted) the output.
        let verdict = match &checked {
            Ok(_) => ToolResult::success(&call_id, "Output accepted."),
            Err(errors) => {
                let kind = if parsed { FailureKind::Rejected } else { FailureKind::InvalidArguments };
                ToolResult::failure(&call_id, kind, self.rejection(errors))
            }
        };
        conversation.settle_last_result(verdict);
        report_result(engine, conversation, tally, &call_id);
        Ok(checked)
    }

    /// [`validate`](Self::validate), cancellable and bounded by the run's `max_duration`.
    async fn checked(
        &self,
        engine: &Engine<'_>,
        tally: &Tally,
        proposal: Proposal<O>,
    ) -> Result<Result<O::Value, Vec<String>>, Stop> {
        let validation = pin!(self.validate(proposal));
        guarded(Some(engine.cancel), engine.deadline, validation).await.map_err(|interruption| match interruption {
            Interruption::Cancelled => {
                let (attempt, iteration) = tally.position;
                Stop::new(Termination::Cancelled { attempt, iteration, phase: Phase::Validation })
            }
            Interruption::Deadline => engine.deadline_stop(),
        })
    }

    /// Checks the schema's constraints and deserialisation (done once, when
    /// the output was proposed), then runs the validators.
    async fn validate(&self, proposal: Proposal<O>) -> Result<O::Value, Vec<String>> {
        let Some(definition) = &self.output_definition else {
            return Err(vec!["a text agent has no typed output".to_owned()]);
        };
        let mut errors = constraints::violations(&definition.input_schema, &proposal.value);
        let output = match proposal.parsed {
            Ok(output) if errors.is_empty() => output,
            Ok(_) => return Err(errors),
            Err(error) => {
                errors.push(error);
                return Err(errors);
            }
        };
        for check in &self.typed.checks {
            let verdict = match check {
                Check::Sync(validator) => std::panic::catch_unwind(AssertUnwindSafe(|| validator.check(&output)))
                    .unwrap_or_else(|_| Err("the validator panicked".to_owned())),
                Check::Async(validator) => AssertUnwindSafe(validator.check(&output))
                    .catch_unwind()
                    .await
                    .unwrap_or_else(|_| Err("the validator panicked".to_owned())),
            };
            if let Err(error) = verdict {
                errors.push(error);
            }
        }
        if errors.is_empty() { Ok(output.into_value()) } else { Err(errors) }
    }

    fn output_tool(&self) -> &str {
        self.output_definition.as_ref().map_or(DEFAULT_OUTPUT_TOOL, |definition| &*definition.name)
    }

    /// The verdict on a rejected output, as its call's error result.
    fn rejection(&self, errors: &[String]) -> String {
        let tool = self.output_tool();
        let then = if self.typed.reflection.is_some() { format!(", then call `{SUBMIT_TOOL}`") } else { String::new() };
        let list = errors.iter().fold(String::new(), |list, error| list + "\n- " + error);
        if self.output_mode.reads_text() {
            return format!(
                "Your output was rejected:{list}\nAnswer again with a corrected output as one JSON value{then}."
            );
        }
        format!("Your output was rejected:{list}\nCall `{tool}` again with a corrected output{then}.")
    }

    /// What the model is told after answering with text; `proposed`: with
    /// reflection, an output was proposed and not submitted.
    fn no_output_feedback(&self, proposed: bool) -> String {
        let tool = self.output_tool();
        if proposed {
            return format!(
                "You proposed an output but did not submit it. Call `{SUBMIT_TOOL}` to submit it, or call `{tool}` \
                 again with a corrected output first."
            );
        }
        let then = if self.typed.reflection.is_some() { format!(", then call `{SUBMIT_TOOL}`") } else { String::new() };
        format!("You answered without calling the `{tool}` tool. Call the `{tool}` tool with your output{then}.")
    }
}

/// The verdict on a rejected text answer (native and prompted modes), as
/// the user message that starts the next attempt.
fn answer_rejection(errors: &[String]) -> String {
    let list = errors.iter().fold(String::new(), |list, error| list + "\n- " + error);
    format!("Your output was rejected:{list}\nAnswer again with only the corrected output, as one JSON value.")
}

/// Fires the result event of call `call_id` with the result the
/// conversation holds for it: what the model is told.
fn report_result(engine: &Engine<'_>, conversation: &Conversation, tally: &Tally, call_id: &str) {
    let blocks = || conversation.messages().iter().rev().flat_map(|message| &message.content);
    let call = blocks().find_map(|block| match block {
        ContentBlock::ToolCall(call) if call.id == call_id => Some(call),
        _ => None,
    });
    let result = blocks().find_map(|block| match block {
        ContentBlock::ToolResult(result) if result.call_id == call_id => Some(result),
        _ => None,
    });
    if let (Some(call), Some(result)) = (call, result) {
        let (attempt, iteration) = tally.position;
        let (verdict, span) = tally.settled(call_id);
        spans::tool_result(&span, result);
        engine.emit(tally, || Event::ToolExecutionFinished {
            attempt,
            iteration,
            call: call.clone(),
            result: result.clone(),
            verdict,
            elapsed: std::time::Duration::ZERO,
        });
    }
}
