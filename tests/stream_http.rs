//! Streamed model calls over HTTP, for every wire format, against local
//! servers sending chunked SSE/NDJSON bodies: the request asks for a stream,
//! the events accumulate to the response, and faults mid-stream (an error
//! event, a dropped connection, a stall, a missing final event, malformed
//! data) end the stream with a typed error. For every format, a streamed
//! call accumulates to exactly what the non-streamed call returns for the
//! same answer (reasoning with its signature or encrypted item included).

use std::time::Duration;

use futures_util::StreamExt as _;
use serde_json::{Value, json};
use toolloop::model::{ModelErrorKind, StreamEvent};
use toolloop::providers::RetryPolicy;
use toolloop::providers::anthropic::Anthropic;
use toolloop::providers::ollama::Ollama;
use toolloop::providers::openai::OpenAi;
use toolloop::tool::ToolDefinition;
use toolloop::{Message, Model, ModelError, ModelRequest, ModelResponse, StopReason, Usage};
use toolloop_workspace::{Reply, StreamEnd, TestServer, streamed};

fn quick_retries(max_retries: u32) -> RetryPolicy {
    RetryPolicy::default()
        .with_max_retries(max_retries)
        .with_initial_backoff(Duration::from_millis(5))
        .with_max_backoff(Duration::from_millis(10))
}

fn anthropic(url: &str) -> Anthropic {
    Anthropic::builder()
        .api_key("sk-ant-test")
        .base_url(url)
        .retry_policy(quick_retries(2))
        .idle_timeout(Duration::from_millis(300))
        .build()
        .unwrap()
}

fn openai(url: &str) -> OpenAi {
    OpenAi::builder()
        .api_key("sk-test")
        .base_url(url)
        .retry_policy(quick_retries(2))
        .idle_timeout(Duration::from_millis(300))
        .build()
        .unwrap()
}

fn responses(url: &str) -> toolloop::providers::openai::OpenAiResponses {
    OpenAi::responses()
        .api_key("sk-test")
        .base_url(url)
        .retry_policy(quick_retries(0))
        .idle_timeout(Duration::from_millis(300))
        .build()
        .unwrap()
}

fn ollama(url: &str) -> Ollama {
    Ollama::builder()
        .base_url(url)
        .retry_policy(quick_retries(2))
        .idle_timeout(Duration::from_millis(300))
        .build()
        .unwrap()
}

fn sse(events: &[(&str, Value)]) -> Vec<Vec<u8>> {
    events.iter().map(|(name, data)| format!("event: {name}\ndata: {data}\n\n").into_bytes()).collect()
}

fn chat_sse(chunks: &[Value]) -> Vec<Vec<u8>> {
    let mut frames: Vec<Vec<u8>> = chunks.iter().map(|chunk| format!("data: {chunk}\n\n").into_bytes()).collect();
    frames.push(b"data: [DONE]\n\n".to_vec());
    frames
}

fn ndjson(lines: &[Value]) -> Vec<Vec<u8>> {
    lines.iter().map(|line| format!("{line}\n").into_bytes()).collect()
}

/// Pieces sent without delay.
fn now(pieces: Vec<Vec<u8>>) -> Vec<(Duration, Vec<u8>)> {
    pieces.into_iter().map(|piece| (Duration::ZERO, piece)).collect()
}

fn anthropic_events() -> Vec<(&'static str, Value)> {
    vec![
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                "model": "claude-test", "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        ("ping", json!({"type": "ping"})),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Let me "}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "check."}}),
        ),
        ("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 1,
                "content_block": {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {}}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"city\": \"Pa"}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "ris\"}"}}),
        ),
        ("content_block_stop", json!({"type": "content_block_stop", "index": 1})),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null},
                "usage": {"output_tokens": 5}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ]
}

