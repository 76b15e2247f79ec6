//! What one loop run reads, and the model call of an iteration.

use std::pin::pin;
use std::sync::{Mutex, PoisonError};

use futures_util::StreamExt as _;
use tokio::time::Instant;
use tracing::Level;

use super::context::{ContextPolicy, ContextView};
use super::event::Event;
use super::governance::Governance;
use super::hooks::Hooks;
use super::journal::{Journaled, Step, Steps};
use super::model_call::ModelCall;
use super::options::LoopOptions;
use super::outcome::Stop;
use super::output_stream::{OutputSource, OutputStream};
use super::partial::PartialArguments;
use super::sink::EventSink;
use super::tally::Tally;
use super::termination::{Phase, Termination};
use crate::cancel::{CancellationToken, Interruption, guarded};
use crate::conversation::{CompactionReason, Conversation};
use crate::message::{Message, summarize, summarize_messages};
use crate::model::{
    BodyCache, Model, ModelError, ModelErrorKind, ModelRequest, ModelResponse, ResponseAccumulator, ResponseSchema,
    StreamEvent,
};
use crate::telemetry::spans;
use crate::tool::{ToolDefinition, ToolSet};
use crate::usage::Usage;

/// Everything one loop run reads; borrowed, so runs share an agent's setup.
pub(crate) struct Engine<'a> {
    pub(crate) model: &'a dyn Model,
    /// Executes the calls the control does not answer itself.
    pub(crate) tools: &'a ToolSet,
    /// What the model is offered: the tool set's definitions, then the
    /// control's own tools.
    pub(crate) definitions: &'a [ToolDefinition],
    pub(crate) system: Option<&'a str>,
    pub(crate) options: &'a LoopOptions,
    pub(crate) hooks: &'a Hooks,
    pub(crate) governance: &'a Governance,
    pub(crate) cancel: &'a CancellationToken,
    pub(crate) deadline: Option<Instant>,
    /// The double-confirmation prompt, when that is on.
    pub(crate) confirmation: Option<&'a str>,
    /// Where a streamed run reports its events; `None` for a non-streamed
    /// run, whose model calls then wait for whole responses.
    pub(crate) events: Option<EventSink>,
    /// The schema every request asks the answer to follow (a typed agent in
    /// native mode).
    pub(crate) response_schema: Option<&'a ResponseSchema>,
    /// Where a typed agent's output forms, for a streamed run's `OutputDelta`s.
    pub(crate) output: Option<OutputSource<'a>>,
    /// Where the run's side effects go (see [`journal`](super::journal)).
    pub(crate) journal: Steps<'a>,
    /// The wire bytes of the messages this run has sent, which its later
    /// requests reuse; dropped with the run.
    pub(crate) body_cache: BodyCache,
}

/// The `tracing` target of the content dumps (requests, and every event
/// with its contents), at trace level: `RUST_LOG=toolloop=trace`, or
/// `RUST_LOG=toolloop::dump=trace` for the dumps alone. The HTTP models
/// dump their request bodies on the same target.
pub(crate) const DUMP_TARGET: &str = "toolloop::dump";

