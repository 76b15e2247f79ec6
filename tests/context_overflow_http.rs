//! A prompt that does not fit the context window, on every provider over a
//! local server answering as the real API does: without a context policy the
//! run ends with a typed `ContextOverflow` carrying the server's numbers and
//! the conversation intact; with one, the view is compacted (old tool results
//! elided) and the call made again succeeds (Anthropic, OpenAI Chat and
//! Responses, Ollama). Ollama: `num_ctx` and
//! `truncate: false` are sent, and a response to a prompt the server must
//! have truncated is turned into the same typed error.

use std::time::Duration;

use serde_json::{Value, json};
use toolloop::model::ModelErrorKind;
use toolloop::providers::RetryPolicy;
use toolloop::providers::anthropic::Anthropic;
use toolloop::providers::ollama::Ollama;
use toolloop::providers::openai::{OpenAi, OpenAiResponses};
use toolloop::run::Event;
use toolloop::run::{ContextPolicy, ELIDED_RESULT};
use toolloop::{Agent, ContentBlock, Conversation, Message, Model, Role, ToolCall, ToolResult};
use toolloop_workspace::{Reply, TestServer, replies, streamed};

/// Fetches a page.
#[derive(toolloop::Tool)]
struct Fetch {
    /// The page.
    page: u32,
}

impl Fetch {
    #[allow(clippy::unused_async)] // tool handlers are async by contract
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok(format!("page {}", self.page))
    }
}

/// A conversation with three finished iterations of long tool results made
/// through `provider`, and a question.
fn history(provider: &str) -> Conversation {
    let mut conversation = Conversation::new();
    conversation.push_user("Read three pages, then answer.");
    for page in 0..3 {
        let id = format!("call_{page}");
        conversation.push(
            Message::new(
                Role::Assistant,
                vec![ContentBlock::ToolCall(ToolCall::new(&id, "fetch", json!({"page": page})))],
            )
            .with_provider(provider),
        );
        conversation.push(Message::from_tool_results([ToolResult::success(&id, "text ".repeat(2000))]));
    }
    conversation.push_user("What do they say?");
    conversation
}

async fn run(
    model: impl Model + 'static,
    policy: Option<ContextPolicy>,
    provider: &str,
) -> (Conversation, Result<String, toolloop::RunError>) {
    let builder = Agent::builder().model(model).system("Answer from the pages.").tool::<Fetch>();
    let agent = match policy {
        Some(policy) => builder.context_policy(policy).build().unwrap(),
        None => builder.build().unwrap(),
    };
    let mut conversation = history(provider);
    let result = agent.run(&mut conversation).await.map(|done| done.output);
    (conversation, result)
}

/// The second request sent: after compaction, the old results are elided.
fn assert_compacted(server: &TestServer, texts: impl Fn(&Value) -> Vec<String>) {
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let first = texts(&requests[0].json());
    let second = texts(&requests[1].json());
    assert!(!first.iter().any(|text| text == ELIDED_RESULT), "{first:?}");
    assert!(second.iter().filter(|text| *text == ELIDED_RESULT).count() >= 2, "{second:?}");
    assert!(requests[1].body.len() < requests[0].body.len() / 2);
}

fn assert_overflow(
    result: &Result<String, toolloop::RunError>,
    conversation: &Conversation,
    provider: &str,
    numbers: (Option<u64>, Option<u64>),
) {
    let error = result.as_ref().unwrap_err();
    let model_error = error.model_error().unwrap();
    assert_eq!(model_error.kind(), ModelErrorKind::ContextOverflow, "{model_error}");
    assert_eq!((model_error.prompt_tokens(), model_error.context_window()), numbers);
    // Intact: nothing rewritten, nothing appended but what was there.
    assert!(conversation == &history(provider), "the conversation changed");
}

fn anthropic_overflow() -> Reply {
    Reply::json(
        400,
        &json!({"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 208310 tokens > 200000 maximum"}}),
    )
}

fn openai_overflow() -> Reply {
    Reply::json(
        400,
        &json!({"error": {
            "message": "This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length of the messages.",
            "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"
        }}),
    )
}

/// The Responses API's overflow: no numbers in the body.
fn responses_overflow() -> Reply {
    Reply::json(
        400,
        &json!({"error": {
            "message": "Your input exceeds the context window of this model. Please adjust your input and try again.",
            "type": "invalid_request_error", "param": "input", "code": "context_length_exceeded"
        }}),
    )
}

fn responses_text(text: &str) -> Reply {
    Reply::json(
        200,
        &json!({
            "id": "resp_1", "object": "response", "status": "completed", "model": "gpt-5.1",
            "output": [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                        "content": [{"type": "output_text", "text": text, "annotations": []}]}],
            "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
        }),
    )
}

fn anthropic(server: &TestServer) -> Anthropic {
    Anthropic::builder().api_key("k").base_url(server.url()).retry_policy(RetryPolicy::none()).build().unwrap()
}