fn chat_chunks() -> Vec<Value> {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    vec![
        chunk(json!({"role": "assistant", "content": ""}), Value::Null),
        chunk(json!({"content": "Let me "}), Value::Null),
        chunk(json!({"content": "check."}), Value::Null),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                "function": {"name": "weather", "arguments": ""}}]}),
            Value::Null,
        ),
        chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"city\": \"Pa"}}]}), Value::Null),
        chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "ris\"}"}}]}), Value::Null),
        chunk(json!({}), json!("tool_calls")),
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test", "choices": [],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}),
    ]
}

fn ollama_lines() -> Vec<Value> {
    let line = |content: &str| {
        json!({"model": "llama-test", "created_at": "2026-01-01T00:00:00Z",
            "message": {"role": "assistant", "content": content}, "done": false})
    };
    vec![
        line("Let me "),
        line("check."),
        json!({"model": "llama-test", "created_at": "2026-01-01T00:00:00Z",
            "message": {"role": "assistant", "content": "",
                "tool_calls": [{"function": {"name": "weather", "arguments": {"city": "Paris"}}}]},
            "done": false}),
        json!({"model": "llama-test", "created_at": "2026-01-01T00:00:00Z",
            "message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop",
            "prompt_eval_count": 10, "eval_count": 5}),
    ]
}

/// Streams one request; returns the events seen and what they fold into:
/// the response, or the error that ended the stream (with the usage
/// reported before it).
async fn stream(model: &dyn Model) -> (Vec<StreamEvent>, Result<ModelResponse, ModelError>) {
    let messages = [Message::user("weather in Paris?")];
    let mut events = Vec::new();
    let seen = model.stream(ModelRequest::new(&messages)).inspect(|event| {
        if let Ok(event) = event {
            events.push(event.clone());
        }
    });
    let response = ModelResponse::from_stream(seen).await;
    (events, response)
}

fn check_response(response: &ModelResponse) {
    assert_eq!(response.text(), "Let me check.");
    let call = response.tool_calls().next().expect("a tool call");
    assert_eq!((call.name.as_str(), &call.input), ("weather", &json!({"city": "Paris"})));
    assert_eq!(response.usage, Usage::new(10, 5));
    assert_eq!(response.stop_reason, StopReason::ToolUse);
}

