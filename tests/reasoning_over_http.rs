//! Reasoning models end to end over HTTP: an agent with thinking on
//! (Anthropic) and reasoning on (OpenAI Responses) runs a 4-iteration loop
//! with parallel tool calls, a redacted thinking block, typed output and a
//! validation retry against local fakes that reject what the real APIs
//! reject, as the request arrives. The conversation is saved to JSON
//! mid-loop, resumed and continued; and one conversation switches
//! Anthropic → Responses → Ollama.

#![allow(clippy::unused_async)] // tool handlers are async by contract, even when they never wait

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolloop::model::ModelErrorKind;
use toolloop::providers::anthropic::Anthropic;
use toolloop::providers::ollama::Ollama;
use toolloop::providers::openai::{OpenAi, OpenAiResponses};
use toolloop::reasoning::{ReasoningConfig, ReasoningEffort, ReasoningSummary};
use toolloop::run::Event;
use toolloop::{Agent, Conversation, Model, ModelRequest};
mod cities;

use cities::{Report, agent};
use toolloop_workspace::anthropic_rules::{AnthropicRules, Block};
use toolloop_workspace::responses_rules::{Item, ResponsesRules};
use toolloop_workspace::{Reply, TestServer, replies, streamed};

/// Runs the loop in two halves: two model calls, then the conversation is
/// saved to JSON and resumed, and a second run continues it to the output.
async fn run_saved_and_resumed(model: impl Model + Clone + 'static) -> (Report, Conversation) {
    let mut conversation = Conversation::new();
    conversation.push_user("Which is larger, Paris or Berlin?");
    let stopped = agent(model.clone(), Some(2)).run(&mut conversation).await;
    assert!(stopped.is_err(), "the first half stops at its call limit");
    assert!(conversation.unanswered_tool_calls().is_empty());
    let saved = serde_json::to_string(&conversation).unwrap();
    let mut resumed: Conversation = serde_json::from_str(&saved).unwrap();
    assert_eq!(resumed, conversation, "save and resume keep every reasoning byte");
    let done = agent(model, None).run(&mut resumed).await.unwrap();
    assert!(resumed.unanswered_tool_calls().is_empty());
    (done.output, resumed)
}

/// One success body a fake answers with, made from the request.
type Answer = Box<dyn Fn(&Value) -> Value + Send + Sync>;

/// A fake that checks each request with `check` and, when it passes,
/// answers with the next of `answers` (made from the request).
fn fake(
    check: impl Fn(&Value) -> Result<(), Reply> + Send + Sync + 'static,
    answers: Vec<Answer>,
) -> impl Fn(&toolloop_workspace::RecordedRequest) -> Reply + Send + Sync + 'static {
    streaming_fake(check, answers, |_| panic!("this fake does not stream"))
}

/// [`fake`], answering a request that asks for a stream (`"stream": true`)
/// with the API's stream of the same answer (`events`).
fn streaming_fake(
    check: impl Fn(&Value) -> Result<(), Reply> + Send + Sync + 'static,
    answers: Vec<Answer>,
    events: fn(&Value) -> Vec<Vec<u8>>,
) -> impl Fn(&toolloop_workspace::RecordedRequest) -> Reply + Send + Sync + 'static {
    let answers = Mutex::new(VecDeque::from(answers));
    move |request| {
        let body = request.json();
        if let Err(rejection) = check(&body) {
            return rejection;
        }
        match answers.lock().unwrap().pop_front() {
            Some(answer) if body["stream"] == json!(true) => {
                streamed::reply("text/event-stream", events(&answer(&body)))
            }
            Some(answer) => Reply::json(200, &answer(&body)),
            None => Reply::json(500, &json!({"error": "no more answers"})),
        }
    }
}

/// Runs `agent` streamed to its end: the reasoning text streamed, and the result.
async fn run_streamed(agent: &Agent<Report>, conversation: &mut Conversation) -> (String, Report) {
    let mut stream = agent.run_stream(conversation);
    let mut reasoning = String::new();
    while let Some(event) = stream.next().await {
        match event {
            Event::ReasoningDelta { text } => reasoning.push_str(&text),
            Event::ModelCallDiscarded { error, .. } => panic!("a model call failed: {error}"),
            _ => {}
        }
    }
    (reasoning, stream.output().await.unwrap().output)
}

