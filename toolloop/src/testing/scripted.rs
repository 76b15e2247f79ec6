//! A model that replays a script of responses.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use super::{RecordedRequest, TEST_PROVIDER};
use futures_util::StreamExt as _;

use crate::model::{
    BoxFuture, BoxStream, Model, ModelError, ModelErrorKind, ModelRequest, ModelResponse, StreamEvent, chunk_response,
};

/// How many characters each delta carries unless `with_chunk_size` says.
const DEFAULT_CHUNK: usize = 64;
/// A model that answers from a queue of scripted steps, in order.
///
/// It records every request it receives ([`requests`](Self::requests)),
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
}

#[derive(Debug, Default)]
struct Inner {
    steps: Mutex<VecDeque<Step>>,
    requests: Mutex<Vec<RecordedRequest>>,
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

    /// Reports `provider` instead of [`TEST_PROVIDER`], for tests of a
    /// conversation that switches providers (see
    /// [`FunctionModel::with_provider`](super::FunctionModel::with_provider)).
    pub fn with_provider(mut self, provider: impl Into<Arc<str>>) -> Self {
        self.provider = Some(provider.into());
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
    /// Records `request` and takes the next step, with the request's number.
    fn take(&self, request: &ModelRequest<'_>) -> (usize, Option<Step>) {
        let number = {
            let mut requests = lock(&self.inner.requests);
            requests.push(RecordedRequest::sent_to(self.provider(), request));
            requests.len()
        };
        (number, lock(&self.inner.steps).pop_front())
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