impl Engine<'_> {
    /// Whether anything observes the run's events: a hook, a stream, or the
    /// trace-level dump.
    fn observed(&self) -> bool {
        self.events.is_some() || !self.hooks.is_empty() || tracing::enabled!(target: DUMP_TARGET, Level::TRACE)
    }

    /// Reports the fact `event` builds to every subscriber (see
    /// [`emit_to`](Self::emit_to)).
    pub(crate) fn emit(&self, tally: &Tally, event: impl FnOnce() -> Event) {
        self.emit_to(&tally.hook_errors, event);
    }

    /// Reports the fact `event` builds, once, to every subscriber: the
    /// trace-level dump, the hooks (their failures recorded in `errors`),
    /// and a streamed run's consumer. The event is built only when one of
    /// them is there: an unobserved run allocates nothing for its events.
    pub(crate) fn emit_to(&self, errors: &Mutex<Vec<String>>, event: impl FnOnce() -> Event) {
        if !self.observed() {
            return;
        }
        let event = event();
        tracing::trace!(target: DUMP_TARGET, ?event, "{}", event.name());
        self.hooks.fire(&event, errors);
        if let Some(sink) = &self.events {
            sink.send(event);
        }
    }

    /// The stops checked before each model call.
    pub(super) async fn check_budgets(&self, tally: &Tally, attempt: u32, iteration: u32) -> Result<(), Stop> {
        if self.cancel.is_cancelled() {
            return Err(Stop::new(Termination::Cancelled { attempt, iteration, phase: Phase::ModelCall }));
        }
        if let Some(limit) = self.options.max_duration {
            // The clock, read through the journal: a replayed run reads the
            // time the original run read here.
            let step = Step::Clock { before_model_call: tally.own_model_calls + 1 };
            if self.journal.elapsed(step, tally.started.elapsed()).await >= limit {
                return Err(self.deadline_stop());
            }
        }
        if let Some(limit) = self.options.max_model_calls.filter(|limit| tally.model_calls >= *limit) {
            return Err(Stop::new(Termination::MaxModelCalls { limit }));
        }
        self.check_tokens(tally)
    }

    fn check_tokens(&self, tally: &Tally) -> Result<(), Stop> {
        let used = tally.usage.total();
        match self.options.token_budget {
            Some(limit) if used >= limit => Err(Stop::new(Termination::TokenBudget { used, limit })),
            _ => Ok(()),
        }
    }

    /// The stop of a run past its `max_duration`.
    pub(crate) fn deadline_stop(&self) -> Stop {
        Stop::new(Termination::MaxDuration { limit: self.options.max_duration.unwrap_or_default() })
    }

    /// One model call, cancellable and bounded by the run's `max_duration`.
    pub(super) async fn call_model(
        &self,
        conversation: &Conversation,
        tally: &mut Tally,
        attempt: u32,
        iteration: u32,
    ) -> Result<ModelResponse, Stop> {
        // Taken out of the tally while in use, so the tally can be borrowed beside it.
        let mut context = std::mem::take(&mut tally.context);
        let response = self.call_fitting(conversation.messages(), &mut context, tally, attempt, iteration).await;
        tally.context = context;
        let mut response = response?;
        tally.usage += response.usage;
        tally.stop_reason = Some(response.stop_reason.clone());
        // Who answered, said by the response itself (its event is the record
        // of it): the model called, when the provider did not say.
        response.provider.get_or_insert_with(|| self.model.provider().to_owned());
        response.model.get_or_insert_with(|| self.model.name().to_owned());
        if let (Some(provider), Some(model)) = (&response.provider, &response.model) {
            tally.count_answer(provider, model);
        }
        tracing::debug!(
            stop_reason = ?response.stop_reason,
            usage = ?response.usage,
            content = %summarize(&response.content),
            "model response"
        );
        self.emit(tally, || Event::IterationFinished { attempt, iteration, response: Box::new(response.clone()) });
        Ok(response)
    }
}

