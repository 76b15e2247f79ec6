//! A model that replays a script of responses, or answers with a function
//! of the request.

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use super::{RecordedRequest, TEST_PROVIDER};
use futures_util::StreamExt as _;

use crate::model::{
    BoxFuture, BoxStream, Model, ModelError, ModelErrorKind, ModelRequest, ModelResponse, StreamEvent, chunk_response,
};

/// How many characters each delta carries unless `with_chunk_size` says.
const DEFAULT_CHUNK: usize = 64;
/// A model that answers from a queue of scripted steps, in order, or with a
/// function of the request ([`from_fn`](Self::from_fn)).
///
/// It records every request it receives ([`requests`](Self::requests);
/// not [`without_recording`](Self::without_recording)),
/// fails loudly with [`ModelErrorKind::ScriptExhausted`] when asked for more
/// responses than it was given, and can check that the whole script was used
/// ([`assert_consumed`](Self::assert_consumed)). Clones share the script and
/// the recorded requests, so keep a clone to inspect after handing one to an
/// agent.
#[derive(Clone, Debug, Default)]
pub struct ScriptedModel {
    inner: Arc<Inner>,
    provider: Option<Arc<str>>,
    chunk_size: Option<usize>,
    /// Set by [`without_recording`](Self::without_recording).
    unrecorded: bool,
}

#[derive(Debug, Default)]
struct Inner {
    steps: Mutex<VecDeque<Step>>,
    requests: Mutex<Vec<RecordedRequest>>,
    /// Requests received, recorded or not.
    calls: std::sync::atomic::AtomicUsize,
    /// Answers each call the script has no step for.
    function: Option<Function>,
}

/// The closure of [`ScriptedModel::from_fn`].
type Respond = dyn Fn(&RecordedRequest) -> Result<ModelResponse, ModelError> + Send + Sync;

struct Function(Box<Respond>);

impl fmt::Debug for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Function")
    }
}

#[derive(Debug)]
enum Step {
    Respond(ModelResponse),
    RespondAfter(Duration, ModelResponse),
    Fail(ModelError),
    /// Streams the first `after` events of the response, then fails.
    FailMidStream {
        response: ModelResponse,
        after: usize,
        error: ModelError,
    },
    Hang,
}

impl ScriptedModel {
    /// An empty script.
    pub fn new() -> Self {
        Self::default()
    }

    /// A script of `responses`, answered in order.
    pub fn from_responses(responses: impl IntoIterator<Item = ModelResponse>) -> Self {
        responses.into_iter().fold(Self::new(), Self::respond)
    }

