//! The iteration loop: one model call, then the whole batch of its tool
//! calls, until an answer, a signal or a stop.

use std::panic::{AssertUnwindSafe, catch_unwind};

use tracing::Instrument as _;

use super::control::{Control, LimitDecision};
use super::deferral::{Answer, Checkpoint, Cursor, PendingBatch};
use super::engine::Engine;
use super::outcome::Stop;
use super::panic::panic_message;
use super::pending::{append_batch, append_results};
use super::tally::Tally;
use super::termination::Termination;
use crate::conversation::Conversation;
use crate::message::{FailureKind, Message, Role, ToolCall, ToolResult};
use crate::stop_reason::StopReason;
use crate::telemetry::spans;
use crate::tool::ToolExecution;

/// The output of a [`ToolLoop`](super::ToolLoop) run that ended normally:
/// the answer ([`Termination::Answer`](super::Termination::Answer)) or the
/// signal ([`Termination::Signal`](super::Termination::Signal)). How the run
/// ended is always its [`Termination`](super::Termination); this is what it
/// produced.
#[derive(Clone, Debug, PartialEq)]
pub enum LoopOutput<S> {
    /// The model answered with text and no tool calls.
    Answer(String),
    /// A terminal check or the iteration-limit hook returned a signal.
    Signal(S),
}