impl Engine<'_> {
    /// The model's answer for `raw` sent through `context`, compacting it
    /// as the run's context policy says.
    async fn call_fitting(
        &self,
        raw: &[Message],
        context: &mut ContextView,
        tally: &mut Tally,
        attempt: u32,
        iteration: u32,
    ) -> Result<ModelResponse, Stop> {
        let policy = self.options.context.as_ref();
        if let Some(policy) = policy {
            // Compacted until it fits or nothing is left to compact.
            while policy.over_trigger(context.messages(raw))
                && Box::pin(self.compact(raw, context, policy, CompactionReason::Threshold, tally, attempt, iteration))
                    .await?
            {}
        }
        let mut retries = 0;
        loop {
            let error = match self.send(context.messages(raw), tally, attempt, iteration).await? {
                Ok(response) => return Ok(response),
                Err(error) => error,
            };
            match policy {
                Some(policy)
                    if error.kind() == ModelErrorKind::ContextOverflow && retries < policy.max_retries_per_call() =>
                {
                    retries += 1;
                    tracing::debug!(%error, "the prompt does not fit; compacting");
                    if !Box::pin(self.compact(
                        raw,
                        context,
                        policy,
                        CompactionReason::Overflow,
                        tally,
                        attempt,
                        iteration,
                    ))
                    .await?
                    {
                        return Err(Stop::model(error));
                    }
                }
                _ => {
                    tracing::debug!(%error, "model call failed");
                    return Err(Stop::model(error));
                }
            }
        }
    }

    /// Sends `messages` once, cancellable and bounded by `max_duration`: the
    /// model's answer, or the stop that cut it short.
    async fn send(
        &self,
        messages: &[Message],
        tally: &mut Tally,
        attempt: u32,
        iteration: u32,
    ) -> Result<Result<ModelResponse, ModelError>, Stop> {
        // The raw history (or its compacted view): the model builds its provider's view of it.
        let mut request = ModelRequest::new(messages)
            .with_tools(self.definitions)
            .with_strict_tools(self.options.strict_tools)
            .with_body_cache(&self.body_cache);
        request.system = self.system;
        request.max_tokens = self.options.max_tokens;
        request.temperature = self.options.temperature;
        request.response_schema = self.response_schema;
        tracing::debug!(model = self.model.name(), messages = %summarize_messages(request.messages), "model request");
        dump_request(self.model.name(), &request);
        self.emit(tally, || Event::IterationStarted { attempt, iteration });
        tally.model_calls += 1;
        tally.own_model_calls += 1;
        let tools_offered = !request.tools.is_empty();
        let chat = spans::Chat::start(self.model, &request);
        // The usage a streamed call cut short had reported, for its
        // `ModelCallDiscarded` event. The run's usage counts a failed call's
        // reported usage (its error carries it), as a non-streamed run's does.
        let partial = Mutex::new(Usage::default());
        let outcome = {
            let call = if self.events.is_some() {
                let streamed = self.streamed(request, (attempt, iteration), &partial, &tally.hook_errors);
                ModelCall::started(Box::pin(streamed), chat.span())
            } else {
                ModelCall::whole(self.model, request, chat.span())
            };
            let call = self.journal.model_call(Step::ModelCall { number: tally.own_model_calls }, call);
            guarded(Some(self.cancel), self.deadline, pin!(call)).await
        }
        .map_err(|interruption| match interruption {
            Interruption::Cancelled => {
                Stop::new(Termination::Cancelled { attempt, iteration, phase: Phase::ModelCall })
            }
            Interruption::Deadline => self.deadline_stop(),
        });
        match outcome {
            Ok(Journaled { value: outcome, replayed }) => {
                chat.finish(&outcome, replayed);
                if let Ok(response) = &outcome {
                    // The view the model that answered built (behind a
                    // `Fallback`, not always the first model's).
                    let provider = response.provider.as_deref().unwrap_or_else(|| self.model.provider());
                    self.note_view_rewrites(messages, provider, tools_offered, tally, (attempt, iteration));
                }
                if let Err(error) = &outcome {
                    tally.usage += error.usage().unwrap_or_default();
                }
                Ok(outcome)
            }
            Err(stop) => {
                chat.fail(&stop.termination.name());
                // A streamed call cut short may have shown deltas.
                if self.events.is_some() {
                    self.emit(tally, || Event::ModelCallDiscarded {
                        attempt,
                        iteration,
                        error: stop.termination.to_string(),
                        usage: partial.into_inner().unwrap_or_else(PoisonError::into_inner),
                    });
                }
                Err(stop)
            }
        }
    }

    /// Compacts the view one step, records it and tells the hooks; whether
    /// anything was left to compact.
    #[allow(clippy::too_many_arguments)] // the call's coordinates, as every event has them
    async fn compact(
        &self,
        raw: &[Message],
        context: &mut ContextView,
        policy: &ContextPolicy,
        reason: CompactionReason,
        tally: &mut Tally,
        attempt: u32,
        iteration: u32,
    ) -> Result<bool, Stop> {
        let compaction = pin!(context.compact(raw, policy, reason, (self.journal.journal(), tally.compactions + 1)));
        let compacted = match guarded(Some(self.cancel), self.deadline, compaction).await {
            Ok(compacted) => compacted.map_err(Stop::model)?,
            Err(Interruption::Cancelled) => {
                return Err(Stop::new(Termination::Cancelled { attempt, iteration, phase: Phase::ModelCall }));
            }
            Err(Interruption::Deadline) => return Err(self.deadline_stop()),
        };
        let Some(compaction) = compacted else { return Ok(false) };
        tracing::debug!(?compaction, "compacted the view sent to the model");
        self.emit(tally, || Event::Compacted {
            attempt,
            iteration,
            reason: compaction.reason,
            tool_results_elided: compaction.tool_results_elided,
            messages_dropped: compaction.messages_dropped,
            summarised: compaction.summarised,
            estimated_tokens_before: compaction.estimated_tokens_before,
            estimated_tokens_after: compaction.estimated_tokens_after,
        });
        tally.compactions += 1;
        Ok(true)
    }

    /// Reports (an event and a log line) when the view the answering
    /// model built of `history` (for its `provider`) flattened another
    /// provider's tool calls to text, so users can see why the model saw
    /// text instead of tool calls.
    fn note_view_rewrites(
        &self,
        history: &[Message],
        provider: &str,
        tools_offered: bool,
        tally: &mut Tally,
        (attempt, iteration): (u32, u32),
    ) {
        let messages = tally.rewrite_scan.rewritten(history, provider, tools_offered);
        if messages == 0 {
            return;
        }
        tracing::info!(
            provider,
            messages,
            "the request's view shows another provider's tool calls and results as text"
        );
        self.emit(tally, || Event::ViewRewritten { attempt, iteration, provider: provider.to_owned(), messages });
    }

    /// The model's response, streamed (reporting its deltas), for a
    /// streamed run; it keeps the usage reported so far in `partial`.
    async fn streamed(
        &self,
        request: ModelRequest<'_>,
        (attempt, iteration): (u32, u32),
        partial: &Mutex<Usage>,
        errors: &Mutex<Vec<String>>,
    ) -> Result<ModelResponse, ModelError> {
        let mut accumulator = ResponseAccumulator::new();
        let mut arguments = PartialArguments::default();
        let mut output = self.output.map(|source| OutputStream::new(source, attempt));
        let mut stream = self.model.stream(request);
        let mut failure = None;
        while let Some(event) = stream.next().await {
            let pushed = event.and_then(|event| {
                accumulator.push(&event)?;
                Ok(event)
            });
            match pushed {
                Ok(StreamEvent::Usage(usage)) => {
                    *partial.lock().unwrap_or_else(PoisonError::into_inner) = usage;
                }
                Ok(event) => {
                    let formed = output.as_mut().and_then(|output| output.see(&event, &accumulator));
                    if let Some(delta) = delta(&accumulator, &mut arguments, event) {
                        self.emit_to(errors, || delta);
                    }
                    if let Some(formed) = formed {
                        self.emit_to(errors, || formed);
                    }
                }
                Err(error) => {
                    failure = Some(error);
                    break;
                }
            }
        }
        let outcome = match failure {
            Some(error) => Err(accumulator.with_usage_seen(error)),
            None => accumulator.finish(),
        };
        if let Err(error) = &outcome {
            let usage = error.usage().unwrap_or_default();
            *partial.lock().unwrap_or_else(PoisonError::into_inner) = usage;
            self.emit_to(errors, || Event::ModelCallDiscarded { attempt, iteration, error: error.to_string(), usage });
        }
        outcome
    }
}

