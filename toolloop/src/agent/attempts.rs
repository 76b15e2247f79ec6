//! A run of an agent: attempts of the loop, validation, feedback.

use std::panic::AssertUnwindSafe;

use futures_util::FutureExt as _;
use tracing::Instrument as _;

use super::agent::Agent;
use super::constraints;
use super::output::{AgentOutput, DEFAULT_OUTPUT_TOOL};
use super::own_tools::{AgentControl, AgentSignal, OwnTools, Proposal, SUBMIT_TOOL};
use super::spec::Check;
use crate::cancel::CancellationToken;
use crate::conversation::Conversation;
use crate::message::{ContentBlock, FailureKind, Message, ToolResult};
use crate::run::{
    AttemptFailure, Engine, Event, LoopEnd, Phase, RunError, RunOutput, Stop, Tally, Termination, deadline_passed,
};
use crate::stream::{EventSink, Progress};
use crate::telemetry::spans;

impl<O: AgentOutput, R> Agent<O, R> {
    pub(super) async fn execute(
        &self,
        conversation: &mut Conversation,
        cancel: &CancellationToken,
        events: Option<EventSink>,
    ) -> Result<RunOutput<O::Value>, RunError> {
        if let Some(error) = RunError::nothing_to_answer(conversation) {
            return Err(error);
        }
        let mut tally = Tally::start();
        let engine = Engine {
            model: &*self.model,
            tools: &self.tools,
            definitions: &self.definitions,
            system: self.system.as_deref(),
            options: &self.options,
            hooks: &self.hooks,
            governance: &self.governance,
            cancel,
            deadline: self.options.max_duration.map(|limit| tally.started + limit),
            confirmation: self.text.confirmation.as_deref(),
            events,
        };
        let span = spans::invoke_agent(self.name.as_deref(), &*self.model);
        let mut failures = Vec::new();
        let outcome = self.attempts(&engine, conversation, &mut tally, &mut failures).instrument(span.clone()).await;
        let termination = match &outcome {
            Ok((_, termination)) => termination.clone(),
            Err(stop) => stop.termination.clone(),
        };
        engine.fire(&Event::Stop { reason: &termination }, &tally);
        let metadata = tally.finish(termination);
        if !span.is_disabled() {
            let termination = &metadata.termination;
            spans::end_run(&span, metadata.usage, &termination.name(), termination.is_success());
        }
        tracing::debug!(?metadata, "agent run finished");
        match outcome {
            Ok((output, _)) => Ok(RunOutput { output, metadata }),
            Err(stop) => Err(RunError::new(stop, metadata).with_attempt_failures(failures)),
        }
    }

    async fn attempts(
        &self,
        engine: &Engine<'_>,
        conversation: &mut Conversation,
        tally: &mut Tally,
        failures: &mut Vec<AttemptFailure>,
    ) -> Result<(O::Value, Termination), Stop> {
        // One control for every attempt: with reflection, an output proposed
        // but not submitted can still be submitted in the next attempt.
        let own_tools = (self.output_definition.as_ref())
            .map(|definition| OwnTools::new(definition, self.typed.reflection.as_deref()));
        let mut control = AgentControl { text: &self.text, own_tools };
        for attempt in 1..=self.max_attempts {
            tally.attempts = attempt;
            engine.fire(&Event::AttemptStart { attempt }, tally);
            let span = spans::attempt(attempt);
            let end = engine.drive(conversation, tally, attempt, &mut control).instrument(span).await?;
            let failure = match end {
                // Only text agents have terminal checks, so a typed agent never gets here.
                LoopEnd::Signal(AgentSignal::Text(text)) => match O::from_text(text.clone()) {
                    Some(output) => return Ok((output, Termination::Signal)),
                    None => AttemptFailure::NoOutputCall { attempt, text },
                },
                LoopEnd::Answer(text) => match O::from_text(text.clone()) {
                    Some(output) => return Ok((output, Termination::Answer)),
                    None => AttemptFailure::NoOutputCall { attempt, text },
                },
                LoopEnd::Signal(AgentSignal::SubmitBeforeOutput) => {
                    return Err(Stop::new(Termination::SubmitBeforeOutput { attempt }));
                }
                LoopEnd::Signal(AgentSignal::Output(proposal)) => {
                    let call_id = proposal.call_id.clone();
                    let parsed = proposal.parsed.is_ok();
                    engine.stream_event(|| Progress::OutputProposed { attempt, input: proposal.value.clone() });
                    let validation = self.validate(proposal);
                    // With reflection the verdict answers `submit`, whose
                    // result event the loop left to it (`Control::settles_later`).
                    let settled_here = self.typed.reflection.is_some();
                    let checked = tokio::select! {
                        biased;
                        () = engine.cancel.cancelled() => {
                            let (attempt, iteration) = tally.position;
                            if settled_here {
                                report_result(engine, conversation, tally, &call_id);
                            }
                            let phase = Phase::Validation;
                            return Err(Stop::new(Termination::Cancelled { attempt, iteration, phase }));
                        }
                        () = deadline_passed(engine.deadline) => {
                            if settled_here {
                                report_result(engine, conversation, tally, &call_id);
                            }
                            return Err(engine.deadline_stop());
                        }
                        checked = validation => checked,
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
                    if settled_here {
                        report_result(engine, conversation, tally, &call_id);
                    }
                    match checked {
                        Ok(output) => return Ok((output, Termination::Output)),
                        Err(errors) => AttemptFailure::Invalid { attempt, errors },
                    }
                }
            };
            let errors = failure.errors();
            tracing::debug!(attempt, ?errors, "attempt failed");
            engine.fire(&Event::ValidationFailure { attempt, errors: &errors }, tally);
            // A rejected output's verdict is already in its call's result;
            // only a text answer needs a message of its own.
            let proposed = control.own_tools.as_ref().is_some_and(OwnTools::has_unsubmitted_proposal);
            if attempt < self.max_attempts && matches!(failure, AttemptFailure::NoOutputCall { .. }) {
                conversation.push(Message::user(self.no_output_feedback(proposed)));
            }
            failures.push(failure);
        }
        let attempts = self.max_attempts;
        Err(Stop::new(match failures.last() {
            Some(AttemptFailure::NoOutputCall { .. }) => Termination::NoOutputCall { attempts },
            _ => Termination::ValidationFailed { attempts },
        }))
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
        let elapsed = std::time::Duration::ZERO;
        engine.fire(&Event::ToolResult { attempt, iteration, call, result, elapsed }, tally);
    }
}
