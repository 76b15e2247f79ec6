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
use crate::message::Message;
use crate::run::{
    AttemptFailure, Engine, Event, LoopEnd, Phase, RunError, RunOutput, Stop, Tally, Termination, deadline_passed,
};
use crate::stream::{EventSink, Progress};

impl<O: AgentOutput, R> Agent<O, R> {
    pub(super) async fn execute(
        &self,
        conversation: &mut Conversation,
        cancel: &CancellationToken,
        events: Option<EventSink>,
    ) -> Result<RunOutput<O::Value>, RunError> {
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
        let span =
            tracing::info_span!("agent_run", model = self.model.name(), typed = self.output_definition.is_some());
        let mut failures = Vec::new();
        let outcome = self.attempts(&engine, conversation, &mut tally, &mut failures).instrument(span).await;
        let termination = match &outcome {
            Ok((_, termination)) => termination.clone(),
            Err(stop) => stop.termination.clone(),
        };
        engine.fire(&Event::Stop { reason: &termination }, &tally);
        let metadata = tally.finish(termination);
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
        for attempt in 1..=self.max_attempts {
            tally.attempts = attempt;
            engine.fire(&Event::AttemptStart { attempt }, tally);
            let own_tools = (self.output_definition.as_ref())
                .map(|definition| OwnTools::new(definition, self.typed.reflection.as_deref()));
            let mut control = AgentControl { text: &self.text, own_tools };
            let span = tracing::info_span!("attempt", attempt);
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
                    engine.stream_event(|| Progress::OutputProposed { attempt, input: proposal.value.clone() });
                    let validation = self.validate(proposal);
                    let checked = tokio::select! {
                        biased;
                        () = engine.cancel.cancelled() => {
                            return Err(Stop::new(Termination::Cancelled { phase: Phase::Validation }));
                        }
                        () = deadline_passed(engine.deadline) => return Err(engine.deadline_stop()),
                        checked = validation => checked,
                    };
                    match checked {
                        Ok(output) => return Ok((output, Termination::Output)),
                        Err(errors) => AttemptFailure::Invalid { attempt, errors },
                    }
                }
            };
            let errors = failure.errors();
            tracing::debug!(attempt, ?errors, "attempt failed");
            engine.fire(&Event::ValidationFailure { attempt, errors: &errors }, tally);
            if attempt < self.max_attempts {
                conversation.push(Message::user(self.feedback(&failure)));
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

    /// What the model is told after a failed attempt.
    fn feedback(&self, failure: &AttemptFailure) -> String {
        let tool = self.output_definition.as_ref().map_or(DEFAULT_OUTPUT_TOOL, |definition| &*definition.name);
        let then = if self.typed.reflection.is_some() { format!(", then call `{SUBMIT_TOOL}`") } else { String::new() };
        match failure {
            AttemptFailure::Invalid { errors, .. } => {
                let list = errors.iter().fold(String::new(), |list, error| list + "\n- " + error);
                format!("Your output was rejected:{list}\nCall `{tool}` again with a corrected output{then}.")
            }
            AttemptFailure::NoOutputCall { .. } => {
                format!(
                    "You answered without calling the `{tool}` tool. Call the `{tool}` tool with your output{then}."
                )
            }
        }
    }
}