impl Engine<'_> {
    /// How many of a response's `count` calls may run.
    fn allowed_calls(&self, count: usize) -> usize {
        self.options.max_tool_calls_per_iteration.map_or(count, |limit| count.min(limit as usize))
    }

    /// The answer to a call beyond the per-iteration cap.
    fn too_many_calls(&self, call: &ToolCall, count: usize) -> ToolResult {
        let limit = self.options.max_tool_calls_per_iteration.unwrap_or_default();
        tracing::debug!(call_id = %call.id, tool = %call.name, limit, "tool call beyond the per-iteration cap");
        let message = format!(
            "not executed: this response made {count} tool calls and at most {limit} run per response; \
             make this call again in a later response if it is still needed"
        );
        ToolResult::failure(&call.id, FailureKind::TooManyCalls, message)
    }

    /// Runs iterations until the model answers, a terminal signal, or a stop.
    pub(crate) async fn drive<S>(
        &self,
        conversation: &mut Conversation,
        tally: &mut Tally,
        attempt: u32,
        control: &mut dyn Control<S>,
    ) -> Result<LoopOutput<S>, Stop> {
        let cursor = Cursor::start(self.options.max_iterations);
        self.drive_from(conversation, tally, attempt, control, cursor, None).await
    }

    /// Runs iterations from `cursor`; with `resumed`, first answers the
    /// paused batch of the conversation's last message as planned, as the
    /// rest of its iteration would have.
    // One iteration's steps in order, each stop beside the step it ends;
    // the resume and confirmation branches pushed it past the line budget.
    #[allow(clippy::too_many_lines)]
    pub(crate) async fn drive_from<S>(
        &self,
        conversation: &mut Conversation,
        tally: &mut Tally,
        attempt: u32,
        control: &mut dyn Control<S>,
        mut cursor: Cursor,
        mut resumed: Option<Vec<Answer>>,
    ) -> Result<LoopOutput<S>, Stop> {
        loop {
            if let Some(answers) = resumed.take() {
                let paused = self.finish_paused(conversation, &answers, tally, attempt, &mut cursor, control);
                if let Some(signal) = paused.await? {
                    return Ok(LoopOutput::Signal(signal));
                }
                continue;
            }
            if cursor.iteration >= cursor.limit {
                // The iterations made are the limit: each starts below it
                // (a checkpoint past its limit does not resume).
                debug_assert_eq!(cursor.iteration, cursor.limit, "an attempt went past its iteration limit");
                // A panicking hook must not break the run: it counts as "stop".
                let decision =
                    catch_unwind(AssertUnwindSafe(|| control.on_limit(cursor.limit))).unwrap_or_else(|panic| {
                        tally.push_hook_error("iteration_limit", &format!("panicked: {}", panic_message(&*panic)));
                        LimitDecision::MaxIterations
                    });
                match decision {
                    LimitDecision::Extend(more) if more > 0 => cursor.limit = cursor.limit.saturating_add(more),
                    LimitDecision::Signal(signal) => return Ok(LoopOutput::Signal(signal)),
                    LimitDecision::MaxIterations | LimitDecision::Extend(_) => {
                        let (iterations, limit) = (cursor.iteration, cursor.limit);
                        return Err(Stop::new(Termination::MaxIterations { attempt, iterations, limit }));
                    }
                }
            }
            self.check_budgets(tally, attempt, cursor.iteration + 1).await?;
            cursor.iteration += 1;
            let iteration = cursor.iteration;
            tally.position = (attempt, iteration);
            tally.iterations += 1;
            let span = spans::iteration(attempt, iteration);
            let response = self.call_model(conversation, tally, attempt, iteration).instrument(span.clone()).await?;
            let stop_reason = response.stop_reason.clone();
            // As `ModelResponse::to_message`, but moving the content instead of copying it.
            let provider = response.provider.unwrap_or_else(|| self.model.provider().to_owned());
            let mut assistant = Message::new(Role::Assistant, response.content).with_provider(provider);
            for (from, to) in conversation.make_call_ids_unique(&mut assistant) {
                tracing::debug!(from = %from, to = %to, "renamed a tool call id that was empty or already used");
            }
            let calls: Vec<ToolCall> = assistant.tool_calls().cloned().collect();

            if calls.is_empty() {
                conversation.push(assistant);
                if stop_reason == StopReason::PauseTurn {
                    continue;
                }
                if let Some(prompt) = self.confirmation.filter(|_| !cursor.confirmation_asked) {
                    cursor.confirmation_asked = true;
                    conversation.push(Message::user(prompt));
                    continue;
                }
                let text = conversation.last().map(Message::text).unwrap_or_default();
                let reply =
                    catch_unwind(AssertUnwindSafe(|| control.answered(&text, &stop_reason))).unwrap_or_else(|panic| {
                        tally.push_hook_error("answer_check", &format!("panicked: {}", panic_message(&*panic)));
                        None
                    });
                if let Some(reply) = reply {
                    conversation.push(Message::user(reply));
                    continue;
                }
                return Ok(LoopOutput::Answer(text));
            }

            // The token budget is checked before the next model call, not
            // here: this response is paid for, and its calls (an output, a
            // terminal tool) cost no tokens.
            let truncated = stop_reason.is_truncated();
            let allowed = self.allowed_calls(calls.len());
            let (executed, stop) = if truncated {
                (self.incomplete(&calls, tally, (attempt, iteration)), None)
            } else {
                self.execute_batch(
                    &calls[..allowed],
                    control,
                    tally,
                    &mut cursor.consecutive_failures,
                    (attempt, iteration),
                )
                .instrument(span)
                .await
            };
            let mut executed = executed;
            if !truncated && allowed < calls.len() {
                executed.resize(allowed, None);
                let at = (attempt, iteration);
                executed.extend(
                    calls[allowed..]
                        .iter()
                        .map(|call| Some(self.not_run(call, self.too_many_calls(call, calls.len()), tally, at))),
                );
            }
            if truncated {
                // Nothing ran: the model is asked to make the calls again.
                let results = executed.into_iter().map(|done| done.map(|done| done.result)).collect();
                append_batch(conversation, assistant, &calls, results, None);
                continue;
            }
            if let Some(signal) = Self::after_batch(
                conversation,
                Some(assistant),
                &calls,
                executed,
                stop,
                tally,
                attempt,
                cursor,
                control,
            )? {
                return Ok(LoopOutput::Signal(signal));
            }
        }
    }

    /// Answers the paused batch of the conversation's last message as
    /// `answers` say, then goes on as the rest of its iteration would have.
    async fn finish_paused<S>(
        &self,
        conversation: &mut Conversation,
        answers: &[Answer],
        tally: &mut Tally,
        attempt: u32,
        cursor: &mut Cursor,
        control: &mut dyn Control<S>,
    ) -> Result<Option<S>, Stop> {
        let calls: Vec<ToolCall> =
            conversation.last().map(|last| last.tool_calls().cloned().collect()).unwrap_or_default();
        let at = (attempt, cursor.iteration);
        let span = spans::iteration(attempt, cursor.iteration);
        let (executed, stop) = self
            .resume_batch(&calls, answers, control, tally, &mut cursor.consecutive_failures, at)
            .instrument(span)
            .await;
        Self::after_batch(conversation, None, &calls, executed, stop, tally, attempt, *cursor, control)
    }

    /// Writes an executed batch into the conversation (after `assistant`,
    /// when it is not there yet) and asks the control whether it ends the
    /// loop. A batch with deferred calls is written as pending instead,
    /// and the run pauses.
    #[allow(clippy::too_many_arguments)] // where the loop stands, as it stood before the batch
    fn after_batch<S>(
        conversation: &mut Conversation,
        assistant: Option<Message>,
        calls: &[ToolCall],
        executed: Vec<Option<ToolExecution>>,
        stop: Option<Stop>,
        tally: &Tally,
        attempt: u32,
        cursor: Cursor,
        control: &mut dyn Control<S>,
    ) -> Result<Option<S>, Stop> {
        // Results were capped when they were made (and reported).
        let results: Vec<Option<ToolResult>> =
            executed.iter().map(|done| done.as_ref().map(|done| done.result.clone())).collect();
        if let Some(deferred) = stop.as_ref().and_then(Stop::deferred_calls) {
            if let Some(assistant) = assistant {
                conversation.push(assistant);
            }
            let checkpoint = Checkpoint::capture(tally, attempt, cursor, conversation.messages().len());
            let answered = results.into_iter().flatten().collect();
            conversation.set_pending(Some(PendingBatch {
                answered,
                deferred: deferred.to_vec(),
                checkpoint: checkpoint.to_value(),
            }));
            return Err(stop.expect("a deferral is a stop"));
        }
        if let Some(assistant) = assistant {
            append_batch(conversation, assistant, calls, results, stop.as_ref());
        } else {
            conversation.set_pending(None);
            append_results(conversation, calls, results, stop.as_ref());
        }
        if let Some(stop) = stop {
            return Err(stop);
        }
        // Calls beyond the per-iteration cap did not run: not part of the batch the control sees.
        let executed: Vec<_> = executed
            .into_iter()
            .flatten()
            .filter(|done| done.result.failure != Some(FailureKind::TooManyCalls))
            .collect();
        Ok(catch_unwind(AssertUnwindSafe(|| control.terminal(&executed))).unwrap_or_else(|panic| {
            tally.push_hook_error("terminal_check", &format!("panicked: {}", panic_message(&*panic)));
            None
        }))
    }
}