/// The run event for a model stream event, when there is one.
fn delta(accumulator: &ResponseAccumulator, arguments: &mut PartialArguments, event: StreamEvent) -> Option<Event> {
    Some(match event {
        StreamEvent::TextDelta { text, .. } => Event::TextDelta { text },
        StreamEvent::ReasoningDelta { text, .. } => Event::ReasoningDelta { text },
        StreamEvent::ToolCallStarted { index, id, name } => Event::ToolCallStarted { index, id, name },
        StreamEvent::ToolCallArgumentsDelta { index, fragment } => {
            let length = accumulator.arguments_len(index);
            let partial = if arguments.due(index, length) { accumulator.partial_input(index) } else { None };
            Event::ToolCallArgumentsDelta { index, fragment, partial }
        }
        StreamEvent::ToolCallFinished { index, .. } => {
            Event::ToolCallWritten { index, call: accumulator.tool_call(index)? }
        }
        _ => return None,
    })
}

/// At trace level on [`DUMP_TARGET`], what a model call is sent, whatever
/// the model: the system prompt, the messages with their contents, the
/// tools' names. Never keys: a request holds none.
fn dump_request(model: &str, request: &ModelRequest<'_>) {
    if tracing::enabled!(target: DUMP_TARGET, Level::TRACE) {
        let messages = serde_json::to_string(request.messages).unwrap_or_default();
        let tools: Vec<&str> = request.tools.iter().map(|tool| &*tool.name).collect();
        tracing::trace!(target: DUMP_TARGET, model, system = request.system, %messages, ?tools, "model request");
    }
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

    /// Records whether each request carried the raw history, foreign tool calls and all.
    #[derive(Default)]
    struct Probe {
        raw: Mutex<Vec<bool>>,
    }

    impl Model for Probe {
        fn provider(&self) -> &'static str {
            "probe"
        }
        fn name(&self) -> &'static str {
            "probe"
        }
        fn complete<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
            let raw = request.messages.iter().any(|message| message.tool_calls().next().is_some());
            self.raw.lock().unwrap().push(raw);
            Box::pin(async { Ok(ModelResponse::from_text("done")) })
        }
    }

    #[tokio::test]
    async fn requests_carry_the_raw_history_for_the_model_to_view() {
        let probe = Arc::new(Probe::default());
        let mut tool_loop = ToolLoop::new(Arc::clone(&probe), ToolSet::new());
        let mut conversation = Conversation::new();
        conversation.push_user("hi");
        tool_loop.run(&mut conversation).await.unwrap();

        conversation.push(
            Message::new(Role::Assistant, vec![ContentBlock::ToolCall(ToolCall::new("x", "t", json!({})))])
                .with_provider("elsewhere"),
        );
        conversation.push(Message::from_tool_results([ToolResult::success("x", "1")]));
        tool_loop.run(&mut conversation).await.unwrap();
        assert_eq!(*probe.raw.lock().unwrap(), [false, true]);
    }

    /// Records the cache each request lent; asks for a tool call until it
    /// sees a tool result, so that a run makes two model calls.
    #[derive(Default)]
    struct Caches {
        seen: Mutex<Vec<usize>>,
    }

    impl Model for Caches {
        fn provider(&self) -> &'static str {
            "probe"
        }
        fn name(&self) -> &'static str {
            "probe"
        }
        fn complete<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
            let cache = request.body_cache.expect("every request of a run lends the run's cache");
            let mut seen = self.seen.lock().unwrap();
            seen.push(std::ptr::from_ref(cache) as usize);
            let answered = request.messages.last().is_some_and(|message| message.tool_results().next().is_some());
            let response = if answered {
                ModelResponse::from_text("done")
            } else {
                ModelResponse::from_tool_calls([ToolCall::new(format!("c{}", seen.len()), "missing", json!({}))])
            };
            Box::pin(async { Ok(response) })
        }
    }

    #[tokio::test]
    async fn a_run_lends_its_requests_one_cache_of_its_own() {
        let model = Arc::new(Caches::default());
        let mut one = ToolLoop::new(Arc::clone(&model), ToolSet::new());
        let mut other = ToolLoop::new(Arc::clone(&model), ToolSet::new());
        let mut first = Conversation::new();
        first.push_user("hi");
        let mut second = Conversation::new();
        second.push_user("hello");
        // Two runs at once: each has its own cache, held for its whole run.
        let (a, b) = tokio::join!(one.run(&mut first), other.run(&mut second));
        a.unwrap();
        b.unwrap();
        let seen = model.seen.lock().unwrap().clone();
        assert_eq!(seen.len(), 4);
        let mut caches = seen.clone();
        caches.sort_unstable();
        caches.dedup();
        assert_eq!(caches.len(), 2, "one cache per run: {seen:?}");
        assert!(caches.iter().all(|cache| seen.iter().filter(|seen| *seen == cache).count() == 2), "{seen:?}");
    }
}
