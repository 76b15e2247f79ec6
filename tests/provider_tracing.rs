//! Model calls are traced: a `model_call` span with provider, model, usage
//! and latency, and at debug level a dump of the messages sent (roles, block
//! kinds, call ids, names) that never holds the API key or message contents.

use std::io::Write;
use std::sync::{Arc, Mutex};

use futures_util::StreamExt as _;
use serde_json::json;
use toolloop::providers::anthropic::Anthropic;
use toolloop::{ContentBlock, Message, Model, ModelRequest, Role, ToolCall, ToolResult};
use toolloop_workspace::{Reply, TestServer, streamed};

/// Collects what the subscriber writes.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn a_model_call_is_traced_without_the_key_or_contents() {
    let server = TestServer::start([
        Reply::json(500, &json!({"type": "error", "error": {"type": "api_error", "message": "boom"}})),
        Reply::json(
            200,
            &json!({"model": "claude-test", "content": [{"type": "text", "text": "fine"}], "stop_reason": "end_turn",
                    "usage": {"input_tokens": 11, "output_tokens": 3, "cache_read_input_tokens": 2}}),
        ),
    ])
    .await;
    let model = Anthropic::builder()
        .api_key("sk-ant-very-secret")
        .base_url(server.url())
        .model("claude-test")
        .retry_policy(
            toolloop::providers::RetryPolicy::default().with_initial_backoff(std::time::Duration::from_millis(1)),
        )
        .build()
        .unwrap();
    let messages = vec![
        Message::user("top secret question"),
        Message::new(
            Role::Assistant,
            vec![ContentBlock::ToolCall(ToolCall::new("toolu_7", "lookup", json!({"q": "hidden"})))],
        )
        .with_provider("anthropic"),
        Message::from_tool_results([ToolResult::success("toolu_7", "classified answer")]),
    ];

    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    model.complete(ModelRequest::new(&messages)).await.unwrap();

    let logs = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    for expected in [
        "model_call{provider=\"anthropic\" model=\"claude-test\"",
        "role=User",
        "tool_call(id=toolu_7, name=lookup)",
        "tool_result(call_id=toolu_7)",
        "model call failed; retrying",
        "model response",
    ] {
        assert!(logs.contains(expected), "missing {expected:?} in:\n{logs}");
    }
    for secret in ["sk-ant-very-secret", "top secret question", "classified answer", "hidden"] {
        assert!(!logs.contains(secret), "{secret:?} leaked into:\n{logs}");
    }
}

#[tokio::test]
async fn the_opt_in_trace_dump_shows_contents_and_parameters_but_never_keys() {
    let server = TestServer::start([Reply::json(
        200,
        &json!({"model": "claude-test", "content": [{"type": "text", "text": "fine"}], "stop_reason": "end_turn",
                "usage": {"input_tokens": 1, "output_tokens": 1}}),
    )])
    .await;
    let url = server.url().replace("http://", "http://user:url-password@");
    let model = Anthropic::builder()
        .api_key("sk-ant-very-secret")
        .header("x-gateway", "gateway-secret")
        .base_url(url)
        .model("claude-test")
        .temperature(0.25)
        .build()
        .unwrap();
    let messages = vec![Message::user("top secret question")];
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new("toolloop::dump=trace"))
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    model.complete(ModelRequest::new(&messages).with_max_tokens(77)).await.unwrap();

    let logs = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    for expected in ["request body", "top secret question", "\"max_tokens\":77", "\"temperature\":0.25", "claude-test"]
    {
        assert!(logs.contains(expected), "missing {expected:?} in:\n{logs}");
    }
    for secret in ["sk-ant-very-secret", "gateway-secret", "url-password"] {
        assert!(!logs.contains(secret), "{secret:?} leaked into:\n{logs}");
    }
}

#[tokio::test]
async fn a_streamed_model_call_is_traced_with_its_usage_and_stop_reason() {
    let message = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [{"type": "text", "text": "fine"}], "stop_reason": "end_turn", "stop_sequence": null,
        "usage": {"input_tokens": 11, "output_tokens": 3}});
    let server = TestServer::start([
        Reply::json(529, &json!({"type": "error", "error": {"type": "overloaded_error", "message": "busy"}})),
        streamed::reply("text/event-stream", streamed::anthropic(&message)),
    ])
    .await;
    let model = Anthropic::builder()
        .api_key("sk-ant-very-secret")
        .base_url(server.url())
        .model("claude-test")
        .retry_policy(
            toolloop::providers::RetryPolicy::default().with_initial_backoff(std::time::Duration::from_millis(1)),
        )
        .build()
        .unwrap();
    let messages = [Message::user("top secret question")];
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let mut stream = model.stream(ModelRequest::new(&messages));
    while let Some(event) = stream.next().await {
        event.unwrap();
    }
    drop(stream);

    let logs = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    for expected in [
        "model_call{provider=\"anthropic\" model=\"claude-test\"",
        "model call failed; retrying",
        "input_tokens=11",
        "output_tokens=3",
        "stop_reason=EndTurn",
    ] {
        assert!(logs.contains(expected), "missing {expected:?} in:\n{logs}");
    }
    for secret in ["sk-ant-very-secret", "top secret question"] {
        assert!(!logs.contains(secret), "{secret:?} leaked into:\n{logs}");
    }
}