#[tokio::test]
async fn anthropic_streams_a_text_and_a_tool_call_with_arguments_forming() {
    let server =
        TestServer::start([Reply::stream("text/event-stream", now(sse(&anthropic_events())), StreamEnd::Complete)])
            .await;
    let model = anthropic(&server.url());
    let (events, response) = stream(&model).await;
    let fragments: Vec<_> = events
        .iter()
        .filter_map(|event| match event {
            StreamEvent::ToolCallArgumentsDelta { fragment, .. } => Some(fragment.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(fragments, ["{\"city\": \"Pa", "ris\"}"]);
    check_response(&response.unwrap());
    let body = server.requests()[0].json();
    assert_eq!(body["stream"], json!(true));
}

#[tokio::test]
async fn openai_chat_streams_with_usage_requested() {
    let server =
        TestServer::start([Reply::stream("text/event-stream", now(chat_sse(&chat_chunks())), StreamEnd::Complete)])
            .await;
    let model = openai(&server.url());
    let (_, response) = stream(&model).await;
    check_response(&response.unwrap());
    let body = server.requests()[0].json();
    assert_eq!(body["stream"], json!(true));
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
}

#[tokio::test]
async fn ollama_streams_ndjson() {
    let server =
        TestServer::start([Reply::stream("application/x-ndjson", now(ndjson(&ollama_lines())), StreamEnd::Complete)])
            .await;
    let model = ollama(&server.url());
    let (_, response) = stream(&model).await;
    let response = response.unwrap();
    assert_eq!(response.text(), "Let me check.");
    assert_eq!(response.tool_calls().next().unwrap().input, json!({"city": "Paris"}));
    assert_eq!(response.usage, Usage::new(10, 5));
    assert_eq!(server.requests()[0].json()["stream"], json!(true));
}

#[tokio::test]
async fn a_failure_before_the_first_byte_is_retried() {
    let server = TestServer::start([
        Reply::json(529, &json!({"type": "error", "error": {"type": "overloaded_error", "message": "busy"}})),
        Reply::stream("text/event-stream", now(sse(&anthropic_events())), StreamEnd::Complete),
    ])
    .await;
    let (_, response) = stream(&anthropic(&server.url())).await;
    check_response(&response.unwrap());
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn an_error_event_mid_stream_is_a_typed_error_and_keeps_the_usage_seen() {
    let mut events = anthropic_events()[..4].to_vec();
    events.push(("error", json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})));
    let server = TestServer::start([Reply::stream("text/event-stream", now(sse(&events)), StreamEnd::Complete)]).await;
    let (seen, response) = stream(&anthropic(&server.url())).await;
    let error = response.expect_err("an error");
    assert_eq!(error.kind(), ModelErrorKind::Overloaded);
    assert!(seen.iter().any(|event| matches!(event, StreamEvent::TextDelta { .. })));
    assert_eq!(error.usage().map(|usage| usage.input_tokens), Some(10));
    // Not retried after the first byte: one request.
    assert_eq!(server.requests().len(), 1);

    let mut chunks = chat_chunks()[..2].to_vec();
    chunks.push(
        json!({"error": {"message": "The server had an error", "type": "server_error", "param": null, "code": null}}),
    );
    let server =
        TestServer::start([Reply::stream("text/event-stream", now(chat_sse(&chunks)), StreamEnd::Complete)]).await;
    let (_, response) = stream(&openai(&server.url())).await;
    assert_eq!(response.expect_err("an error").kind(), ModelErrorKind::Server);
}

#[tokio::test]
async fn a_dropped_connection_or_missing_final_event_is_a_connection_error() {
    type Build = fn(&str) -> Box<dyn Model>;
    let cases: [(Build, Vec<Vec<u8>>, &str); 3] = [
        (|url| Box::new(anthropic(url)), sse(&anthropic_events()), "text/event-stream"),
        (|url| Box::new(openai(url)), chat_sse(&chat_chunks()), "text/event-stream"),
        (|url| Box::new(ollama(url)), ndjson(&ollama_lines()), "application/x-ndjson"),
    ];
    for (build, pieces, content_type) in cases {
        let head = pieces[..pieces.len() - 1].to_vec();
        let server = TestServer::start([
            Reply::stream(content_type, now(head.clone()), StreamEnd::Cut),
            Reply::stream(content_type, now(head), StreamEnd::Complete),
        ])
        .await;
        let model = build(&server.url());
        for _ in 0..2 {
            let (_, response) = stream(&*model).await;
            assert_eq!(response.expect_err("an error").kind(), ModelErrorKind::Connection, "{content_type}");
        }
    }
}

#[tokio::test]
async fn a_stall_past_the_idle_timeout_is_a_timeout() {
    let pieces = sse(&anthropic_events())[..4].to_vec();
    let server = TestServer::start([Reply::stream("text/event-stream", now(pieces), StreamEnd::Stall)]).await;
    let (seen, response) = stream(&anthropic(&server.url())).await;
    assert_eq!(response.expect_err("an error").kind(), ModelErrorKind::Timeout);
    assert!(!seen.is_empty());
    server.wait_for_disconnects(1).await;
}

#[tokio::test]
async fn malformed_data_is_a_malformed_response() {
    let mut pieces = sse(&anthropic_events())[..3].to_vec();
    pieces.push(b"event: content_block_delta\ndata: {not json\n\n".to_vec());
    let server = TestServer::start([Reply::stream("text/event-stream", now(pieces), StreamEnd::Complete)]).await;
    let (_, response) = stream(&anthropic(&server.url())).await;
    assert_eq!(response.expect_err("an error").kind(), ModelErrorKind::MalformedResponse);
}

#[tokio::test]
async fn dropping_the_stream_mid_delta_closes_the_connection() {
    let mut pieces: Vec<(Duration, Vec<u8>)> = now(sse(&anthropic_events())[..4].to_vec());
    pieces.push((Duration::from_secs(30), sse(&anthropic_events())[4].clone()));
    let server = TestServer::start([Reply::stream("text/event-stream", pieces, StreamEnd::Complete)]).await;
    let model = anthropic(&server.url());
    let messages = [Message::user("hi")];
    let mut events = model.stream(ModelRequest::new(&messages));
    while let Some(event) = events.next().await {
        if matches!(event.unwrap(), StreamEvent::TextDelta { .. }) {
            break;
        }
    }
    drop(events);
    server.wait_for_disconnects(1).await;
}

#[tokio::test]
async fn anthropic_streams_under_the_hood_past_the_non_streaming_token_limit() {
    let server = TestServer::start([
        Reply::stream("text/event-stream", now(sse(&anthropic_events())), StreamEnd::Complete),
        Reply::json(
            200,
            &json!({"id": "msg_2", "type": "message", "role": "assistant", "model": "claude-test",
                "content": [{"type": "text", "text": "short"}], "stop_reason": "end_turn", "stop_sequence": null,
                "usage": {"input_tokens": 1, "output_tokens": 1}}),
        ),
    ])
    .await;
    let model = anthropic(&server.url());
    let messages = [Message::user("write a book")];
    let mut request = ModelRequest::new(&messages);
    request.max_tokens = Some(64_000);
    check_response(&model.complete(request).await.unwrap());
    request.max_tokens = Some(21_333);
    assert_eq!(model.complete(request).await.unwrap().text(), "short");
    let requests = server.requests();
    assert_eq!(requests[0].json()["stream"], json!(true));
    assert_eq!(requests[1].json().get("stream"), None);
}

/// A fake answering `body` whole, or as its API's stream when the request
/// asks for one.
async fn either_way(body: Value, content_type: &'static str, events: fn(&Value) -> Vec<Vec<u8>>) -> TestServer {
    TestServer::start_with(move |request| {
        if request.json()["stream"] == json!(true) {
            streamed::reply(content_type, events(&body))
        } else {
            Reply::json(200, &body)
        }
    })
    .await
}

/// Calls `whole` without streaming and `streaming` streamed, for the same
/// request; both must return the same response. Returns the stream's events.
async fn streamed_equals_whole(whole: &dyn Model, streaming: &dyn Model) -> Vec<StreamEvent> {
    let messages = [Message::user("Which is larger, Paris or Berlin?")];
    let tools = [ToolDefinition::from_schema(
        "population",
        "A city's population.",
        json!({"type": "object", "properties": {"city": {"type": "string"}}}),
    )];
    let expected = whole.complete(ModelRequest::new(&messages).with_tools(&tools)).await.unwrap();
    let mut events = Vec::new();
    let stream = streaming.stream(ModelRequest::new(&messages).with_tools(&tools)).inspect(|event| {
        events.push(event.clone().unwrap());
    });
    let streamed = ModelResponse::from_stream(stream).await.unwrap();
    assert_eq!(streamed, expected);
    assert_eq!(streamed.reasoning().count(), expected.reasoning().count());
    assert!(expected.reasoning().count() > 0 && expected.tool_calls().count() == 2, "{expected:?}");
    assert!(events.iter().any(|event| matches!(event, StreamEvent::ReasoningDelta { .. })));
    assert!(events.iter().filter(|event| matches!(event, StreamEvent::TextDelta { .. })).count() > 1);
    events
}

fn argument_deltas(events: &[StreamEvent]) -> usize {
    events.iter().filter(|event| matches!(event, StreamEvent::ToolCallArgumentsDelta { .. })).count()
}

#[tokio::test]
async fn anthropic_streams_exactly_the_non_streamed_message() {
    let body = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [
            {"type": "thinking", "thinking": "Two cities — look both up at once.", "signature": "EqSig0123456789"},
            {"type": "redacted_thinking", "data": "EmRedABCDEF"},
            {"type": "text", "text": "Checking Paris and Berlin ☀️."},
            {"type": "tool_use", "id": "toolu_1", "name": "population", "input": {"city": "Paris"}},
            {"type": "tool_use", "id": "toolu_2", "name": "population", "input": {"city": "Berlin", "years": [2024, 2025]}}
        ],
        "stop_reason": "tool_use", "stop_sequence": null,
        "usage": {"input_tokens": 20, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 10, "output_tokens": 40}});
    let server = either_way(body, "text/event-stream", streamed::anthropic).await;
    let model = anthropic(&server.url());
    let events = streamed_equals_whole(&model, &model).await;
    assert!(argument_deltas(&events) > 4, "arguments form piece by piece");
}