fn anthropic_answers(rules: &Arc<AnthropicRules>) -> Vec<Answer> {
    let turns: Vec<Vec<Block<'static>>> = vec![
        vec![
            Block::Thinking("Two cities: look both up at once."),
            Block::RedactedThinking,
            Block::ToolUse("toolu_1", "population", json!({"city": "Paris"})),
            Block::ToolUse("toolu_2", "population", json!({"city": "Berlin"})),
        ],
        vec![
            Block::Thinking("Paris first, I think."),
            Block::ToolUse("toolu_3", "final_output", json!({"largest": "Paris"})),
        ],
        vec![
            Block::Thinking("The validator says to check; Rome too?"),
            Block::Text("Checking Rome."),
            Block::ToolUse("toolu_5", "population", json!({"city": "Rome"})),
        ],
        vec![Block::Thinking("Berlin."), Block::ToolUse("toolu_4", "final_output", json!({"largest": "Berlin"}))],
    ];
    turns
        .into_iter()
        .map(|blocks| {
            let rules = Arc::clone(rules);
            Box::new(move |request: &Value| rules.respond(request, &blocks)) as Answer
        })
        .collect()
}

/// Claude with manual thinking (a budget below `max_tokens`), at `server`.
fn thinking_claude(server: &TestServer) -> Anthropic {
    Anthropic::builder()
        .api_key("k")
        .base_url(server.url())
        .model("claude-sonnet-4-5")
        .max_tokens(8192)
        .reasoning(ReasoningConfig::new(ReasoningEffort::Medium).with_budget_tokens(2048))
        .build()
        .unwrap()
}

/// A reasoning model on the Responses API with summaries, at `server`.
fn reasoning_gpt(server: &TestServer) -> OpenAiResponses {
    OpenAi::responses()
        .api_key("k")
        .base_url(server.url())
        .model("gpt-5.1")
        .reasoning(ReasoningConfig::new(ReasoningEffort::High).with_summary(ReasoningSummary::Auto))
        .build()
        .unwrap()
}

#[tokio::test]
async fn anthropic_thinking_loop_saved_resumed_and_continued() {
    let rules = Arc::new(AnthropicRules::new());
    let checker = Arc::clone(&rules);
    let server = TestServer::start_with(fake(
        move |body| checker.check(body).map_err(|rejection| rejection.reply()),
        anthropic_answers(&rules),
    ))
    .await;
    let model = thinking_claude(&server);
    let (report, conversation) = run_saved_and_resumed(model).await;
    assert_eq!(report.largest, "Berlin");

    let requests = server.requests();
    assert_eq!(requests.len(), 4, "every request passed the fake's rules");
    for request in &requests {
        let body = request.json();
        assert_eq!(body["thinking"], json!({"type": "enabled", "budget_tokens": 2048}));
        assert_eq!(request.header("anthropic-beta"), Some("interleaved-thinking-2025-05-14"));
    }
    // The redacted block went back in place, after the signed one.
    let last = requests.last().unwrap().json();
    assert_eq!(last["messages"][1]["content"][1]["type"], "redacted_thinking");
    let readable: Vec<String> = conversation.messages().iter().map(toolloop::Message::reasoning_text).collect();
    assert!(readable.iter().any(|text| text.contains("look both up at once")));
}

