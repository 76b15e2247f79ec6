//! Model calls are traced: a `model_call` span with provider, model, usage
//! and latency, and at debug level a dump of the messages sent (roles, block
//! kinds, call ids, names) that never holds the API key or message contents;
//! at trace level, the engine dumps what every model (the test models too) is
//! sent and every event of the run with its contents, never keys.

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

/// Look a word up.
#[derive(toolloop::Tool)]
struct Define {
    /// The word.
    word: String,
}

impl Define {
    #[allow(clippy::unused_async)] // tool handlers are async by contract
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok(format!("{} means a secret-free definition", self.word))
    }
}

/// What an agent run on `model` logs with `filter`, and its answer.
async fn agent_logs(model: impl Model + 'static, filter: &str) -> (String, String) {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let agent = toolloop::Agent::builder().model(model).system("Define words.").tool::<Define>().build().unwrap();
    let mut conversation = toolloop::Conversation::new();
    conversation.push_user("what does quokka mean?");
    let done = agent.run(&mut conversation).await.unwrap();
    let logs = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    (logs, done.output)
}

fn scripted_define() -> toolloop::testing::ScriptedModel {
    toolloop::testing::ScriptedModel::new()
        .respond(toolloop::ModelResponse::from_tool_calls([ToolCall::new("d1", "define", json!({"word": "quokka"}))]))
        .respond(toolloop::ModelResponse::from_text("A quokka is a small wallaby."))
}

/// The engine dumps what every model is sent and every event of the run
/// with its contents, the test models included: requests, responses, tool
/// arguments and results.
#[tokio::test]
async fn at_trace_level_the_engine_dumps_every_models_requests_responses_and_tool_calls() {
    let (logs, answer) = agent_logs(scripted_define(), "toolloop=trace").await;
    assert_eq!(answer, "A quokka is a small wallaby.");
    for expected in [
        // The request: system prompt, the user's message, the tools offered.
        "model request",
        "Define words.",
        "what does quokka mean?",
        "tools=[\"define\"]",
        // The tool call's arguments, its start and result, with governance's verdict.
        "iteration_finished",
        "tool_execution_started",
        "tool_execution_finished",
        "quokka means a secret-free definition",
        "Allowed",
        // The second request carries the tool result; the answer comes back.
        "A quokka is a small wallaby.",
        "run_finished",
    ] {
        assert!(logs.contains(expected), "missing {expected:?} in:\n{logs}");
    }
    // A governance-free call reports its start once, after the verdict.
    assert_eq!(logs.matches("tool_execution_started").count(), 1, "{logs}");

    // Below trace level, no contents.
    let (logs, _) = agent_logs(scripted_define(), "toolloop=debug").await;
    for content in ["what does quokka mean?", "secret-free definition", "small wallaby"] {
        assert!(!logs.contains(content), "{content:?} logged at debug level:\n{logs}");
    }
}

/// The engine's dumps of an HTTP model's run show contents, never the key.
#[tokio::test]
async fn the_engine_dump_of_an_http_run_never_holds_the_key() {
    let server = TestServer::start([
        Reply::json(
            200,
            &json!({"model": "claude-test", "stop_reason": "tool_use", "usage": {"input_tokens": 5, "output_tokens": 2},
                    "content": [{"type": "tool_use", "id": "toolu_1", "name": "define", "input": {"word": "quokka"}}]}),
        ),
        Reply::json(
            200,
            &json!({"model": "claude-test", "stop_reason": "end_turn", "usage": {"input_tokens": 9, "output_tokens": 4},
                    "content": [{"type": "text", "text": "A quokka is a small wallaby."}]}),
        ),
    ])
    .await;
    let model = Anthropic::builder().api_key("sk-ant-very-secret").base_url(server.url()).model("claude-test").build();
    let (logs, answer) = agent_logs(model.unwrap(), "toolloop=trace").await;
    assert_eq!(answer, "A quokka is a small wallaby.");
    for expected in ["what does quokka mean?", "quokka means a secret-free definition", "run_finished"] {
        assert!(logs.contains(expected), "missing {expected:?} in:\n{logs}");
    }
    assert!(!logs.contains("sk-ant-very-secret"), "the key leaked into:\n{logs}");
}
