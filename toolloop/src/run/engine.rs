//! The iteration loop: one model call, then the whole batch of tool calls.

use std::future::pending;
use std::panic::{AssertUnwindSafe, catch_unwind};

use tokio::time::Instant;
use tracing::Instrument as _;

use super::control::{Control, LimitDecision, LimitReached};
use super::governance::Governance;
use super::hooks::{Event, Hooks, panic_message};
use super::metadata::Tally;
use super::options::LoopOptions;
use super::stop::{Phase, Stop, append_batch};
use crate::cancel::CancellationToken;
use crate::conversation::Conversation;
use crate::message::{ContentBlock, Message, Role, ToolCall};
use crate::model::{Model, ModelRequest, ModelResponse};
use crate::stop_reason::StopReason;
use crate::tool::ToolSet;

/// How an iteration loop ended normally.
#[derive(Clone, Debug, PartialEq)]
pub enum LoopEnd<S> {
    /// The model answered with text and no tool calls.
    Answer(String),
    /// A terminal check or the iteration-limit hook returned a signal.
    Signal(S),
}

/// Everything one loop run reads; borrowed, so runs share an agent's setup.
pub(crate) struct Engine<'a> {
    pub(crate) model: &'a dyn Model,
    pub(crate) tools: &'a ToolSet,
    pub(crate) system: Option<&'a str>,
    pub(crate) options: &'a LoopOptions,
    pub(crate) hooks: &'a Hooks,
    pub(crate) governance: &'a Governance,
    pub(crate) cancel: &'a CancellationToken,
    pub(crate) deadline: Option<Instant>,
    /// The double-confirmation prompt, when that is on.
    pub(crate) confirmation: Option<&'a str>,
}

/// Waits for the deadline, or forever when there is none.
pub(crate) async fn deadline_passed(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => pending().await,
    }
}

impl Engine<'_> {
    /// Fires `event` at every hook.
    pub(crate) fn fire(&self, event: &Event<'_>, tally: &Tally) {
        self.hooks.fire(event, &tally.hook_errors);
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
                        return Err(Stop::MaxIterations { iterations: iteration, limit });
                    }
                }
            }
            self.check_budgets(tally)?;
            iteration += 1;
            tally.iterations += 1;
            let span = tracing::debug_span!("iteration", attempt, iteration);
            let response = self.call_model(conversation, tally, attempt, iteration).instrument(span.clone()).await?;
            let stop_reason = response.stop_reason.clone();
            // As `ModelResponse::to_message`, but moving the content instead of copying it.
            let provider = response.provider.unwrap_or_else(|| self.model.provider().to_owned());
            let assistant = Message { role: Role::Assistant, content: response.content, provider: Some(provider) };
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
            let (executed, stop) = if truncated {
                (super::batch::incomplete(&calls), None)
            } else {
                let parallel = if control.sequential(&calls) { 1 } else { self.options.parallel_tool_calls.get() };
                let counted: Vec<bool> = calls.iter().map(|call| control.counts_as_execution(call)).collect();
                self.execute_batch(&calls, &counted, parallel, tally, &mut consecutive_failures, (attempt, iteration))
                    .instrument(span)
                    .await
            };
            let results = executed.iter().map(|done| done.as_ref().map(|done| done.result.clone())).collect();
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

    /// The stops checked before each model call.
    fn check_budgets(&self, tally: &Tally) -> Result<(), Stop> {
        if self.cancel.is_cancelled() {
            return Err(Stop::Cancelled { phase: Phase::ModelCall });
        }
        if self.deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            return Err(Stop::Deadline);
        }
        if let Some(limit) = self.options.max_model_calls.filter(|limit| tally.model_calls >= *limit) {
            return Err(Stop::MaxModelCalls { limit });
        }
        self.check_tokens(tally)
    }

    fn check_tokens(&self, tally: &Tally) -> Result<(), Stop> {
        let used = tally.usage.total();
        match self.options.token_budget {
            Some(limit) if used >= limit => Err(Stop::TokenBudget { used, limit }),
            _ => Ok(()),
        }
    }

    /// One model call, cancellable and bounded by the deadline.
    async fn call_model(
        &self,
        conversation: &Conversation,
        tally: &mut Tally,
        attempt: u32,
        iteration: u32,
    ) -> Result<ModelResponse, Stop> {
        let view = if self.tools.is_empty() {
            conversation.view_without_tools()
        } else {
            conversation.view_for(self.model.provider())
        };
        let request = ModelRequest::new(&view)
            .with_history(conversation.messages())
            .with_conversation(conversation)
            .with_system(self.system)
            .with_tools(self.tools.definitions())
            .with_max_tokens(self.options.max_tokens)
            .with_temperature(self.options.temperature)
            .with_strict_tools(self.options.strict_tools);
        tracing::debug!(model = self.model.name(), messages = %summarize(&view), "model request");
        self.fire(&Event::ModelRequest { attempt, iteration, request: &request }, tally);
        tally.model_calls += 1;
        let outcome = tokio::select! {
            biased;
            () = self.cancel.cancelled() => return Err(Stop::Cancelled { phase: Phase::ModelCall }),
            () = deadline_passed(self.deadline) => return Err(Stop::Deadline),
            outcome = self.model.complete(request) => outcome,
        };
        let response = outcome.map_err(|error| {
            tracing::debug!(%error, "model call failed");
            Stop::Model(error)
        })?;
        tally.usage += response.usage;
        tally.stop_reason = Some(response.stop_reason.clone());
        tracing::debug!(
            stop_reason = ?response.stop_reason,
            usage = ?response.usage,
            content = %summarize_blocks(&response.content),
            "model response"
        );
        self.fire(&Event::ModelResponse { attempt, iteration, response: &response }, tally);
        Ok(response)
    }
}