fn openai(server: &TestServer) -> OpenAi {
    OpenAi::builder().api_key("k").base_url(server.url()).retry_policy(RetryPolicy::none()).build().unwrap()
}

fn anthropic_texts(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().unwrap().clone())
        .filter_map(|b| b["content"].as_str().map(str::to_owned))
        .collect()
}

fn chat_texts(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["content"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn anthropic_overflow_is_typed_then_compacted() {
    let server = TestServer::start([anthropic_overflow()]).await;
    let (conversation, result) = run(anthropic(&server), None, "anthropic").await;
    assert_overflow(&result, &conversation, "anthropic", (Some(208_310), Some(200_000)));

    let server = TestServer::start([anthropic_overflow(), replies::anthropic::text("They agree.")]).await;
    let (_, result) = run(anthropic(&server), Some(ContextPolicy::new().keep_iterations(1)), "anthropic").await;
    assert_eq!(result.unwrap(), "They agree.");
    assert_compacted(&server, anthropic_texts);
}

#[tokio::test]
async fn openai_overflow_is_typed_then_compacted() {
    let server = TestServer::start([openai_overflow()]).await;
    let (conversation, result) = run(openai(&server), None, "openai").await;
    assert_overflow(&result, &conversation, "openai", (Some(130_532), Some(128_000)));

    let server = TestServer::start([openai_overflow(), replies::openai::text("They agree.")]).await;
    let (_, result) = run(openai(&server), Some(ContextPolicy::new().keep_iterations(1)), "openai").await;
    assert_eq!(result.unwrap(), "They agree.");
    assert_compacted(&server, chat_texts);
}

fn responses(server: &TestServer) -> OpenAiResponses {
    OpenAi::responses().api_key("k").base_url(server.url()).retry_policy(RetryPolicy::none()).build().unwrap()
}

fn responses_texts(body: &Value) -> Vec<String> {
    body["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|item| item["type"] == "function_call_output")
        .filter_map(|item| item["output"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn responses_overflow_is_typed_then_compacted() {
    let server = TestServer::start([responses_overflow()]).await;
    let (conversation, result) = run(responses(&server), None, "openai-responses").await;
    assert_overflow(&result, &conversation, "openai-responses", (None, None));

    let server = TestServer::start([responses_overflow(), responses_text("They agree.")]).await;
    let (_, result) = run(responses(&server), Some(ContextPolicy::new().keep_iterations(1)), "openai-responses").await;
    assert_eq!(result.unwrap(), "They agree.");
    assert_compacted(&server, responses_texts);

    // A response that failed for the same reason (as a streamed `response.failed` reports it).
    let failed = Reply::json(
        200,
        &json!({"id": "resp_2", "object": "response", "status": "failed", "output": [],
                "error": {"code": "context_length_exceeded", "message": "Your input exceeds the context window of this model."}}),
    );
    let server = TestServer::start([failed]).await;
    let (conversation, result) = run(responses(&server), None, "openai-responses").await;
    assert_overflow(&result, &conversation, "openai-responses", (None, None));
}

#[tokio::test]
async fn openai_compatible_servers_overflow_is_typed() {
    let cases = [
        // vLLM
        (
            Reply::json(
                400,
                &json!({"object": "error", "message": "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.", "type": "BadRequestError", "param": null, "code": 400}),
            ),
            (Some(5000), Some(4096)),
        ),
        // llama.cpp server
        (
            Reply::json(
                400,
                &json!({"error": {"code": 400, "message": "the request exceeds the available context size. try increasing the context size or enable context shift", "type": "exceed_context_size_error", "n_prompt_tokens": 14429, "n_ctx": 8192}}),
            ),
            (Some(14429), Some(8192)),
        ),
        // LM Studio
        (
            Reply::json(
                400,
                &json!({"error": "Trying to keep the first 5000 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input"}),
            ),
            (None, Some(4096)),
        ),
    ];
    for (reply, numbers) in cases {
        let server = TestServer::start([reply]).await;
        let (conversation, result) = run(openai(&server), None, "openai").await;
        assert_overflow(&result, &conversation, "openai", numbers);
    }
}

fn ollama(server: &TestServer) -> Ollama {
    Ollama::builder()
        .base_url(server.url())
        .num_ctx(4096)
        .retry_policy(RetryPolicy::none())
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

#[tokio::test]
async fn ollama_sends_num_ctx_and_truncate_false_and_its_overflow_is_typed_then_compacted() {
    let overflow = || {
        Reply::json(
            400,
            &json!({"error": "{\"error\":{\"code\":400,\"message\":\"request (6200 tokens) exceeds the available context size (4096 tokens), try increasing it\",\"type\":\"exceed_context_size_error\",\"n_prompt_tokens\":6200,\"n_ctx\":4096}}"}),
        )
    };
    let server = TestServer::start([overflow()]).await;
    let (conversation, result) = run(ollama(&server), None, "ollama").await;
    assert_overflow(&result, &conversation, "ollama", (Some(6200), Some(4096)));
    let sent = server.requests()[0].json();
    assert_eq!((sent["truncate"].clone(), sent["options"]["num_ctx"].clone()), (json!(false), json!(4096)));

    let server = TestServer::start([overflow(), replies::ollama::text("They agree.")]).await;
    let (_, result) = run(ollama(&server), Some(ContextPolicy::new().keep_iterations(1)), "ollama").await;
    assert_eq!(result.unwrap(), "They agree.");
    assert_compacted(&server, chat_texts);
}

#[tokio::test]
async fn an_ollama_server_that_truncates_anyway_is_caught() {
    // An older server: it ignores `truncate`, keeps 4096 tokens of a ~30,000-byte prompt and answers.
    let truncated = Reply::json(
        200,
        &json!({
            "model": "llama3.2", "created_at": "2025-01-01T00:00:00Z",
            "message": {"role": "assistant", "content": "The pages are about filler."},
            "done": true, "done_reason": "stop", "prompt_eval_count": 4096, "eval_count": 7
        }),
    );
    let server = TestServer::start([truncated]).await;
    let model =
        Ollama::builder().base_url(server.url()).num_ctx(4096).retry_policy(RetryPolicy::none()).build().unwrap();
    let (conversation, result) = run(model, None, "ollama").await;
    let error = result.unwrap_err();
    let model_error = error.model_error().unwrap();
    assert_eq!(model_error.kind(), ModelErrorKind::ContextOverflow);
    assert_eq!(model_error.context_window(), Some(4096));
    assert!(conversation == history("ollama"), "the conversation changed");
}

#[tokio::test]
async fn a_streamed_ollama_answer_to_a_truncated_prompt_is_caught_too() {
    let truncated = json!({
        "model": "llama3.2", "created_at": "2025-01-01T00:00:00Z",
        "message": {"role": "assistant", "content": "The pages are about filler."},
        "done": true, "done_reason": "stop", "prompt_eval_count": 4096, "eval_count": 7
    });
    let server = TestServer::start([streamed::reply("application/x-ndjson", streamed::ollama(&truncated))]).await;
    let agent =
        Agent::builder().model(ollama(&server)).system("Answer from the pages.").tool::<Fetch>().build().unwrap();
    let mut conversation = history("ollama");
    let mut stream = agent.run_stream(&mut conversation);
    let mut discarded = false;
    while let Some(event) = stream.next().await {
        if let Event::ModelCallDiscarded { .. } = event {
            discarded = true;
        }
    }
    let error = stream.output().await.unwrap_err();
    assert_eq!(error.model_error().unwrap().kind(), ModelErrorKind::ContextOverflow);
    assert!(discarded, "the deltas shown are to be dropped");
    assert_eq!(server.requests()[0].json()["stream"], json!(true));
    assert!(conversation == history("ollama"), "the conversation changed");
}

/// Streamed, an overflow reported in the stream (`response.failed` with
/// `context_length_exceeded`) is the same typed error, and a context policy
/// compacts and calls again.
#[tokio::test]
async fn a_streamed_overflow_is_typed_then_compacted() {
    let created = json!({"type": "response.created", "sequence_number": 0, "response": {"id": "resp_1",
        "object": "response", "status": "in_progress", "model": "gpt-5.1", "output": [], "usage": null}});
    let failed = json!({"type": "response.failed", "sequence_number": 1, "response": {"id": "resp_1",
        "object": "response", "status": "failed", "model": "gpt-5.1", "output": [],
        "error": {"code": "context_length_exceeded", "message": "Your input exceeds the context window of this model."}}});
    let frame = |event: &Value| format!("event: {}\ndata: {event}\n\n", event["type"].as_str().unwrap()).into_bytes();
    let overflow = || streamed::reply("text/event-stream", vec![frame(&created), frame(&failed)]);
    let answer = json!({"id": "resp_2", "object": "response", "status": "completed", "model": "gpt-5.1",
        "output": [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "They agree.", "annotations": []}]}],
        "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}});

    let streamed_run = |model: OpenAiResponses, policy: Option<ContextPolicy>| async move {
        let builder = Agent::builder().model(model).system("Answer from the pages.").tool::<Fetch>();
        let agent = match policy {
            Some(policy) => builder.context_policy(policy).build().unwrap(),
            None => builder.build().unwrap(),
        };
        let mut conversation = history("openai-responses");
        let stream = agent.run_stream(&mut conversation);
        let result = stream.output().await.map(|done| done.output);
        (conversation, result)
    };

    let server = TestServer::start([overflow()]).await;
    let (conversation, result) = streamed_run(responses(&server), None).await;
    assert_overflow(&result, &conversation, "openai-responses", (None, None));

    let server =
        TestServer::start([overflow(), streamed::reply("text/event-stream", streamed::responses(&answer))]).await;
    let (_, result) = streamed_run(responses(&server), Some(ContextPolicy::new().keep_iterations(1))).await;
    assert_eq!(result.unwrap(), "They agree.");
    assert_compacted(&server, responses_texts);
}
