//! A model that replays a script of responses.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use super::{RecordedRequest, TEST_PROVIDER};
use crate::model::{BoxFuture, Model, ModelError, ModelErrorKind, ModelRequest, ModelResponse};

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

impl Model for ScriptedModel {
    fn provider(&self) -> &str {
        self.provider.as_deref().unwrap_or(TEST_PROVIDER)
    }

    fn name(&self) -> &'static str {
        "scripted"
    }

    fn complete<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let number = {
            let mut requests = lock(&self.inner.requests);
            requests.push(RecordedRequest::sent_to(self.provider(), &request));
            requests.len()
        };
        let step = lock(&self.inner.steps).pop_front();
        Box::pin(async move {
            match step {
                Some(Step::Respond(response)) => Ok(response),
                Some(Step::RespondAfter(delay, response)) => {
                    tokio::time::sleep(delay).await;
                    Ok(response)
                }
                Some(Step::Fail(error)) => Err(error),
                Some(Step::Hang) => std::future::pending().await,
                None => Err(ModelError::new(
                    ModelErrorKind::ScriptExhausted,
                    self.provider().to_owned(),
                    format!("the scripted model was asked for response #{number} but the script has no more"),
                )),
            }
        })
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
}