#[tokio::test]
async fn openai_chat_streams_exactly_the_non_streamed_completion() {
    let body = json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "deepseek-reasoner",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant",
            "reasoning_content": "Two cities: look both up.", "content": "Checking Paris and Berlin ☀️.",
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "population", "arguments": "{\"city\": \"Paris\"}"}},
                {"id": "call_2", "type": "function", "function": {"name": "population", "arguments": "{\"city\": \"Berlin\"}"}}
            ]}}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 40, "total_tokens": 160,
            "prompt_tokens_details": {"cached_tokens": 100}, "completion_tokens_details": {"reasoning_tokens": 12}}});
    let server = either_way(body, "text/event-stream", streamed::chat).await;
    let model = openai(&server.url());
    let events = streamed_equals_whole(&model, &model).await;
    assert!(argument_deltas(&events) > 4);
}

#[tokio::test]
async fn openai_responses_streams_exactly_the_non_streamed_response() {
    let body = json!({"id": "resp_1", "object": "response", "status": "completed", "error": null,
        "incomplete_details": null, "model": "gpt-5.1",
        "output": [
            {"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAAA-sealed",
                "summary": [{"type": "summary_text", "text": "**Two cities**"}, {"type": "summary_text", "text": "Look both up."}]},
            {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": "Checking Paris and Berlin ☀️.", "annotations": []}]},
            {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "population",
                "arguments": "{\"city\": \"Paris\"}", "status": "completed"},
            {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "population",
                "arguments": "{\"city\": \"Berlin\"}", "status": "completed"}
        ],
        "usage": {"input_tokens": 120, "input_tokens_details": {"cached_tokens": 100},
            "output_tokens": 40, "output_tokens_details": {"reasoning_tokens": 12}, "total_tokens": 160}});
    let server = either_way(body, "text/event-stream", streamed::responses).await;
    let model = responses(&server.url());
    let events = streamed_equals_whole(&model, &model).await;
    assert!(argument_deltas(&events) > 4);
    let Some(StreamEvent::Started { id, .. }) = events.first() else { panic!("{events:?}") };
    assert_eq!(id.as_deref(), Some("resp_1"));
    let request = server.requests().last().unwrap().json();
    assert_eq!((request["stream"].clone(), request["store"].clone()), (json!(true), json!(false)));
}

#[tokio::test]
async fn ollama_streams_exactly_the_non_streamed_response() {
    let body = json!({"model": "qwen3", "created_at": "2026-11-25T06:00:00Z",
        "message": {"role": "assistant", "content": "Checking Paris and Berlin ☀️.", "thinking": "Two cities: look both up.",
            "tool_calls": [
                {"function": {"name": "population", "arguments": {"city": "Paris"}}},
                {"function": {"name": "population", "arguments": {"city": "Berlin"}}}
            ]},
        "done": true, "done_reason": "stop", "prompt_eval_count": 120, "eval_count": 40});
    let server = either_way(body, "application/x-ndjson", streamed::ollama).await;
    // Ollama gives calls no ids; each client numbers its calls, so two
    // fresh clients give both calls the same ids.
    let events = streamed_equals_whole(&ollama(&server.url()), &ollama(&server.url())).await;
    assert_eq!(argument_deltas(&events), 2, "Ollama sends each call's arguments whole");
}

#[tokio::test]
async fn a_failed_or_cut_responses_stream_is_a_typed_error() {
    let created = json!({"type": "response.created", "sequence_number": 0, "response": {"id": "resp_1",
        "object": "response", "status": "in_progress", "model": "gpt-5.1", "output": [], "usage": null}});
    let delta = json!({"type": "response.output_text.delta", "sequence_number": 2, "item_id": "msg_1",
        "output_index": 0, "content_index": 0, "delta": "Hel"});
    let added = json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
        "item": {"type": "message", "id": "msg_1", "status": "in_progress", "role": "assistant", "content": []}});
    let failed = json!({"type": "response.failed", "sequence_number": 3, "response": {"id": "resp_1",
        "object": "response", "status": "failed", "model": "gpt-5.1", "output": [],
        "error": {"code": "server_error", "message": "The model failed to generate a response."}}});
    let frame = |event: &Value| format!("event: {}\ndata: {event}\n\n", event["type"].as_str().unwrap()).into_bytes();
    let head = vec![frame(&created), frame(&added), frame(&delta)];
    let mut with_failure = head.clone();
    with_failure.push(frame(&failed));
    let server = TestServer::start([
        Reply::stream("text/event-stream", now(with_failure), StreamEnd::Complete),
        Reply::stream("text/event-stream", now(head.clone()), StreamEnd::Cut),
        Reply::stream("text/event-stream", now(head), StreamEnd::Complete),
    ])
    .await;
    let model = responses(&server.url());
    let (seen, response) = stream(&model).await;
    let error = response.expect_err("response.failed is an error");
    assert_eq!(error.kind(), ModelErrorKind::Server);
    assert!(error.message().contains("failed to generate"), "{error}");
    assert!(seen.iter().any(|event| matches!(event, StreamEvent::TextDelta { .. })));
    for _ in 0..2 {
        let (_, response) = stream(&model).await;
        assert_eq!(response.expect_err("no response.completed").kind(), ModelErrorKind::Connection);
    }
}

