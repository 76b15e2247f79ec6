//! Hardening of the HTTP providers against local servers: keys never leave
//! the configured origin, passwords are never shown, long `retry-after`
//! waits are obeyed within the run's deadline, and response bodies are capped.

use std::time::Duration;

use serde_json::json;
use toolloop::model::ModelErrorKind;
use toolloop::providers::RetryPolicy;
use toolloop::providers::anthropic::Anthropic;
use toolloop::providers::openai::OpenAi;
use toolloop::run::Termination;
use toolloop::{Agent, Conversation, Message, Model, ModelRequest};
use toolloop_workspace::{Reply, TestServer, replies};

fn quick_retries() -> RetryPolicy {
    RetryPolicy::default()
        .with_max_retries(2)
        .with_initial_backoff(Duration::from_millis(5))
        .with_max_backoff(Duration::from_millis(10))
}

async fn ask(model: &dyn Model) -> Result<toolloop::ModelResponse, toolloop::ModelError> {
    let messages = [Message::user("hi")];
    model.complete(ModelRequest::new(&messages)).await
}

#[tokio::test]
async fn a_redirect_is_never_followed_and_the_key_never_reaches_the_other_origin() {
    let elsewhere = TestServer::start([replies::anthropic::text("stolen"), replies::anthropic::text("stolen")]).await;
    let target = format!("{}/v1/messages", elsewhere.url());
    // 307 would resend the body, 302 would follow with a GET: neither is followed.
    for status in [307, 302] {
        let origin = TestServer::start([Reply::raw(status, "text/plain", "").header("location", &target)]).await;
        let model = Anthropic::builder()
            .api_key("sk-ant-secret")
            .header("x-gateway-token", "gw-secret")
            .base_url(origin.url())
            .retry_policy(quick_retries())
            .build()
            .unwrap();
        let error = ask(&model).await.unwrap_err();
        assert_eq!(error.kind(), ModelErrorKind::Redirect, "{error}");
        assert_eq!(error.status(), Some(status));
        assert!(!error.is_retryable());
        assert!(error.to_string().contains(&target), "{error}");
        // Not retried, and nothing (no key, no custom header) reached the other origin.
        assert_eq!(origin.requests().len(), 1);
    }
    assert!(elsewhere.requests().is_empty(), "{:?}", elsewhere.requests());
}

#[tokio::test]
async fn a_same_origin_redirect_is_not_followed_either() {
    let server = TestServer::start([
        Reply::raw(308, "text/plain", "").header("location", "/moved/v1/messages"),
        replies::anthropic::text("moved"),
    ])
    .await;
    let model = Anthropic::builder().api_key("sk-ant-secret").base_url(server.url()).build().unwrap();
    let error = ask(&model).await.unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::Redirect, "{error}");
    assert!(error.to_string().contains("/moved/v1/messages"), "{error}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_password_in_the_base_url_is_never_shown_and_is_sent_as_basic_auth() {
    let server = TestServer::start([replies::anthropic::text("hi")]).await;
    let url = server.url().replace("http://", "http://alice:hunter2@");
    let builder = Anthropic::builder().api_key("sk-ant-secret").base_url(&url);
    assert!(!format!("{builder:?}").contains("hunter2"), "{builder:?}");
    let model = builder.build().unwrap();
    assert!(!model.endpoint().contains("hunter2"), "{}", model.endpoint());
    assert!(model.endpoint().contains("alice:***@"), "{}", model.endpoint());
    assert!(!format!("{model:?}").contains("hunter2"));
    ask(&model).await.unwrap();
    let request = &server.requests()[0];
    // "alice:hunter2" in base64.
    assert_eq!(request.header("authorization"), Some("Basic YWxpY2U6aHVudGVyMg=="));
    assert_eq!(request.header("x-api-key"), Some("sk-ant-secret"));

    let bad = OpenAi::builder().base_url("ftp://bob:swordfish@host/v1").build().unwrap_err();
    assert!(!bad.to_string().contains("swordfish"), "{bad}");
}

/// A run bounded by `limit` against a server answering 429 with `retry_after`, then with text.
async fn run_after_429(model: impl Model + 'static, limit: Duration) -> Result<String, toolloop::RunError> {
    let agent = Agent::builder().model(model).max_duration(limit).build().unwrap();
    let mut conversation = Conversation::new();
    conversation.push_user("hi");
    agent.run(&mut conversation).await.map(|done| done.output)
}

fn rate_limited(retry_after: &str) -> Reply {
    Reply::json(429, &json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}))
        .header("retry-after", retry_after)
}

