//! A run of an agent: attempts of the loop, validation, feedback.

use std::borrow::Cow;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures_util::FutureExt as _;
use serde_json::Value;
use tracing::Instrument as _;

use super::error::{AttemptFailure, RunError, RunErrorKind};
use super::output_tool::{AgentControl, AgentSignal, SUBMIT_TOOL, SubmitTool};
use super::spec::{AgentOutput, Check};
use super::{Agent, RunOutput, constraints};
use crate::cancel::CancellationToken;
use crate::conversation::Conversation;
use crate::message::Message;
use crate::run::{Engine, Event, LoopEnd, Phase, Tally, TerminationReason, deadline_passed};
use crate::tool::ToolSet;

impl<O: AgentOutput, R> Agent<O, R> {
    pub(super) async fn execute(
        &self,
        conversation: &mut Conversation,
        cancel: &CancellationToken,
    ) -> Result<RunOutput<O::Value>, RunError> {
        let mut tally = Tally::start();
        let proposed = Arc::new(AtomicBool::new(false));
        let tools = self.tools_for_run(&proposed);
        let engine = Engine {
            model: &*self.model,
            tools: &tools,
            system: self.system.as_deref(),
            options: &self.options,
            hooks: &self.hooks,
            governance: &self.governance,
            cancel,
            deadline: self.options.timeout.map(|timeout| tally.started + timeout),
            confirmation: self.text.confirmation.as_deref(),
        };
        let span =
            tracing::info_span!("agent_run", model = self.model.name(), typed = self.output_definition.is_some());
        let outcome = self.attempts(&engine, conversation, &mut tally, &proposed).instrument(span).await;
        let reason = match &outcome {
            Ok((_, reason)) => reason.clone(),
            Err(kind) => kind.termination(),
        };
        engine.fire(&Event::Stop { reason: &reason }, &tally);
        let metadata = tally.finish(reason);
        tracing::debug!(?metadata, "agent run finished");
        match outcome {
            Ok((output, _)) => Ok(RunOutput { output, metadata }),
            Err(kind) => Err(RunError::new(kind, metadata)),
        }
    }

    /// The helper tools plus, for a typed agent, its output tool (and `submit`).
    fn tools_for_run(&self, proposed: &Arc<AtomicBool>) -> Cow<'_, ToolSet> {
        let Some(definition) = &self.output_definition else { return Cow::Borrowed(&self.tools) };
        let mut tools = self.tools.clone();
        let reflection = self.typed.reflection.clone();
        let reflective = reflection.is_some();
        // `build()` checked that these names are free.
        if let Some(output_tool) = O::output_tool(definition.clone(), reflection, Arc::clone(proposed)) {
            let _ = tools.add_dyn(output_tool);
        }
        if reflective {
            let _ = tools.add_dyn(Arc::new(SubmitTool {
                definition: self.submit_definition.clone(),
                output_tool: definition.name.clone(),
                proposed: Arc::clone(proposed),
            }));
        }
        Cow::Owned(tools)
    }

    async fn attempts(
        &self,
        engine: &Engine<'_>,
        conversation: &mut Conversation,
        tally: &mut Tally,
        proposed: &AtomicBool,
    ) -> Result<(O::Value, TerminationReason), RunErrorKind> {
        let mut failures: Vec<AttemptFailure> = Vec::new();
        for attempt in 1..=self.max_attempts {
            tally.attempts = attempt;
            proposed.store(false, Ordering::SeqCst);
            engine.fire(&Event::AttemptStart { attempt }, tally);
            let mut control = match &self.output_definition {
                None => AgentControl::Text(&self.text),
                Some(definition) => AgentControl::Typed {
                    output_tool: &definition.name,
                    reflective: self.typed.reflection.is_some(),
                    last_output: None,
                },
            };
            let span = tracing::info_span!("attempt", attempt);
            let end = engine
                .drive(conversation, tally, attempt, &mut control)
                .instrument(span)
                .await
                .map_err(|stop| RunErrorKind::from_stop(stop, attempt))?;
            let failure = match end {
                // Only text agents have terminal checks, so a typed agent never gets here.
                LoopEnd::Signal(AgentSignal::Text(text)) => match O::from_text(text.clone()) {
                    Some(output) => return Ok((output, TerminationReason::Signal)),
                    None => AttemptFailure::NoOutputCall { attempt, text },
                },
                LoopEnd::Answer(text) => match O::from_text(text.clone()) {
                    Some(output) => return Ok((output, TerminationReason::Answer)),
                    None => AttemptFailure::NoOutputCall { attempt, text },
                },
                LoopEnd::Signal(AgentSignal::SubmitBeforeOutput) => {
                    return Err(RunErrorKind::SubmitBeforeOutput { attempt });
                }
                LoopEnd::Signal(AgentSignal::Output(value)) => {
                    let validation = self.validate(&value);
                    let checked = tokio::select! {
                        biased;
                        () = engine.cancel.cancelled() => return Err(RunErrorKind::Cancelled { phase: Phase::Validation }),
                        () = deadline_passed(engine.deadline) => return Err(RunErrorKind::DeadlineExceeded),
                        checked = validation => checked,
                    };
                    match checked {
                        Ok(output) => return Ok((output, TerminationReason::Output)),
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
        Err(match failures.last() {
            Some(AttemptFailure::NoOutputCall { .. }) => RunErrorKind::InvalidResponse { failures },
            _ => RunErrorKind::ValidationFailed { failures },
        })
    }

    /// Deserialises, checks the schema's constraints, then runs the validators.
    async fn validate(&self, value: &Value) -> Result<O::Value, Vec<String>> {
        let Some(definition) = &self.output_definition else {
            return Err(vec!["a text agent has no typed output".to_owned()]);
        };
        let reparsed;
        let value = match value {
            Value::String(raw) => match serde_json::from_str::<Value>(raw) {
                Ok(parsed) => {
                    reparsed = parsed;
                    &reparsed
                }
                Err(_) => value,
            },
            other => other,
        };
        // As parsing does: nulls for optional fields (which strict mode makes
        // the model send) mean "absent", so the constraints see them so too.
        let relaxed = crate::tool::schema::drop_optional_nulls(value, &definition.input_schema);
        let value = relaxed.as_ref().unwrap_or(value);
        let mut errors = constraints::violations(&definition.input_schema, value);
        let output = match O::parse(value, definition) {
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
        let tool = self.output_definition.as_ref().map_or("final_output", |definition| &*definition.name);
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