/// The same loop streamed: thinking and signatures arrive as deltas, are
/// accumulated, and go back byte for byte (the fake verifies every
/// signature), and the interleaved-thinking loop reaches its output.
#[tokio::test]
async fn anthropic_thinking_loop_streamed() {
    let rules = Arc::new(AnthropicRules::new());
    let checker = Arc::clone(&rules);
    let server = TestServer::start_with(streaming_fake(
        move |body| checker.check(body).map_err(|rejection| rejection.reply()),
        anthropic_answers(&rules),
        streamed::anthropic,
    ))
    .await;
    let model = thinking_claude(&server);
    let mut conversation = Conversation::new();
    conversation.push_user("Which is larger, Paris or Berlin?");
    let (reasoning, report) = run_streamed(&agent(model, None), &mut conversation).await;
    assert_eq!(report.largest, "Berlin");
    assert!(reasoning.contains("look both up at once") && reasoning.contains("Berlin."), "{reasoning}");
    let requests = server.requests();
    assert_eq!(requests.len(), 4, "every request passed the fake's rules");
    assert!(requests.iter().all(|request| request.json()["stream"] == json!(true)));
    let last = requests.last().unwrap().json();
    assert_eq!(last["messages"][1]["content"][1]["type"], "redacted_thinking");
    assert!(conversation.unanswered_tool_calls().is_empty());
}

#[tokio::test]
async fn anthropic_rejects_altered_thinking_with_the_api_error() {
    let rules = Arc::new(AnthropicRules::new());
    let checker = Arc::clone(&rules);
    let server = TestServer::start_with(fake(
        move |body| checker.check(body).map_err(|rejection| rejection.reply()),
        anthropic_answers(&rules),
    ))
    .await;
    let model = Anthropic::builder()
        .api_key("k")
        .base_url(server.url())
        .model("claude-sonnet-4-5")
        .reasoning(ReasoningConfig::new(ReasoningEffort::Low).with_budget_tokens(1024))
        .build()
        .unwrap();
    let mut conversation = Conversation::new();
    conversation.push_user("Which is larger?");
    let tools = agent_tools();
    let first = model.complete(ModelRequest::new(conversation.messages()).with_tools(&tools)).await.unwrap();
    let mut message = first.to_message(model.provider());
    // Alter the thinking text: the signature no longer matches.
    if let toolloop::ContentBlock::Reasoning(reasoning) = &mut message.content[0] {
        reasoning.text[0].push('!');
    }
    conversation.push(message);
    conversation.push(toolloop::Message::from_tool_results([
        toolloop::ToolResult::success("toolu_1", "2.1"),
        toolloop::ToolResult::success("toolu_2", "3.7"),
    ]));
    let error = model.complete(ModelRequest::new(conversation.messages()).with_tools(&tools)).await.unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::InvalidRequest);
    assert!(error.to_string().contains("Invalid `signature` in `thinking` block"), "{error}");
}

fn agent_tools() -> Vec<toolloop::tool::ToolDefinition> {
    vec![toolloop::tool::ToolDefinition::from_schema("population", "Look up a population.", json!({"type": "object"}))]
}

#[tokio::test]
async fn thinking_rules_fail_before_sending() {
    let server = TestServer::start([]).await;
    let model = Anthropic::builder()
        .api_key("k")
        .base_url(server.url())
        .model("claude-sonnet-4-5")
        .temperature(0.2)
        .reasoning(ReasoningEffort::High)
        .build()
        .unwrap();
    let history = [toolloop::Message::user("hi")];
    let error = model.complete(ModelRequest::new(&history)).await.unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::InvalidRequest);
    assert!(error.to_string().contains("temperature"), "{error}");
    assert!(server.requests().is_empty(), "nothing was sent");
}

fn responses_answers(rules: &Arc<ResponsesRules>) -> Vec<Answer> {
    let turns: Vec<(Vec<Item<'static>>, u64)> = vec![
        (
            vec![
                Item::Reasoning("Look both up at once."),
                Item::FunctionCall("call_1", "population", json!({"city": "Paris"})),
                Item::FunctionCall("call_2", "population", json!({"city": "Berlin"})),
            ],
            64,
        ),
        (
            vec![
                Item::Reasoning("Paris first."),
                Item::FunctionCall("call_3", "final_output", json!({"largest": "Paris"})),
            ],
            32,
        ),
        (
            vec![
                Item::Reasoning(""),
                Item::Message("Checking Rome."),
                Item::FunctionCall("call_5", "population", json!({"city": "Rome"})),
            ],
            16,
        ),
        (
            vec![
                Item::Reasoning("Berlin."),
                Item::FunctionCall("call_4", "final_output", json!({"largest": "Berlin"})),
            ],
            8,
        ),
    ];
    turns
        .into_iter()
        .map(|(items, tokens)| {
            let rules = Arc::clone(rules);
            Box::new(move |request: &Value| rules.respond_to(request, &items, tokens)) as Answer
        })
        .collect()
}

