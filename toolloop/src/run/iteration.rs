//! The iteration loop: one model call, then the whole batch of its tool
//! calls, until an answer, a signal or a stop.

use std::panic::{AssertUnwindSafe, catch_unwind};

use tracing::Instrument as _;

use super::batch::incomplete;
use super::control::{Control, LimitDecision, LimitReached};
use super::engine::Engine;
use super::metadata::Tally;
use super::outcome::Stop;
use super::panic::panic_message;
use super::pending::append_batch;
use super::termination::Termination;
use crate::conversation::Conversation;
use crate::message::{FailureKind, Message, Role, ToolCall, ToolResult};
use crate::stop_reason::StopReason;
use crate::telemetry::spans;

/// What an iteration loop produced when it ended normally: the output of a
/// [`ToolLoop`](super::ToolLoop) run.
#[derive(Clone, Debug, PartialEq)]
pub enum LoopEnd<S> {
    /// The model answered with text and no tool calls.
    Answer(String),
    /// A terminal check or the iteration-limit hook returned a signal.
    Signal(S),
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
    ) -> Result<LoopEnd<S>, Stop> {
        let mut iteration = 0;
        let mut limit = self.options.max_iterations;
        let mut confirmation_asked = false;
        let mut consecutive_failures = 0;
        loop {
            if iteration >= limit {
                let reached = LimitReached { attempt, iterations: iteration, limit };
                // A panicking hook must not break the run: it counts as "stop".
                let decision = catch_unwind(AssertUnwindSafe(|| control.on_limit(&reached))).unwrap_or_else(|panic| {
                    tally.push_hook_error("iteration_limit", &format!("panicked: {}", panic_message(&*panic)));
                    LimitDecision::Stop
                });
                match decision {
                    LimitDecision::Extend(more) if more > 0 => limit = limit.saturating_add(more),
                    LimitDecision::End(signal) => return Ok(LoopEnd::Signal(signal)),
                    LimitDecision::Stop | LimitDecision::Extend(_) => {
                        return Err(Stop::new(Termination::MaxIterations { attempt, iterations: iteration, limit }));
                    }
                }
            }
            self.check_budgets(tally, attempt, iteration + 1).await?;
            iteration += 1;
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
                if let Some(prompt) = self.confirmation.filter(|_| !confirmation_asked) {
                    confirmation_asked = true;
                    conversation.push(Message::user(prompt));
                    continue;
                }
                return Ok(LoopEnd::Answer(conversation.last().map(Message::text).unwrap_or_default()));
            }

            // The token budget is checked before the next model call, not
            // here: this response is paid for, and its calls (an output, a
            // terminal tool) cost no tokens.
            let truncated = stop_reason.is_truncated();
            let allowed = self.allowed_calls(calls.len());
            let (executed, stop) = if truncated {
                (incomplete(&calls), None)
            } else {
                self.execute_batch(&calls[..allowed], control, tally, &mut consecutive_failures, (attempt, iteration))
                    .instrument(span)
                    .await
            };
            let mut results: Vec<Option<ToolResult>> =
                executed.iter().map(|done| done.as_ref().map(|done| done.result.clone())).collect();
            if let Some(limit) = self.options.max_tool_result_chars {
                results.iter_mut().flatten().for_each(|result| cap_result(result, limit));
            }
            if !truncated && allowed < calls.len() {
                results.resize(allowed, None);
                results.extend(calls[allowed..].iter().map(|call| Some(self.too_many_calls(call, calls.len()))));
            }
            append_batch(conversation, assistant, &calls, results, stop.as_ref());
            if let Some(stop) = stop {
                return Err(stop);
            }
            if truncated {
                // Nothing ran: the model is asked to make the calls again.
                continue;
            }
            let executed: Vec<_> = executed.into_iter().flatten().collect();
            let signal = catch_unwind(AssertUnwindSafe(|| control.terminal(&executed))).unwrap_or_else(|panic| {
                tally.push_hook_error("terminal_check", &format!("panicked: {}", panic_message(&*panic)));
                None
            });
            if let Some(signal) = signal {
                return Ok(LoopEnd::Signal(signal));
            }
        }
    }
}