    /// A model whose answer `respond` computes from the request, as the
    /// model is sent it: for answers that depend on what the run sent, such
    /// as echoing the last tool result back, or a model that plays a whole
    /// task offline. The requests are recorded as a script's are, and steps
    /// added to the script ([`respond`](Self::respond), [`fail`](Self::fail),
    /// ...) answer first: `respond` answers every call the script has no
    /// step for, so the model never reports
    /// [`ScriptExhausted`](ModelErrorKind::ScriptExhausted).
    ///
    /// ```
    /// use toolloop::testing::ScriptedModel;
    /// use toolloop::{Agent, Conversation, ModelResponse};
    ///
    /// # tokio_test::block_on(async {
    /// let model =
    ///     ScriptedModel::from_fn(|request| Ok(ModelResponse::from_text(format!("{} messages", request.messages.len()))));
    /// let agent = Agent::builder().model(model.clone()).build()?;
    /// let mut conversation = Conversation::new();
    /// conversation.push_user("How many?");
    /// assert_eq!(agent.run(&mut conversation).await?.output, "1 messages");
    /// assert_eq!(model.requests()[0].last_text(), "How many?");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn from_fn(
        respond: impl Fn(&RecordedRequest) -> Result<ModelResponse, ModelError> + Send + Sync + 'static,
    ) -> Self {
        let inner = Inner { function: Some(Function(Box::new(respond))), ..Inner::default() };
        Self { inner: Arc::new(inner), provider: None, chunk_size: None, unrecorded: false }
    }

    /// Adds a response to the end of the script.
    pub fn respond(self, response: ModelResponse) -> Self {
        self.push(Step::Respond(response))
    }

    /// Adds a response that arrives after `delay` (use tokio's paused clock
    /// in tests so this costs no real time).
    pub fn respond_after(self, delay: Duration, response: ModelResponse) -> Self {
        self.push(Step::RespondAfter(delay, response))
    }

    /// Adds a failed call.
    pub fn fail(self, error: ModelError) -> Self {
        self.push(Step::Fail(error))
    }

    /// Adds a call that fails part-way: streamed
    /// ([`Model::stream`]), it sends the first `after` events of `response`
    /// in chunks, then `error`; not streamed, it fails with `error`.
    pub fn fail_mid_stream(self, response: ModelResponse, after: usize, error: ModelError) -> Self {
        self.push(Step::FailMidStream { response, after, error })
    }

    /// Streams each response's text and tool-call arguments in deltas of
    /// `chunk_size` characters (default 64): see [`chunk_response`].
    pub fn with_chunk_size(mut self, chunk_size: usize) -> Self {
        self.chunk_size = Some(chunk_size.max(1));
        self
    }

    /// Adds a call that never answers, for testing cancellation and deadlines.
    pub fn hang(self) -> Self {
        self.push(Step::Hang)
    }

    /// Reports `provider` instead of [`TEST_PROVIDER`], so a test (or an
    /// example) can play two providers and watch a conversation switch
    /// between them: each sees the other's tool calls as text
    /// ([`ModelRequest::view_for`]), and [`requests`](Self::requests) shows
    /// what this one was sent.
    pub fn with_provider(mut self, provider: impl Into<Arc<str>>) -> Self {
        self.provider = Some(provider.into());
        self
    }

    /// Records no requests: for a model that stands in for a real one in a
    /// long-lived process (an offline worker, a demo server), whose
    /// recorded requests would otherwise grow with every call.
    /// [`requests`](Self::requests) then holds only what clones made
    /// before recorded.
    #[must_use]
    pub fn without_recording(mut self) -> Self {
        self.unrecorded = true;
        self
    }

    fn push(self, step: Step) -> Self {
        lock(&self.inner.steps).push_back(step);
        self
    }

    /// How many scripted steps are left.
    pub fn remaining(&self) -> usize {
        lock(&self.inner.steps).len()
    }

    /// Panics unless every scripted step was used.
    #[track_caller]
    pub fn assert_consumed(&self) {
        let remaining = self.remaining();
        assert!(remaining == 0, "the scripted model has {remaining} unused step(s) left");
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.inner.requests).clone()
    }

    /// The newest request received.
    pub fn last_request(&self) -> Option<RecordedRequest> {
        lock(&self.inner.requests).last().cloned()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking test thread must not hide the script from the others.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

// Not listed under "other types implement `Model`": its message names the constructors.
#[diagnostic::do_not_recommend]
impl Model for ScriptedModel {
    fn provider(&self) -> &str {
        self.provider.as_deref().unwrap_or(TEST_PROVIDER)
    }

    fn name(&self) -> &'static str {
        "scripted"
    }

    /// A test model answers as scripted, so it takes any schema, with tools.
    fn response_schema_support(&self, _: &crate::model::ResponseSchema) -> crate::model::ResponseSchemaSupport {
        crate::model::ResponseSchemaSupport::WithTools
    }

    fn complete<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let (number, step) = self.take(&request);
        Box::pin(self.answer(number, step))
    }

    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> BoxStream<'a, Result<StreamEvent, ModelError>> {
        let (number, step) = self.take(&request);
        let chunk = self.chunk_size.unwrap_or(DEFAULT_CHUNK);
        if let Some(Step::FailMidStream { response, after, error }) = step {
            let mut events: Vec<_> = chunk_response(&response, chunk).into_iter().take(after).map(Ok).collect();
            events.push(Err(error));
            return Box::pin(futures_util::stream::iter(events));
        }
        Box::pin(futures_util::stream::once(self.answer(number, step)).flat_map(move |outcome| {
            let events: Vec<Result<StreamEvent, ModelError>> = match outcome {
                Ok(response) => chunk_response(&response, chunk).into_iter().map(Ok).collect(),
                Err(error) => vec![Err(error)],
            };
            futures_util::stream::iter(events)
        }))
    }
}

