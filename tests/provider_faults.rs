//! The fault matrix, run against every HTTP provider: retries, typed errors,
//! broken responses, timeouts and cancellation, over a local scripted server.

use std::time::Duration;

use serde_json::{Value, json};
use toolloop::model::ModelErrorKind;
use toolloop::providers::RetryPolicy;
use toolloop::providers::anthropic::Anthropic;
use toolloop::providers::ollama::Ollama;
use toolloop::providers::openai::OpenAi;
use toolloop::{Message, Model, ModelRequest, Usage};
use toolloop_workspace::{Reply, TestServer};

/// How one provider is built and what its bodies look like.
struct Provider {
    build: fn(url: &str, retry: RetryPolicy, timeout: Duration) -> Box<dyn Model>,
    /// A success body answering "hello" with 10 input and 5 output tokens.
    ok_body: fn() -> Value,
    /// An error body in the provider's shape.
    error_body: fn(kind: &str, message: &str) -> Value,
}

const ANTHROPIC: Provider = Provider {
    build: |url, retry, timeout| {
        Box::new(
            Anthropic::builder()
                .api_key("sk-ant-test")
                .base_url(url)
                .retry_policy(retry)
                .timeout(timeout)
                .build()
                .unwrap(),
        )
    },
    ok_body: || {
        json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [{"type": "text", "text": "hello"}],
            "stop_reason": "end_turn", "stop_sequence": null,
            "usage": {"input_tokens": 10, "output_tokens": 5}
        })
    },
    error_body: |kind, message| json!({"type": "error", "error": {"type": kind, "message": message}}),
};

const OPENAI: Provider = Provider {
    build: |url, retry, timeout| {
        Box::new(
            OpenAi::builder().api_key("sk-test").base_url(url).retry_policy(retry).timeout(timeout).build().unwrap(),
        )
    },
    ok_body: || {
        json!({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-test",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        })
    },
    error_body: |kind, message| json!({"error": {"message": message, "type": kind, "param": null, "code": null}}),
};

const OLLAMA: Provider = Provider {
    build: |url, retry, timeout| {
        Box::new(Ollama::builder().base_url(url).retry_policy(retry).timeout(timeout).build().unwrap())
    },
    ok_body: || {
        json!({
            "model": "llama-test", "created_at": "2026-01-01T00:00:00Z",
            "message": {"role": "assistant", "content": "hello"},
            "done_reason": "stop", "done": true, "prompt_eval_count": 10, "eval_count": 5
        })
    },
    error_body: |_, message| json!({"error": message}),
};

/// Retries with waits short enough for tests.
fn quick_retries(max_retries: u32) -> RetryPolicy {
    RetryPolicy::default()
        .with_max_retries(max_retries)
        .with_initial_backoff(Duration::from_millis(5))
        .with_max_backoff(Duration::from_millis(20))
}

const TIMEOUT: Duration = Duration::from_secs(10);

/// Fails the test instead of hanging when `future` does not finish.
async fn guarded<T>(future: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(20), future).await.expect("the test hung")
}

fn hello() -> Vec<Message> {
    vec![Message::user("hi")]
}

async fn rate_limited_with_retry_after_then_success(p: &Provider) {
    let server = TestServer::start([
        Reply::json(429, &(p.error_body)("rate_limit_error", "slow down")).header("retry-after", "0.02"),
        Reply::json(200, &(p.ok_body)()),
    ])
    .await;
    // The computed backoff would be a minute: only obeying retry-after lets this finish.
    let slow_backoff = RetryPolicy::default().with_initial_backoff(Duration::from_secs(60));
    let model = (p.build)(&server.url(), slow_backoff, TIMEOUT);
    let messages = hello();
    let response = guarded(model.complete(ModelRequest::new(&messages))).await.unwrap();
    assert_eq!(response.text(), "hello");
    // The failed attempt consumed nothing: usage is the successful one's alone.
    assert_eq!(response.usage, Usage::new(10, 5));
    assert_eq!(server.requests().len(), 2);
}

async fn server_error_then_success(p: &Provider) {
    let server = TestServer::start([
        Reply::json(500, &(p.error_body)("api_error", "internal")),
        Reply::json(200, &(p.ok_body)()),
    ])
    .await;
    let model = (p.build)(&server.url(), quick_retries(2), TIMEOUT);
    let messages = hello();
    let response = guarded(model.complete(ModelRequest::new(&messages))).await.unwrap();
    assert_eq!(response.text(), "hello");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].body, requests[1].body, "a retry sends the same request");
}