#[tokio::test]
async fn responses_reasoning_loop_saved_resumed_and_continued() {
    let rules = Arc::new(ResponsesRules::new());
    let checker = Arc::clone(&rules);
    let server = TestServer::start_with(fake(
        move |body| checker.check(body).map_err(|rejection| rejection.reply()),
        responses_answers(&rules),
    ))
    .await;
    let model = reasoning_gpt(&server);
    assert_eq!(model.endpoint(), format!("{}/responses", server.url()));
    let (report, conversation) = run_saved_and_resumed(model).await;
    assert_eq!(report.largest, "Berlin");

    let requests = server.requests();
    assert_eq!(requests.len(), 4, "every request passed the fake's rules");
    for request in &requests {
        let body = request.json();
        assert_eq!(body["store"], json!(false));
        assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
        assert_eq!(body["reasoning"], json!({"effort": "high", "summary": "auto"}));
        assert_eq!(body["instructions"], "Compare cities.");
    }
    let last = requests.last().unwrap().json();
    let kinds: Vec<&str> = last["input"].as_array().unwrap().iter().map(|i| i["type"].as_str().unwrap()).collect();
    assert_eq!(
        &kinds[..6],
        ["message", "reasoning", "function_call", "function_call", "function_call_output", "function_call_output"]
    );
    let summaries: Vec<String> = conversation.messages().iter().map(toolloop::Message::reasoning_text).collect();
    assert!(summaries.iter().any(|text| text.contains("Look both up at once.")));
}

/// The same loop streamed over the Responses API: reasoning items with
/// their encrypted content are accumulated from the stream and sent back,
/// each before the items that followed it (the fake checks the seals).
#[tokio::test]
async fn responses_reasoning_loop_streamed() {
    let rules = Arc::new(ResponsesRules::new());
    let checker = Arc::clone(&rules);
    let server = TestServer::start_with(streaming_fake(
        move |body| checker.check(body).map_err(|rejection| rejection.reply()),
        responses_answers(&rules),
        streamed::responses,
    ))
    .await;
    let model = reasoning_gpt(&server);
    let mut conversation = Conversation::new();
    conversation.push_user("Which is larger, Paris or Berlin?");
    let (reasoning, report) = run_streamed(&agent(model, None), &mut conversation).await;
    assert_eq!(report.largest, "Berlin");
    assert!(reasoning.contains("Look both up at once."), "{reasoning}");
    let requests = server.requests();
    assert_eq!(requests.len(), 4, "every request passed the fake's rules");
    assert!(requests.iter().all(|request| request.json()["stream"] == json!(true)));
    let kept = conversation.messages().iter().flat_map(toolloop::Message::reasoning).count();
    assert_eq!(kept, 4, "every reasoning item is kept in the conversation");
}

#[tokio::test]
async fn responses_rejects_dropped_reasoning_and_reports_reasoning_tokens() {
    let rules = Arc::new(ResponsesRules::new());
    let checker = Arc::clone(&rules);
    let server = TestServer::start_with(fake(
        move |body| checker.check(body).map_err(|rejection| rejection.reply()),
        responses_answers(&rules),
    ))
    .await;
    let model = OpenAiResponses::builder().api_key("k").base_url(server.url()).model("gpt-5.1").build().unwrap();
    let tools = agent_tools();
    let mut conversation = Conversation::new();
    conversation.push_user("Which is larger?");
    let first = model.complete(ModelRequest::new(conversation.messages()).with_tools(&tools)).await.unwrap();
    assert_eq!(first.usage.reasoning_tokens, 64);
    assert_eq!(first.reasoning_text(), "Look both up at once.");
    let mut message = first.to_message(model.provider());
    // Drop the reasoning item: the calls that followed it lose it.
    message.content.retain(|block| !matches!(block, toolloop::ContentBlock::Reasoning(_)));
    conversation.push(message);
    conversation.push(toolloop::Message::from_tool_results([
        toolloop::ToolResult::success("call_1", "2.1"),
        toolloop::ToolResult::success("call_2", "3.7"),
    ]));
    let error = model.complete(ModelRequest::new(conversation.messages()).with_tools(&tools)).await.unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::InvalidRequest);
    assert!(error.to_string().contains("without its required 'reasoning' item"), "{error}");
}