/// Roles, block kinds, call ids and names; never text or arguments.
fn summarize(messages: &[Message]) -> String {
    let mut out = String::new();
    for message in messages {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(match message.role {
            crate::message::Role::User => "user",
            crate::message::Role::Assistant => "assistant",
        });
        out.push('[');
        out.push_str(&summarize_blocks(&message.content));
        out.push(']');
    }
    out
}

fn summarize_blocks(content: &[ContentBlock]) -> String {
    content
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } => format!("text({} chars)", text.chars().count()),
            ContentBlock::ToolCall(call) => format!("tool_call({} {})", call.name, call.id),
            ContentBlock::ToolResult(result) => match result.failure {
                Some(kind) => format!("tool_result({} {kind})", result.call_id),
                None => format!("tool_result({})", result.call_id),
            },
            ContentBlock::Reasoning(reasoning) => {
                format!("reasoning({} chars)", reasoning.visible_text().chars().count())
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use serde_json::json;

    use crate::conversation::Conversation;
    use crate::message::{ContentBlock, Message, Role, ToolCall, ToolResult};
    use crate::model::{BoxFuture, Model, ModelError, ModelRequest, ModelResponse};
    use crate::run::ToolLoop;
    use crate::tool::ToolSet;

    /// Records whether each request could use its conversation's wire cache.
    #[derive(Default)]
    struct Probe {
        cached: Mutex<Vec<bool>>,
    }

    impl Model for Probe {
        fn provider(&self) -> &'static str {
            "probe"
        }
        fn name(&self) -> &'static str {
            "probe"
        }
        fn complete<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
            self.cached.lock().unwrap().push(request.wire_cache().is_some());
            Box::pin(async { Ok(ModelResponse::from_text("done")) })
        }
    }

    #[tokio::test]
    async fn requests_carry_the_cache_unless_the_view_was_flattened() {
        let probe = Arc::new(Probe::default());
        let mut tool_loop = ToolLoop::new(Arc::clone(&probe), ToolSet::new());
        let mut conversation = Conversation::new();
        conversation.push_user("hi");
        tool_loop.run(&mut conversation).await.unwrap();

        conversation.push(Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolCall(ToolCall::new("x", "t", json!({})))],
            provider: Some("elsewhere".into()),
        });
        conversation.push(Message::from_tool_results([ToolResult::success("x", "1")]));
        tool_loop.run(&mut conversation).await.unwrap();
        assert_eq!(*probe.cached.lock().unwrap(), [true, false]);
    }
}