async fn overloaded_529_then_success(p: &Provider) {
    let server = TestServer::start([
        Reply::json(529, &(p.error_body)("overloaded_error", "Overloaded")),
        Reply::json(200, &(p.ok_body)()),
    ])
    .await;
    let model = (p.build)(&server.url(), quick_retries(2), TIMEOUT);
    let messages = hello();
    let response = guarded(model.complete(ModelRequest::new(&messages))).await.unwrap();
    assert_eq!(response.text(), "hello");
    assert_eq!(server.requests().len(), 2);
}

async fn retries_exhausted_give_a_typed_error(p: &Provider) {
    let failure = Reply::json(500, &(p.error_body)("api_error", "the upstream failed"));
    let server = TestServer::start([failure.clone(), failure.clone(), failure]).await;
    let model = (p.build)(&server.url(), quick_retries(2), TIMEOUT);
    let messages = hello();
    let error = guarded(model.complete(ModelRequest::new(&messages))).await.unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::Server);
    assert_eq!(error.status(), Some(500));
    assert_eq!(error.message(), "the upstream failed");
    assert_eq!(error.attempts(), 3);
    assert_eq!(error.provider(), model.provider());
    assert_eq!(server.requests().len(), 3);
}

async fn client_errors_are_not_retried(p: &Provider) {
    let server =
        TestServer::start([Reply::json(400, &(p.error_body)("invalid_request_error", "messages: empty"))]).await;
    let model = (p.build)(&server.url(), quick_retries(2), TIMEOUT);
    let messages = hello();
    let error = guarded(model.complete(ModelRequest::new(&messages))).await.unwrap_err();
    assert_eq!(
        (error.kind(), error.status(), error.message()),
        (ModelErrorKind::InvalidRequest, Some(400), "messages: empty")
    );
    assert_eq!(server.requests().len(), 1);
}

async fn x_should_retry_overrides_the_status(p: &Provider) {
    let server = TestServer::start([
        Reply::json(500, &(p.error_body)("api_error", "do not retry")).header("x-should-retry", "false"),
        Reply::json(400, &(p.error_body)("invalid_request_error", "do retry")).header("x-should-retry", "true"),
        Reply::json(200, &(p.ok_body)()),
    ])
    .await;
    let model = (p.build)(&server.url(), quick_retries(2), TIMEOUT);
    let messages = hello();
    let error = guarded(model.complete(ModelRequest::new(&messages))).await.unwrap_err();
    assert_eq!((error.status(), error.attempts()), (Some(500), 1));
    let response = guarded(model.complete(ModelRequest::new(&messages))).await.unwrap();
    assert_eq!(response.text(), "hello");
    assert_eq!(server.requests().len(), 3);
}

async fn connection_dropped_mid_response_is_retried(p: &Provider) {
    let server = TestServer::start([
        Reply::json(200, &(p.ok_body)()).cut_after(20),
        Reply::drop_connection(),
        Reply::json(200, &(p.ok_body)()),
    ])
    .await;
    let model = (p.build)(&server.url(), quick_retries(2), TIMEOUT);
    let messages = hello();
    let response = guarded(model.complete(ModelRequest::new(&messages))).await.unwrap();
    assert_eq!(response.text(), "hello");
    assert_eq!(server.requests().len(), 3);

    let server = TestServer::start([Reply::json(200, &(p.ok_body)()).cut_after(20)]).await;
    let model = (p.build)(&server.url(), RetryPolicy::none(), TIMEOUT);
    let error = guarded(model.complete(ModelRequest::new(&messages))).await.unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::Connection, "{error}");
}

async fn truncated_json_is_a_malformed_response(p: &Provider) {
    let body = (p.ok_body)().to_string();
    let server = TestServer::start([Reply::raw(200, "application/json", &body[..body.len() / 2])]).await;
    let model = (p.build)(&server.url(), quick_retries(2), TIMEOUT);
    let messages = hello();
    let error = guarded(model.complete(ModelRequest::new(&messages))).await.unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{error}");
    assert!(error.message().contains("EOF"), "{error}");
    assert_eq!(server.requests().len(), 1, "a response that arrived whole is not retried");
}

async fn a_non_json_body_is_a_malformed_response(p: &Provider) {
    let server = TestServer::start([
        Reply::raw(200, "text/html", "<html>captive portal</html>"),
        Reply::raw(502, "text/html", "<html>Bad gateway</html>"),
    ])
    .await;
    let model = (p.build)(&server.url(), RetryPolicy::none(), TIMEOUT);
    let messages = hello();
    let error = guarded(model.complete(ModelRequest::new(&messages))).await.unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::MalformedResponse);
    assert!(error.message().contains("<html>captive portal</html>"), "{error}");
    let error = guarded(model.complete(ModelRequest::new(&messages))).await.unwrap_err();
    assert_eq!(
        (error.kind(), error.status(), error.message()),
        (ModelErrorKind::Server, Some(502), "<html>Bad gateway</html>")
    );
}