#[tokio::test]
async fn one_conversation_switches_anthropic_then_responses_then_ollama() {
    let anthropic_rules = Arc::new(AnthropicRules::new());
    let checker = Arc::clone(&anthropic_rules);
    let anthropic_server = TestServer::start_with(fake(
        move |body| checker.check(body).map_err(|rejection| rejection.reply()),
        anthropic_answers(&anthropic_rules).into_iter().take(1).collect(),
    ))
    .await;
    let responses_rules = Arc::new(ResponsesRules::new());
    let checker = Arc::clone(&responses_rules);
    let responses_server = TestServer::start_with(fake(
        move |body| checker.check(body).map_err(|rejection| rejection.reply()),
        responses_answers(&responses_rules).into_iter().skip(1).take(1).collect(),
    ))
    .await;
    let ollama_server =
        TestServer::start([replies::ollama::tool_calls(&[("final_output", json!({"largest": "Berlin"}))])]).await;

    let anthropic = Anthropic::builder()
        .api_key("k")
        .base_url(anthropic_server.url())
        .model("claude-sonnet-4-5")
        .reasoning(ReasoningConfig::new(ReasoningEffort::Low).with_budget_tokens(1024))
        .build()
        .unwrap();
    let responses = OpenAi::responses()
        .api_key("k")
        .base_url(responses_server.url())
        .reasoning(ReasoningEffort::Medium)
        .build()
        .unwrap();
    let ollama = Ollama::builder().base_url(ollama_server.url()).reasoning(ReasoningEffort::High).build().unwrap();

    let mut conversation = Conversation::new();
    conversation.push_user("Which is larger, Paris or Berlin?");
    let first = agent(anthropic, Some(1)).run(&mut conversation).await;
    assert!(first.is_err(), "stopped after one call");
    let second = agent(responses, Some(1)).run(&mut conversation).await;
    assert!(second.is_err(), "stopped after one call");
    let done = agent(ollama, None).run(&mut conversation).await.unwrap();
    assert_eq!(done.output.largest, "Berlin");

    // Responses saw no Anthropic thinking and the Anthropic calls as text.
    let sent = responses_server.requests()[0].json();
    let input = sent["input"].as_array().unwrap();
    assert!(input.iter().all(|item| item["type"] != "reasoning" && item["type"] != "function_call"));
    assert!(sent.to_string().contains("[called tool `population`"));
    // Ollama saw no encrypted reasoning, and was asked to think.
    let sent = ollama_server.requests()[0].json();
    assert_eq!(sent["think"], json!(true));
    assert!(!sent.to_string().contains("gAAAA"));
    assert!(!sent.to_string().contains("redacted_thinking"));
    // The raw history kept everything.
    assert!(conversation.messages().iter().any(|m| m.reasoning().any(|r| r.opaque_provider().is_some())));
}