impl ScriptedModel {
    /// Records `request` and takes the next step, with the request's number:
    /// the script's, else the function's answer.
    fn take(&self, request: &ModelRequest<'_>) -> (usize, Option<Step>) {
        let recorded = RecordedRequest::sent_to(self.provider(), request);
        let step = lock(&self.inner.steps).pop_front();
        // The function runs with no lock held: it may look at the model too.
        let step = match (step, &self.inner.function) {
            (None, Some(Function(respond))) => Some(match respond(&recorded) {
                Ok(response) => Step::Respond(response),
                Err(error) => Step::Fail(error),
            }),
            (step, _) => step,
        };
        let number = self.inner.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        if !self.unrecorded {
            lock(&self.inner.requests).push(recorded);
        }
        (number, step)
    }

    async fn answer(&self, number: usize, step: Option<Step>) -> Result<ModelResponse, ModelError> {
        match step {
            Some(Step::Respond(response)) => Ok(response),
            Some(Step::RespondAfter(delay, response)) => {
                tokio::time::sleep(delay).await;
                Ok(response)
            }
            Some(Step::Fail(error)) => Err(error),
            // Fails as its stream does: with the usage reported before the failure.
            Some(Step::FailMidStream { response, after, error }) => {
                let mut accumulator = crate::model::ResponseAccumulator::new();
                for event in chunk_response(&response, self.chunk_size.unwrap_or(DEFAULT_CHUNK)).iter().take(after) {
                    accumulator.push(event).map_err(|_| error.clone())?;
                }
                Err(accumulator.with_usage_seen(error))
            }
            Some(Step::Hang) => std::future::pending().await,
            None => Err(ModelError::new(
                ModelErrorKind::ScriptExhausted,
                self.provider().to_owned(),
                format!("the scripted model was asked for response #{number} but the script has no more"),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn answers_in_order_records_requests_and_fails_when_exhausted() {
        let model = ScriptedModel::from_responses([ModelResponse::from_text("one"), ModelResponse::from_text("two")]);
        let messages = [crate::Message::user("hi")];
        let request = ModelRequest::new(&messages).with_system("be brief");
        assert_eq!(model.complete(request).await.unwrap().text(), "one");
        assert_eq!(model.remaining(), 1);
        assert_eq!(model.complete(request).await.unwrap().text(), "two");
        model.assert_consumed();
        let error = model.complete(request).await.unwrap_err();
        assert_eq!(error.kind(), ModelErrorKind::ScriptExhausted);
        assert!(error.message().contains("#3"), "{error}");
        let requests = model.requests();
        assert_eq!(requests.len(), 3);
        assert_eq!(requests[0].system.as_deref(), Some("be brief"));
        assert_eq!(requests[0].last_text(), "hi");
    }

    #[test]
    #[should_panic(expected = "1 unused step")]
    fn assert_consumed_panics_with_steps_left() {
        ScriptedModel::new().respond(ModelResponse::from_text("unused")).assert_consumed();
    }

    #[tokio::test]
    async fn without_recording_it_answers_and_counts_but_keeps_no_requests() {
        let recording = ScriptedModel::from_fn(|request| Ok(ModelResponse::from_text(request.last_text())));
        let model = recording.clone().without_recording();
        let messages = [crate::Message::user("hi")];
        for _ in 0..3 {
            assert_eq!(model.complete(ModelRequest::new(&messages)).await.unwrap().text(), "hi");
        }
        assert!(model.requests().is_empty(), "nothing kept");
        // A clone made before still records, into the same list; calls are numbered across both.
        recording.complete(ModelRequest::new(&messages)).await.unwrap();
        assert_eq!(model.requests().len(), 1);
        let exhausted = ScriptedModel::new().respond(ModelResponse::from_text("one")).without_recording();
        exhausted.complete(ModelRequest::new(&messages)).await.unwrap();
        let error = exhausted.complete(ModelRequest::new(&messages)).await.unwrap_err();
        assert!(error.message().contains("response #2"), "{error}");
    }

    #[tokio::test]
    async fn a_function_answers_from_the_request_after_the_script() {
        let model =
            ScriptedModel::from_fn(|request| Ok(ModelResponse::from_text(format!("echo: {}", request.last_text()))))
                .respond(ModelResponse::from_text("scripted"));
        let ping = [crate::Message::user("ping")];
        assert_eq!(model.complete(ModelRequest::new(&ping)).await.unwrap().text(), "scripted");
        let second = [crate::Message::user("pong")];
        assert_eq!(model.complete(ModelRequest::new(&second)).await.unwrap().text(), "echo: pong");
        let events: Vec<_> = model.stream(ModelRequest::new(&ping)).collect().await;
        assert!(
            events.iter().any(|e| matches!(e, Ok(StreamEvent::TextDelta { text, .. }) if text == "echo: ping")),
            "{events:?}"
        );
        model.assert_consumed();
        let requests = model.requests();
        assert_eq!(requests.iter().map(RecordedRequest::last_text).collect::<Vec<_>>(), ["ping", "pong", "ping"]);
        assert_eq!(model.provider(), TEST_PROVIDER);
    }

    #[tokio::test]
    async fn a_function_fails_as_it_says() {
        let model = ScriptedModel::from_fn(|request| {
            Err(ModelError::new(ModelErrorKind::RateLimited, "test", format!("{} messages", request.messages.len())))
        });
        let error = model.complete(ModelRequest::new(&[])).await.unwrap_err();
        assert_eq!((error.kind(), error.message()), (ModelErrorKind::RateLimited, "0 messages"));
        assert_eq!(model.requests().len(), 1);
    }

    #[tokio::test]
    async fn plays_another_provider_whose_view_flattens_the_test_providers_calls() {
        use crate::{ContentBlock, Conversation, Message, ToolCall, ToolResult};
        let mut conversation = Conversation::new();
        conversation.push_user("weather?");
        conversation.push(
            ModelResponse::from_tool_calls([ToolCall::new("1", "weather", serde_json::json!({}))])
                .to_message(TEST_PROVIDER),
        );
        conversation.push(Message::from_tool_results([ToolResult::success("1", "sunny")]));
        let model = ScriptedModel::from_fn(|request| {
            let calls =
                request.messages.iter().flat_map(|m| &m.content).filter(|b| matches!(b, ContentBlock::ToolCall(_)));
            Ok(ModelResponse::from_text(format!("{} tool calls", calls.count())))
        })
        .with_provider("other");
        assert_eq!(model.provider(), "other");
        let view = conversation.view_for(model.provider());
        let reply = model.complete(ModelRequest::new(&view)).await.unwrap();
        assert_eq!(reply.text(), "0 tool calls", "the test provider's call reached `other` as text");
        assert!(model.requests()[0].messages.iter().all(|m| m.tool_calls().next().is_none()));
    }

    #[test]
    fn reports_the_provider_it_plays() {
        assert_eq!(ScriptedModel::new().provider(), TEST_PROVIDER);
        let model = ScriptedModel::new().with_provider("anthropic");
        assert_eq!(model.clone().provider(), "anthropic");
    }

    #[tokio::test]
    async fn streams_responses_in_chunks_and_fails_mid_stream() {
        use crate::model::ResponseAccumulator;
        let response = ModelResponse::from_text("hello world");
        let model = ScriptedModel::new().with_chunk_size(3).respond(response.clone()).fail_mid_stream(
            response.clone(),
            3,
            ModelError::new(ModelErrorKind::Connection, "test", "cut"),
        );
        let messages = [crate::Message::user("hi")];
        let request = ModelRequest::new(&messages);
        let events: Vec<_> = model.stream(request).collect().await;
        let deltas = events.iter().filter(|e| matches!(e, Ok(StreamEvent::TextDelta { .. }))).count();
        assert_eq!(deltas, 4, "{events:?}");
        let mut accumulator = ResponseAccumulator::new();
        for event in &events {
            accumulator.push(event.as_ref().unwrap()).unwrap();
        }
        assert_eq!(accumulator.finish().unwrap(), response);

        let events: Vec<_> = model.stream(request).collect().await;
        assert_eq!(events.len(), 4);
        assert!(events[..3].iter().all(Result::is_ok));
        assert_eq!(events[3].as_ref().unwrap_err().kind(), ModelErrorKind::Connection);
        model.assert_consumed();
    }
}