async fn a_slow_server_hits_the_timeout(p: &Provider) {
    let slow = Reply::json(200, &(p.ok_body)()).delay(Duration::from_secs(30));
    let server = TestServer::start([slow.clone(), slow]).await;
    let model = (p.build)(&server.url(), quick_retries(1), Duration::from_millis(100));
    let messages = hello();
    let error = guarded(model.complete(ModelRequest::new(&messages))).await.unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::Timeout, "{error}");
    assert_eq!(error.attempts(), 2, "timeouts are retried");
    // Each timed-out attempt closed its connection.
    guarded(server.wait_for_disconnects(2)).await;
}

async fn cancellation_during_a_request_closes_the_connection(p: &Provider) {
    let server = TestServer::start([Reply::hang()]).await;
    let model = (p.build)(&server.url(), quick_retries(2), TIMEOUT);
    let messages = hello();
    tokio::select! {
        result = model.complete(ModelRequest::new(&messages)) => panic!("the server never answers, got {result:?}"),
        () = guarded(server.wait_for_requests(1)) => {}
    }
    // The call's future is dropped: the server sees the client hang up.
    guarded(server.wait_for_disconnects(1)).await;
    assert_eq!(server.requests().len(), 1);
}

async fn cancellation_during_a_retry_wait_stops_the_retries(p: &Provider) {
    let server = TestServer::start([
        Reply::json(429, &(p.error_body)("rate_limit_error", "slow down")).header("retry-after-ms", "300"),
        Reply::json(200, &(p.ok_body)()),
    ])
    .await;
    let model = (p.build)(&server.url(), quick_retries(2), TIMEOUT);
    let messages = hello();
    tokio::select! {
        result = model.complete(ModelRequest::new(&messages)) => panic!("the call should be waiting, got {result:?}"),
        () = async { server.wait_for_requests(1).await; tokio::time::sleep(Duration::from_millis(50)).await } => {}
    }
    // Had the wait gone on, the retry would arrive 300 ms after the first attempt.
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(server.requests().len(), 1);
}

macro_rules! fault_matrix {
    ($provider:ident, $spec:expr) => {
        mod $provider {
            #[tokio::test]
            async fn rate_limited_with_retry_after_then_success() {
                super::rate_limited_with_retry_after_then_success(&$spec).await;
            }
            #[tokio::test]
            async fn server_error_then_success() {
                super::server_error_then_success(&$spec).await;
            }
            #[tokio::test]
            async fn overloaded_529_then_success() {
                super::overloaded_529_then_success(&$spec).await;
            }
            #[tokio::test]
            async fn retries_exhausted_give_a_typed_error() {
                super::retries_exhausted_give_a_typed_error(&$spec).await;
            }
            #[tokio::test]
            async fn client_errors_are_not_retried() {
                super::client_errors_are_not_retried(&$spec).await;
            }
            #[tokio::test]
            async fn x_should_retry_overrides_the_status() {
                super::x_should_retry_overrides_the_status(&$spec).await;
            }
            #[tokio::test]
            async fn connection_dropped_mid_response_is_retried() {
                super::connection_dropped_mid_response_is_retried(&$spec).await;
            }
            #[tokio::test]
            async fn truncated_json_is_a_malformed_response() {
                super::truncated_json_is_a_malformed_response(&$spec).await;
            }
            #[tokio::test]
            async fn a_non_json_body_is_a_malformed_response() {
                super::a_non_json_body_is_a_malformed_response(&$spec).await;
            }
            #[tokio::test]
            async fn a_slow_server_hits_the_timeout() {
                super::a_slow_server_hits_the_timeout(&$spec).await;
            }
            #[tokio::test]
            async fn cancellation_during_a_request_closes_the_connection() {
                super::cancellation_during_a_request_closes_the_connection(&$spec).await;
            }
            #[tokio::test]
            async fn cancellation_during_a_retry_wait_stops_the_retries() {
                super::cancellation_during_a_retry_wait_stops_the_retries(&$spec).await;
            }
        }
    };
}

fault_matrix!(anthropic, super::ANTHROPIC);
fault_matrix!(openai, super::OPENAI);
fault_matrix!(ollama, super::OLLAMA);