#[tokio::test]
async fn anthropic_obeys_a_long_retry_after_and_the_run_deadline_bounds_the_wait() {
    // 90 s is beyond the old 60 s cap: the wait is obeyed, so the deadline ends the run before a retry.
    let server = TestServer::start([rate_limited("90"), replies::anthropic::text("late")]).await;
    let model = Anthropic::builder()
        .api_key("sk-ant-test")
        .base_url(server.url())
        .retry_policy(quick_retries())
        .build()
        .unwrap();
    let error = run_after_429(model, Duration::from_millis(500)).await.unwrap_err();
    assert!(matches!(error.termination(), Termination::MaxDuration { .. }), "{error}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_configured_cap_overrides_the_providers_retry_after_rule() {
    let server = TestServer::start([rate_limited("90"), replies::anthropic::text("retried")]).await;
    let retry = quick_retries().with_max_retry_after(Duration::from_secs(1));
    let model = Anthropic::builder().api_key("sk-ant-test").base_url(server.url()).retry_policy(retry).build().unwrap();
    // Beyond the cap: the short computed backoff is used instead.
    assert_eq!(run_after_429(model, Duration::from_secs(30)).await.unwrap(), "retried");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn openai_obeys_retry_after_up_to_120_seconds() {
    let openai_429 = |after: &str| {
        Reply::json(429, &json!({"error": {"message": "slow down", "type": "rate_limit", "param": null, "code": null}}))
            .header("retry-after", after)
    };
    // 100 s is within OpenAI's 120 s: obeyed, so the deadline ends the run first.
    let server = TestServer::start([openai_429("100"), replies::openai::text("late")]).await;
    let model =
        OpenAi::builder().api_key("sk-test").base_url(server.url()).retry_policy(quick_retries()).build().unwrap();
    let error = run_after_429(model, Duration::from_millis(500)).await.unwrap_err();
    assert!(matches!(error.termination(), Termination::MaxDuration { .. }), "{error}");
    assert_eq!(server.requests().len(), 1);

    // 150 s is beyond it: the computed backoff is used.
    let server = TestServer::start([openai_429("150"), replies::openai::text("retried")]).await;
    let model =
        OpenAi::builder().api_key("sk-test").base_url(server.url()).retry_policy(quick_retries()).build().unwrap();
    assert_eq!(run_after_429(model, Duration::from_secs(30)).await.unwrap(), "retried");
}

#[tokio::test]
async fn a_response_above_the_size_cap_fails_with_a_typed_error() {
    let big = "x".repeat(64 * 1024);
    let body = json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [{"type": "text", "text": big}], "stop_reason": "end_turn", "stop_sequence": null,
        "usage": {"input_tokens": 1, "output_tokens": 1}
    });
    let server = TestServer::start([Reply::json(200, &body), Reply::json(200, &body)]).await;
    let build = |limit| {
        Anthropic::builder()
            .api_key("sk-ant-test")
            .base_url(server.url())
            .retry_policy(quick_retries())
            .max_response_bytes(limit)
            .build()
            .unwrap()
    };
    let error = ask(&build(16 * 1024)).await.unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::ResponseTooLarge, "{error}");
    assert!(error.to_string().contains("16384"), "{error}");
    // Not retried: the same server would send the same body.
    assert_eq!(server.requests().len(), 1);
    // Within the cap, the same body is fine.
    assert_eq!(ask(&build(1024 * 1024)).await.unwrap().text().len(), 64 * 1024);
}

#[tokio::test]
async fn a_chunked_response_without_a_length_is_capped_while_reading() {
    let server = TestServer::start([Reply::raw(200, "application/json", vec![b' '; 256 * 1024]).chunked()]).await;
    let model = OpenAi::builder()
        .api_key("sk-test")
        .base_url(server.url())
        .retry_policy(RetryPolicy::none())
        .max_response_bytes(1024)
        .build()
        .unwrap();
    let error = ask(&model).await.unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::ResponseTooLarge, "{error}");
}

#[test]
fn a_zero_timeout_is_rejected_when_the_model_is_built() {
    use toolloop::BuildError;
    let zero = std::time::Duration::ZERO;
    let error = toolloop::providers::anthropic::Anthropic::builder().api_key("k").timeout(zero).build().unwrap_err();
    assert!(matches!(error, BuildError::ZeroTimeout { setting: "timeout" }), "{error}");
    let error = toolloop::providers::ollama::Ollama::builder().idle_timeout(zero).build().unwrap_err();
    assert!(matches!(error, BuildError::ZeroTimeout { setting: "idle_timeout" }), "{error}");
    assert!(error.to_string().contains("longer than zero"));
}