#[tokio::test]
async fn a_stream_may_outlast_the_timeout_while_it_keeps_sending() {
    // Every event 80 ms after the last: the whole body takes ~1 s, past the
    // 400 ms timeout, but no wait passes the 300 ms idle timeout.
    let pieces = sse(&anthropic_events()).into_iter().map(|piece| (Duration::from_millis(80), piece)).collect();
    let server = TestServer::start([Reply::stream("text/event-stream", pieces, StreamEnd::Complete)]).await;
    let model = Anthropic::builder()
        .api_key("sk-ant-test")
        .base_url(server.url())
        .retry_policy(quick_retries(0))
        .timeout(Duration::from_millis(400))
        .idle_timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let (_, response) = stream(&model).await;
    check_response(&response.unwrap());

    // The timeout still bounds the wait for the answer's head.
    let server = TestServer::start([Reply::hang()]).await;
    let model = Anthropic::builder()
        .api_key("sk-ant-test")
        .base_url(server.url())
        .retry_policy(quick_retries(0))
        .timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let (_, response) = stream(&model).await;
    assert_eq!(response.expect_err("a timeout").kind(), ModelErrorKind::Timeout);
}

#[tokio::test]
async fn a_failure_in_the_stream_before_any_content_is_retried() {
    // Anthropic may send `overloaded_error` as an event right after the 200.
    let mut events = anthropic_events()[..1].to_vec();
    events.push(("ping", json!({"type": "ping"})));
    events.push(("error", json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})));
    let server = TestServer::start([
        Reply::stream("text/event-stream", now(sse(&events)), StreamEnd::Complete),
        Reply::stream("text/event-stream", now(sse(&anthropic_events())), StreamEnd::Complete),
    ])
    .await;
    let (seen, response) = stream(&anthropic(&server.url())).await;
    check_response(&response.unwrap());
    assert_eq!(server.requests().len(), 2);
    let started = seen.iter().filter(|event| matches!(event, StreamEvent::Started { .. })).count();
    assert_eq!(started, 1, "the failed attempt's events were never shown");

    // Not retryable (an invalid request), or out of retries: the error ends the stream.
    let mut events = anthropic_events()[..1].to_vec();
    events.push(("error", json!({"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}})));
    let server = TestServer::start([Reply::stream("text/event-stream", now(sse(&events)), StreamEnd::Complete)]).await;
    let (_, response) = stream(&anthropic(&server.url())).await;
    assert_eq!(response.expect_err("an error").kind(), ModelErrorKind::InvalidRequest);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_fallback_streams_from_the_next_model_when_the_first_fails_before_any_content() {
    let mut events = anthropic_events()[..1].to_vec();
    events.push(("error", json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})));
    let down = TestServer::start([Reply::stream("text/event-stream", now(sse(&events)), StreamEnd::Complete)]).await;
    let up =
        TestServer::start([Reply::stream("text/event-stream", now(chat_sse(&chat_chunks())), StreamEnd::Complete)])
            .await;
    let primary = Anthropic::builder()
        .api_key("sk-ant-test")
        .base_url(down.url())
        .retry_policy(quick_retries(0))
        .build()
        .unwrap();
    let fallback = toolloop::providers::Fallback::new(primary).then(openai(&up.url()));
    let (seen, response) = stream(&fallback).await;
    let response = response.unwrap();
    check_response(&response);
    assert_eq!(response.provider.as_deref(), Some("openai"));
    assert_eq!(seen.iter().filter(|event| matches!(event, StreamEvent::Started { .. })).count(), 1);
    assert!(seen.iter().filter(|event| matches!(event, StreamEvent::TextDelta { .. })).count() > 1, "streamed live");
    assert_eq!((down.requests().len(), up.requests().len()), (1, 1));
}

#[tokio::test]
async fn a_stream_past_the_response_size_limit_is_too_large() {
    let server =
        TestServer::start([Reply::stream("text/event-stream", now(sse(&anthropic_events())), StreamEnd::Complete)])
            .await;
    let model = Anthropic::builder()
        .api_key("sk-ant-test")
        .base_url(server.url())
        .retry_policy(quick_retries(0))
        .max_response_bytes(600)
        .build()
        .unwrap();
    let (seen, response) = stream(&model).await;
    assert_eq!(response.expect_err("too large").kind(), ModelErrorKind::ResponseTooLarge);
    assert!(!seen.is_empty(), "the events within the limit were delivered");
}

#[tokio::test]
async fn a_finished_stream_leaves_its_connection_for_the_next_call() {
    let reply = || Reply::stream("text/event-stream", now(sse(&anthropic_events())), StreamEnd::Complete);
    let server = TestServer::start([reply(), reply(), reply()]).await.keep_alive();
    let model = anthropic(&server.url());
    for _ in 0..3 {
        let (_, response) = stream(&model).await;
        check_response(&response.unwrap());
    }
    assert_eq!(server.requests().len(), 3);
    assert_eq!(server.connections(), 1, "each call reused the pooled connection");
}

/// A message start reporting usage, the empty text block Anthropic opens
/// before any text, and `error` as the next event.
fn anthropic_opening_then(error_type: &str) -> Vec<Vec<u8>> {
    let mut events = anthropic_events()[..2].to_vec();
    events.push(("error", json!({"type": "error", "error": {"type": error_type, "message": "no"}})));
    sse(&events)
}

#[tokio::test]
async fn an_empty_text_opening_is_not_content_so_a_following_error_is_retried() {
    // Anthropic: `content_block_start` with `"text": ""` decodes to an empty text delta.
    let reply =
        || Reply::stream("text/event-stream", now(anthropic_opening_then("overloaded_error")), StreamEnd::Complete);
    let server = TestServer::start([reply(), reply(), reply()]).await;
    let (seen, response) = stream(&anthropic(&server.url())).await;
    let error = response.expect_err("an error");
    assert_eq!((error.kind(), error.attempts()), (ModelErrorKind::Overloaded, 3));
    assert_eq!(server.requests().len(), 3, "retried as the policy says (2 retries)");
    assert!(seen.iter().all(|event| !matches!(event, StreamEvent::TextDelta { .. })), "{seen:?}");

    // The Responses API: `response.content_part.added` with an empty `output_text`.
    let frame = |event: &Value| format!("event: {}\ndata: {event}\n\n", event["type"].as_str().unwrap()).into_bytes();
    let opening_then_failure = vec![
        frame(&json!({"type": "response.created", "sequence_number": 0, "response": {"id": "resp_1",
            "object": "response", "status": "in_progress", "model": "gpt-5.1", "output": [], "usage": null}})),
        frame(&json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
            "item": {"type": "message", "id": "msg_1", "status": "in_progress", "role": "assistant", "content": []}})),
        frame(&json!({"type": "response.content_part.added", "sequence_number": 2, "item_id": "msg_1",
            "output_index": 0, "content_index": 0, "part": {"type": "output_text", "annotations": [], "text": ""}})),
        frame(&json!({"type": "response.failed", "sequence_number": 3, "response": {"id": "resp_1",
            "object": "response", "status": "failed", "model": "gpt-5.1", "output": [],
            "error": {"code": "server_error", "message": "The model failed to generate a response."}}})),
    ];
    let reply = || Reply::stream("text/event-stream", now(opening_then_failure.clone()), StreamEnd::Complete);
    let server = TestServer::start([reply(), reply()]).await;
    let model = OpenAi::responses()
        .api_key("sk-test")
        .base_url(server.url())
        .retry_policy(quick_retries(1))
        .idle_timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let (_, response) = stream(&model).await;
    let error = response.expect_err("an error");
    assert_eq!((error.kind(), error.attempts()), (ModelErrorKind::Server, 2));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_failure_before_content_keeps_the_usage_reported_for_the_call() {
    let reply = || {
        Reply::stream("text/event-stream", now(anthropic_opening_then("invalid_request_error")), StreamEnd::Complete)
    };
    let server = TestServer::start([reply()]).await;
    let (_, response) = stream(&anthropic(&server.url())).await;
    let error = response.expect_err("an error");
    assert_eq!(error.kind(), ModelErrorKind::InvalidRequest);
    assert_eq!(error.usage(), Some(Usage::new(10, 1)), "message_start reported it");

    // In a run: the discard event and the run's metadata keep it.
    let server = TestServer::start([reply()]).await;
    let agent = toolloop::Agent::builder().model(anthropic(&server.url())).build().unwrap();
    let mut conversation = toolloop::Conversation::new();
    conversation.push(Message::user("hi"));
    let mut events = agent.run_stream(&mut conversation);
    let mut discarded = None;
    while let Some(event) = events.next().await {
        if let toolloop::run::Event::ModelCallDiscarded { usage, .. } = event {
            discarded = Some(usage);
        }
    }
    let error = events.output().await.expect_err("the call failed");
    assert_eq!(discarded, Some(Usage::new(10, 1)));
    assert_eq!(error.metadata().usage, Usage::new(10, 1));
}

#[tokio::test]
async fn a_stall_before_content_is_retried_once_whatever_the_policy() {
    let stall = || Reply::stream("text/event-stream", now(sse(&anthropic_events()[..2])), StreamEnd::Stall);
    let server = TestServer::start([stall(), stall(), stall(), stall()]).await;
    let model = Anthropic::builder()
        .api_key("sk-ant-test")
        .base_url(server.url())
        .retry_policy(quick_retries(3))
        .idle_timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let (_, response) = stream(&model).await;
    let error = response.expect_err("a timeout");
    assert_eq!((error.kind(), error.attempts()), (ModelErrorKind::Timeout, 2));
    assert_eq!(server.requests().len(), 2, "a second stall ends the call");
}