#[tokio::test]
async fn chat_completions_sends_reasoning_effort_and_reads_reasoning_content() {
    let reply = json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "deepseek-reasoner",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": "Berlin.", "reasoning_content": "3.7 > 2.1, so Berlin."
        }}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 30, "completion_tokens_details": {"reasoning_tokens": 25}}
    });
    let server = TestServer::start([Reply::json(200, &reply), Reply::json(200, &reply)]).await;
    let model = OpenAi::builder()
        .api_key("k")
        .base_url(server.url())
        .model("o4-mini")
        .reasoning(ReasoningEffort::High)
        .build()
        .unwrap();
    let mut conversation = Conversation::new();
    conversation.push_user("Which is larger?");
    let response = model.complete(ModelRequest::new(conversation.messages())).await.unwrap();
    assert_eq!(response.reasoning_text(), "3.7 > 2.1, so Berlin.");
    assert_eq!((response.usage.output_tokens, response.usage.reasoning_tokens), (30, 25));
    conversation.push(response.to_message(model.provider()));
    conversation.push_user("Sure?");
    // Chat Completions takes no reasoning back: the next request leaves it out.
    model.complete(ModelRequest::new(conversation.messages())).await.unwrap();
    let requests = server.requests();
    assert_eq!(requests[0].json()["reasoning_effort"], "high");
    let second = requests[1].json();
    assert_eq!(second["messages"][1], json!({"role": "assistant", "content": "Berlin."}));
}

#[tokio::test]
async fn ollama_sends_think_and_gives_its_thinking_back() {
    let reply = json!({
        "model": "qwen3", "created_at": "2025-01-01T00:00:00Z", "done": true, "done_reason": "stop",
        "message": {"role": "assistant", "content": "Berlin.", "thinking": "3.7 > 2.1."},
        "prompt_eval_count": 10, "eval_count": 5
    });
    let server =
        TestServer::start([Reply::json(200, &reply), Reply::json(200, &reply), Reply::json(200, &reply)]).await;
    let model =
        Ollama::builder().base_url(server.url()).model("qwen3").reasoning(ReasoningEffort::Medium).build().unwrap();
    let mut conversation = Conversation::new();
    conversation.push_user("Which is larger?");
    let response = model.complete(ModelRequest::new(conversation.messages())).await.unwrap();
    assert_eq!(response.reasoning_text(), "3.7 > 2.1.");
    conversation.push(response.to_message(model.provider()));
    conversation.push_user("Sure?");
    model.complete(ModelRequest::new(conversation.messages())).await.unwrap();
    let requests = server.requests();
    assert_eq!(requests[0].json()["think"], json!(true));
    assert_eq!(
        requests[1].json()["messages"][1],
        json!({"role": "assistant", "content": "Berlin.", "thinking": "3.7 > 2.1."})
    );
    // Off is sent as `false`, so a thinking model answers straight away.
    let off = model.with_reasoning(ReasoningEffort::Off);
    let history = [toolloop::Message::user("hi")];
    off.complete(ModelRequest::new(&history)).await.unwrap();
    assert_eq!(server.requests()[2].json()["think"], json!(false));
}

#[tokio::test]
async fn a_fallback_to_responses_keeps_its_reasoning_across_the_loop() {
    // The primary is overloaded on every call; Responses answers the whole loop.
    let overloaded = json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    let down = TestServer::start_with(move |_| Reply::json(529, &overloaded)).await;
    let rules = Arc::new(ResponsesRules::new());
    let checker = Arc::clone(&rules);
    let up = TestServer::start_with(fake(
        move |body| checker.check(body).map_err(|rejection| rejection.reply()),
        responses_answers(&rules),
    ))
    .await;
    let primary = Anthropic::builder()
        .api_key("k")
        .base_url(down.url())
        .retry_policy(toolloop::providers::RetryPolicy::none())
        .reasoning(ReasoningEffort::Medium)
        .build()
        .unwrap();
    let secondary = OpenAi::responses()
        .api_key("k")
        .base_url(up.url())
        .model("gpt-5.1")
        .reasoning(ReasoningEffort::Medium)
        .build()
        .unwrap();
    let model = toolloop::providers::Fallback::new(primary).then(secondary);
    let mut conversation = Conversation::new();
    conversation.push_user("Which is larger, Paris or Berlin?");
    let done = agent(model, None).run(&mut conversation).await.unwrap();
    assert_eq!(done.output.largest, "Berlin");
    assert_eq!(up.requests().len(), 4, "every request passed the fake's rules");
    assert_eq!(down.requests().len(), 4);
    assert_eq!(done.metadata.usage.reasoning_tokens, 64 + 32 + 16 + 8);
    assert!(conversation.messages()[1].provider.as_deref() == Some("openai-responses"));
}
