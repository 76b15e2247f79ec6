//! Cassettes over every wire (Gemini's too), streamed and not: the city agent runs
//! against a local fake that enforces the API's rules (as a real API
//! would), recording; then the fake is stopped (its runtime dropped) and
//! the same agent replays the cassette with no key, reaching the same
//! conversation byte for byte. Signed thinking and encrypted reasoning go
//! back exactly as recorded (the fakes verify them while recording; the
//! replay matches every request against the recorded one). Also: secrets
//! never reach the file, a changed request fails with a diff by JSON
//! pointer, unplayed interactions fail the test unless allowed, a missing
//! cassette says how to record it, and a recorded retry replays.

#![allow(clippy::unused_async)] // tool handlers are async by contract

use std::collections::VecDeque;
use std::future::Future;
use std::io::ErrorKind;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolloop::providers::RetryPolicy;
use toolloop::providers::anthropic::Anthropic;
use toolloop::providers::gemini::Gemini;
use toolloop::providers::ollama::Ollama;
use toolloop::providers::openai::OpenAi;
use toolloop::reasoning::{ReasoningConfig, ReasoningEffort, ReasoningSummary};
use toolloop::run::Event;
use toolloop::testing::Cassette;
use toolloop::{Conversation, Model};
use toolloop_workspace::anthropic_rules::{AnthropicRules, Block};
use toolloop_workspace::gemini_rules::{GeminiRules, Part};
use toolloop_workspace::responses_rules::{Item, ResponsesRules};
use toolloop_workspace::{RecordedRequest, Reply, TestServer, streamed};

mod cities;

/// The key the recording models send; it must never reach a file.
const CANARY_KEY: &str = "sk-canary-5f1e9b7c0d2a4e8f";

const QUESTION: &str = "Which is larger, Paris or Berlin?";

/// A fresh path for a test's cassette (no file yet).
fn cassette_path(name: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cassettes").join(format!("{name}.json"));
    let _ = std::fs::remove_file(&path);
    path
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

/// What one run of the agent gave.
struct Run {
    largest: String,
    conversation: Conversation,
}

/// Runs the city agent on `model` to its output, streamed or not.
async fn run_agent(model: impl Model + 'static, streamed: bool) -> Run {
    let agent = cities::agent(model, None);
    let mut conversation = Conversation::new();
    conversation.push_user(QUESTION);
    let largest = if streamed {
        let mut events = agent.run_stream(&mut conversation);
        while let Some(event) = events.next().await {
            if let Event::ModelCallDiscarded { error, .. } = event {
                panic!("a model call failed: {error}");
            }
        }
        events.output().await.unwrap().output.largest
    } else {
        agent.run(&mut conversation).await.unwrap().output.largest
    };
    Run { largest, conversation }
}

/// A server handler: a fake API.
type Fake = Box<dyn Fn(&RecordedRequest) -> Reply + Send + Sync>;

/// Records `run` against a server running `fake` (with the canary key),
/// stops the server, then replays `run` with no key. Returns both runs and
/// the requests the server received, and the cassette's text.
fn record_and_replay<M, F>(
    name: &str,
    fake: Fake,
    model: impl Fn(&str, Option<&str>, &Cassette) -> M,
    run: impl Fn(M) -> F,
) -> (Run, Run, Vec<RecordedRequest>, String)
where
    F: Future<Output = Run>,
{
    let path = cassette_path(name);
    let recording = runtime();
    let (url, recorded, requests) = recording.block_on(async {
        let server = TestServer::start_with(fake).await;
        let cassette = Cassette::record(&path).unwrap();
        let recorded = run(model(&server.url(), Some(CANARY_KEY), &cassette)).await;
        assert_eq!(cassette.played(), server.requests().len());
        cassette.finish().unwrap();
        (server.url(), recorded, server.requests())
    });
    // The server's tasks end with their runtime: nothing listens any more.
    drop(recording);
    let text = std::fs::read_to_string(&path).unwrap();

    let replayed = runtime().block_on(async {
        let cassette = Cassette::replay(&path).unwrap();
        let replayed = run(model(&url, None, &cassette)).await;
        assert_eq!(cassette.played(), requests.len(), "every recorded interaction was played");
        cassette.finish().unwrap();
        replayed
    });
    (recorded, replayed, requests, text)
}

fn assert_same_run(recorded: &Run, replayed: &Run) {
    assert_eq!(recorded.largest, "Berlin");
    assert_eq!(replayed.largest, recorded.largest);
    assert_eq!(replayed.conversation, recorded.conversation, "the replay rebuilds the conversation exactly");
    assert!(replayed.conversation.unanswered_tool_calls().is_empty());
}

fn assert_no_secrets(text: &str) {
    assert!(!text.contains(CANARY_KEY), "the key reached the cassette:\n{text}");
    for header in ["authorization", "x-api-key", "x-goog-api-key", "cookie"] {
        assert!(!text.to_ascii_lowercase().contains(&format!("\"{header}\"")), "`{header}` reached the cassette");
    }
}

/// One success body a fake answers with, made from the request.
type Answer = Box<dyn Fn(&Value) -> Value + Send + Sync>;

/// A fake that checks each request with `check` and answers it with the
/// next of `answers`, as a stream (`events`, framed as `content_type`)
/// when the request asks for one.
fn fake(
    check: impl Fn(&Value) -> Result<(), Reply> + Send + Sync + 'static,
    answers: Vec<Answer>,
    events: fn(&Value) -> Vec<Vec<u8>>,
    content_type: &'static str,
) -> Fake {
    let answers = Mutex::new(VecDeque::from(answers));
    Box::new(move |request| {
        let body = request.json();
        if let Err(rejection) = check(&body) {
            return rejection;
        }
        match answers.lock().unwrap().pop_front() {
            Some(answer) if body["stream"] == json!(true) => streamed::reply(content_type, events(&answer(&body))),
            Some(answer) => Reply::json(200, &answer(&body)),
            None => Reply::json(500, &json!({"error": "no more answers"})),
        }
    })
}

// ---- Anthropic: thinking with signatures -------------------------------

fn anthropic_fake() -> Fake {
    let rules = Arc::new(AnthropicRules::new());
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
        vec![Block::Thinking("Berlin."), Block::ToolUse("toolu_4", "final_output", json!({"largest": "Berlin"}))],
    ];
    let answers = turns
        .into_iter()
        .map(|blocks| {
            let rules = Arc::clone(&rules);
            Box::new(move |request: &Value| rules.respond(request, &blocks)) as Answer
        })
        .collect();
    let checker = Arc::clone(&rules);
    fake(move |body| checker.check(body).map_err(|r| r.reply()), answers, streamed::anthropic, "text/event-stream")
}

fn thinking_claude(url: &str, key: Option<&str>, cassette: &Cassette) -> Anthropic {
    let mut builder = Anthropic::builder()
        .base_url(url)
        .model("claude-sonnet-4-5")
        .max_tokens(8192)
        .reasoning(ReasoningConfig::new(ReasoningEffort::Medium).with_budget_tokens(2048))
        .cassette(cassette);
    if let Some(key) = key {
        builder = builder.api_key(key);
    }
    builder.build().unwrap()
}

fn anthropic_thinking(streamed: bool) {
    let name = format!("anthropic_thinking_streamed_{streamed}");
    let (recorded, replayed, requests, text) =
        record_and_replay(&name, anthropic_fake(), thinking_claude, |model| run_agent(model, streamed));
    assert_same_run(&recorded, &replayed);
    assert_eq!(requests.len(), 3, "every request passed the fake's signature checks");
    assert_eq!(requests[0].header("x-api-key"), Some(CANARY_KEY), "the key was sent to the API");
    assert_no_secrets(&text);
    let file: Value = serde_json::from_str(&text).unwrap();
    let first = &file["interactions"][0];
    assert_eq!(first["request"]["headers"]["anthropic-version"], "2023-06-01");
    assert_eq!(first["request"]["body"]["messages"][0]["content"][0]["text"], QUESTION);
    // The signature the fake issued is in the cassette and was sent back.
    let signature = AnthropicRules::new().sign("Two cities: look both up at once.", 1, 0);
    assert!(text.contains(&signature));
    assert!(requests[1].json()["messages"][1]["content"][0]["signature"] == json!(signature));
    if streamed {
        let events = first["response"]["events"].as_array().unwrap();
        assert_eq!(events[0]["event"], "message_start");
        assert!(events.iter().any(|event| event["data"]["delta"]["type"] == "signature_delta"));
        assert_eq!(events.last().unwrap()["event"], "message_stop");
    } else {
        assert_eq!(first["response"]["body"]["content"][0]["signature"], json!(signature));
    }
}

#[test]
fn anthropic_thinking_loop_records_and_replays() {
    anthropic_thinking(false);
}

#[test]
fn anthropic_thinking_loop_streamed_records_and_replays() {
    anthropic_thinking(true);
}

// ---- OpenAI Responses: encrypted reasoning ----------------------------

fn responses_fake() -> Fake {
    let rules = Arc::new(ResponsesRules::new());
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
            vec![Item::Reasoning("Paris."), Item::FunctionCall("call_3", "final_output", json!({"largest": "Paris"}))],
            32,
        ),
        (
            vec![
                Item::Reasoning("Berlin."),
                Item::FunctionCall("call_4", "final_output", json!({"largest": "Berlin"})),
            ],
            8,
        ),
    ];
    let answers = turns
        .into_iter()
        .map(|(items, tokens)| {
            let rules = Arc::clone(&rules);
            Box::new(move |request: &Value| rules.respond_to(request, &items, tokens)) as Answer
        })
        .collect();
    let checker = Arc::clone(&rules);
    fake(move |body| checker.check(body).map_err(|r| r.reply()), answers, streamed::responses, "text/event-stream")
}

fn reasoning_gpt(url: &str, key: Option<&str>, cassette: &Cassette) -> toolloop::providers::openai::OpenAiResponses {
    let mut builder = OpenAi::responses()
        .base_url(url)
        .model("gpt-5.1")
        .reasoning(ReasoningConfig::new(ReasoningEffort::High).with_summary(ReasoningSummary::Auto))
        .cassette(cassette);
    if let Some(key) = key {
        builder = builder.api_key(key);
    }
    builder.build().unwrap()
}

fn responses_reasoning(streamed: bool) {
    let name = format!("responses_reasoning_streamed_{streamed}");
    let (recorded, replayed, requests, text) =
        record_and_replay(&name, responses_fake(), reasoning_gpt, |model| run_agent(model, streamed));
    assert_same_run(&recorded, &replayed);
    assert_eq!(requests.len(), 3, "every request passed the fake's reasoning checks");
    assert_eq!(requests[0].header("authorization"), Some(format!("Bearer {CANARY_KEY}").as_str()));
    assert_no_secrets(&text);
    // The encrypted reasoning went back as recorded.
    let sealed = requests[1].json()["input"][1]["encrypted_content"].clone();
    assert!(sealed.is_string());
    assert!(text.contains(sealed.as_str().unwrap()));
    let kept = replayed.conversation.messages().iter().flat_map(toolloop::Message::reasoning).count();
    assert_eq!(kept, 3);
}

#[test]
fn responses_reasoning_loop_records_and_replays() {
    responses_reasoning(false);
}

#[test]
fn responses_reasoning_loop_streamed_records_and_replays() {
    responses_reasoning(true);
}

// ---- Gemini: thought signatures ----------------------------------------

/// The Gemini fake: it signs each response's first function call and
/// rejects a request whose signatures are missing or not byte for byte the
/// ones it issued; the model and the method (streamed or not) are in the path.
fn gemini_fake() -> Fake {
    let rules = GeminiRules::new();
    let turns: Mutex<VecDeque<Vec<Part<'static>>>> = Mutex::new(VecDeque::from([
        vec![
            Part::Thought("Two cities: look both up at once."),
            Part::Call("population", json!({"city": "Paris"})),
            Part::Call("population", json!({"city": "Berlin"})),
        ],
        vec![Part::Thought("Paris first, I think."), Part::Call("final_output", json!({"largest": "Paris"}))],
        vec![Part::Thought("Berlin."), Part::Call("final_output", json!({"largest": "Berlin"}))],
    ]));
    Box::new(move |request| {
        // Checked before a turn is taken, so a rejected request uses none.
        if let Err(rejection) = rules.admit(request) {
            return rejection.reply();
        }
        match turns.lock().unwrap().pop_front() {
            Some(parts) => rules.reply(request, &parts),
            None => {
                Reply::json(500, &json!({"error": {"code": 500, "message": "no more answers", "status": "INTERNAL"}}))
            }
        }
    })
}

fn thinking_gemini(url: &str, key: Option<&str>, cassette: &Cassette) -> Gemini {
    let mut builder = Gemini::builder()
        .base_url(url)
        .model("gemini-3-pro-preview")
        .reasoning(ReasoningConfig::new(ReasoningEffort::High).with_summary(ReasoningSummary::Auto))
        .cassette(cassette);
    if let Some(key) = key {
        builder = builder.api_key(key);
    }
    builder.build().unwrap()
}

fn gemini_thinking(streamed: bool) {
    let name = format!("gemini_thinking_streamed_{streamed}");
    let (recorded, replayed, requests, text) =
        record_and_replay(&name, gemini_fake(), thinking_gemini, |model| run_agent(model, streamed));
    assert_same_run(&recorded, &replayed);
    assert_eq!(requests.len(), 3, "every request passed the fake's signature checks");
    assert_eq!(requests[0].header("x-goog-api-key"), Some(CANARY_KEY), "the key was sent to the API");
    let method = if streamed { "streamGenerateContent?alt=sse" } else { "generateContent" };
    assert!(requests.iter().all(|r| r.path == format!("/v1beta/models/gemini-3-pro-preview:{method}")));
    assert_no_secrets(&text);
    let file: Value = serde_json::from_str(&text).unwrap();
    let first = &file["interactions"][0];
    assert_eq!(first["request"]["body"]["contents"][0]["parts"][0]["text"], QUESTION);
    assert_eq!(first["request"]["body"]["generationConfig"]["thinkingConfig"]["includeThoughts"], json!(true));
    // The signature the fake issued on the first call went back on that
    // call, byte for byte: it is in the cassette, and the replay sent it
    // again (a replayed request must match the recorded one).
    let sent = requests[1].json();
    let (index, call) = sent["contents"][1]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .find(|(_, part)| part.get("functionCall").is_some())
        .unwrap();
    let signature = call["thoughtSignature"].as_str().expect("the first call is signed");
    assert_eq!(signature, GeminiRules::new().sign(1, index, call));
    assert!(text.contains(signature));
    if streamed {
        let events = first["response"]["events"].as_array().unwrap();
        assert!(events.len() > 2, "{events:?}");
        assert!(events.iter().any(|event| event.to_string().contains(signature)));
    } else {
        let parts = first["response"]["body"]["candidates"][0]["content"]["parts"].to_string();
        assert!(parts.contains(signature), "{parts}");
    }
    let kept = replayed.conversation.messages().iter().flat_map(toolloop::Message::reasoning).count();
    assert!(kept >= 3, "thoughts and signatures are kept in the replayed conversation: {kept}");
}

/// A Vertex AI model replays with no credentials: a token source that
/// cannot give one (no `gcloud` where CI replays) does not fail a call that
/// sends nothing.
#[test]
fn a_vertex_model_replays_without_a_token() {
    let path = cassette_path("vertex_no_token");
    let answer = GeminiRules::new().respond(&json!({"contents": [{}]}), "gemini-3-pro-preview", &[Part::Text("Hi.")]);
    let vertex = |url: &str, source: fn() -> Result<String, String>, cassette: &Cassette| {
        Gemini::builder()
            .vertex("my-project", "us-central1")
            .vertex_token_source(source)
            .base_url(url)
            .model("gemini-3-pro-preview")
            .cassette(cassette)
            .build()
            .unwrap()
    };
    let messages = [toolloop::Message::user("hello")];
    let url = runtime().block_on(async {
        let server = TestServer::start([Reply::json(200, &answer)]).await;
        let cassette = Cassette::record(&path).unwrap();
        let model = vertex(&server.url(), || Ok("ya29.recording".into()), &cassette);
        assert_eq!(model.complete(toolloop::ModelRequest::new(&messages)).await.unwrap().text(), "Hi.");
        cassette.finish().unwrap();
        server.url()
    });
    assert!(!std::fs::read_to_string(&path).unwrap().contains("ya29.recording"));
    runtime().block_on(async {
        let cassette = Cassette::replay(&path).unwrap();
        let model = vertex(&url, || Err("no credentials here".into()), &cassette);
        assert_eq!(model.complete(toolloop::ModelRequest::new(&messages)).await.unwrap().text(), "Hi.");
        cassette.finish().unwrap();
    });
}

#[test]
fn gemini_thinking_loop_records_and_replays() {
    gemini_thinking(false);
}

#[test]
fn gemini_thinking_loop_streamed_records_and_replays() {
    gemini_thinking(true);
}

// ---- OpenAI Chat Completions -------------------------------------------

/// The Chat Completions rule a loop can break: every `tool` message
/// answers a `tool_calls` id of an earlier assistant message.
fn chat_check(body: &Value) -> Result<(), Reply> {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let mut issued = Vec::new();
    for message in &messages {
        if let Some(calls) = message["tool_calls"].as_array() {
            issued.extend(calls.iter().map(|call| call["id"].clone()));
        }
        if message["role"] == "tool" && !issued.contains(&message["tool_call_id"]) {
            let error = json!({"error": {"message": "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", "type": "invalid_request_error", "param": "messages", "code": null}});
            return Err(Reply::json(400, &error));
        }
    }
    Ok(())
}

fn chat_completion(message: Value, finish_reason: &str) -> Answer {
    let finish_reason = finish_reason.to_owned();
    Box::new(move |_| {
        json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1_767_225_600, "model": "gpt-4.1",
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
    })
}

fn chat_call(id: &str, name: &str, arguments: &str) -> Value {
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
}

fn chat_fake() -> Fake {
    let answers = vec![
        chat_completion(
            json!({"role": "assistant", "content": null, "tool_calls": [
                chat_call("call_a", "population", r#"{"city":"Paris"}"#),
                chat_call("call_b", "population", r#"{"city":"Berlin"}"#)]}),
            "tool_calls",
        ),
        chat_completion(
            json!({"role": "assistant", "content": null, "tool_calls": [chat_call("call_c", "final_output", r#"{"largest":"Paris"}"#)]}),
            "tool_calls",
        ),
        chat_completion(
            json!({"role": "assistant", "content": null, "tool_calls": [chat_call("call_d", "final_output", r#"{"largest":"Berlin"}"#)]}),
            "tool_calls",
        ),
    ];
    fake(chat_check, answers, streamed::chat, "text/event-stream")
}

fn gpt(url: &str, key: Option<&str>, cassette: &Cassette) -> OpenAi {
    let mut builder = OpenAi::builder().base_url(url).model("gpt-4.1").cassette(cassette);
    if let Some(key) = key {
        builder = builder.api_key(key);
    }
    builder.build().unwrap()
}

fn chat(streamed: bool) {
    let name = format!("chat_streamed_{streamed}");
    let (recorded, replayed, requests, text) = record_and_replay(&name, chat_fake(), gpt, |m| run_agent(m, streamed));
    assert_same_run(&recorded, &replayed);
    assert_eq!(requests.len(), 3);
    assert_no_secrets(&text);
    let file: Value = serde_json::from_str(&text).unwrap();
    if streamed {
        let events = file["interactions"][0]["response"]["events"].as_array().unwrap();
        assert_eq!(events.last().unwrap(), &json!({"text": "[DONE]"}), "non-JSON data is kept as text");
        assert_eq!(file["interactions"][0]["request"]["headers"]["accept"], "text/event-stream, application/x-ndjson");
    }
}

#[test]
fn chat_completions_record_and_replay() {
    chat(false);
}

#[test]
fn chat_completions_streamed_record_and_replay() {
    chat(true);
}

// ---- Ollama: ids made from the response --------------------------------

/// Ollama's rule here: a `tool` message names a function the assistant called.
fn ollama_check(body: &Value) -> Result<(), Reply> {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let called: Vec<&Value> = messages
        .iter()
        .filter_map(|message| message["tool_calls"].as_array())
        .flatten()
        .map(|call| &call["function"]["name"])
        .collect();
    for message in messages.iter().filter(|message| message["role"] == "tool") {
        if !called.contains(&&message["tool_name"]) {
            return Err(Reply::json(400, &json!({"error": "tool result for a function that was not called"})));
        }
    }
    Ok(())
}

fn ollama_answer(created_at: &'static str, calls: Value) -> Answer {
    Box::new(move |_| {
        json!({"model": "qwen3", "created_at": created_at,
            "message": {"role": "assistant", "content": "", "tool_calls": calls},
            "done_reason": "stop", "done": true, "prompt_eval_count": 10, "eval_count": 5})
    })
}

fn ollama_fake() -> Fake {
    let call = |name: &str, arguments: Value| json!({"function": {"name": name, "arguments": arguments}});
    let answers = vec![
        ollama_answer(
            "2026-11-27T10:00:00.1Z",
            json!([call("population", json!({"city": "Paris"})), call("population", json!({"city": "Berlin"}))]),
        ),
        ollama_answer("2026-11-27T10:00:01.2Z", json!([call("final_output", json!({"largest": "Paris"}))])),
        ollama_answer("2026-11-27T10:00:02.3Z", json!([call("final_output", json!({"largest": "Berlin"}))])),
    ];
    fake(ollama_check, answers, streamed::ollama, "application/x-ndjson")
}

fn qwen(url: &str, key: Option<&str>, cassette: &Cassette) -> Ollama {
    let mut builder = Ollama::builder().base_url(url).model("qwen3").cassette(cassette);
    if let Some(key) = key {
        builder = builder.api_key(key);
    }
    builder.build().unwrap()
}

fn ollama(streamed: bool) {
    let name = format!("ollama_streamed_{streamed}");
    let (recorded, replayed, requests, text) =
        record_and_replay(&name, ollama_fake(), qwen, |m| run_agent(m, streamed));
    assert_same_run(&recorded, &replayed);
    assert_eq!(requests.len(), 3);
    assert_no_secrets(&text);
    // Tool-call ids are made from the response's timestamp: it is kept.
    assert!(text.contains("2026-11-27T10:00:00.1Z"));
    if streamed {
        let file: Value = serde_json::from_str(&text).unwrap();
        let lines = file["interactions"][0]["response"]["lines"].as_array().unwrap();
        assert_eq!(lines.last().unwrap()["data"]["done"], true);
    }
}

#[test]
fn ollama_records_and_replays() {
    ollama(false);
}

#[test]
fn ollama_streamed_records_and_replays() {
    ollama(true);
}

// ---- Secrets, mismatches, unplayed and missing cassettes, retries -------

/// Records a chat agent run (non-streamed) into `name`; its server stops.
fn record_chat(name: &str, calls: Option<u32>) -> (PathBuf, String) {
    let path = cassette_path(name);
    let url = runtime().block_on(async {
        let server = TestServer::start_with(chat_fake()).await;
        let cassette = Cassette::record(&path).unwrap();
        let mut conversation = Conversation::new();
        conversation.push_user(QUESTION);
        let _ = cities::agent(gpt(&server.url(), Some(CANARY_KEY), &cassette), calls).run(&mut conversation).await;
        cassette.finish().unwrap();
        server.url()
    });
    (path, url)
}

/// Replays the chat agent from `cassette` with `question`; the run's
/// error with its causes, if any.
async fn replay_chat(url: &str, cassette: &Cassette, question: &str, calls: Option<u32>) -> Option<String> {
    let mut conversation = Conversation::new();
    conversation.push_user(question);
    let error = cities::agent(gpt(url, None, cassette), calls).run(&mut conversation).await.err()?;
    let mut message = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    Some(message)
}

/// A recording that fails (its test panics: a wrong key, an API error)
/// leaves the cassette that was there as it was, and so does one that
/// recorded nothing; a good recording replaces it whole, with no partial
/// file left beside it.
#[test]
fn a_failed_recording_keeps_the_cassette_it_would_replace() {
    let (path, _) = record_chat("kept_on_failure", None);
    let good = std::fs::read_to_string(&path).unwrap();
    assert!(good.contains("\"interactions\""), "{good}");

    let failed = std::thread::spawn({
        let path = path.clone();
        move || {
            runtime().block_on(async {
                let server = TestServer::start_with(chat_fake()).await;
                let cassette = Cassette::record(&path).unwrap();
                let mut conversation = Conversation::new();
                conversation.push_user("Something else entirely");
                let _ =
                    cities::agent(gpt(&server.url(), Some(CANARY_KEY), &cassette), None).run(&mut conversation).await;
                assert!(cassette.played() > 0, "the run recorded its exchanges");
                panic!("the test failed after recording");
            });
        }
    })
    .join();
    assert!(failed.is_err());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), good, "the failed recording was not written");

    Cassette::record(&path).unwrap().finish().unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), good, "an empty recording leaves the file");

    let (path, _) = record_chat("kept_on_failure", Some(1));
    assert_ne!(std::fs::read_to_string(&path).unwrap(), good, "a finished recording replaces it");
    let partial = path.with_extension("json.partial");
    assert!(!partial.exists(), "no partial file is left: {}", partial.display());
}

/// An extra header that is not a credential (a gateway's `HTTP-Referer`,
/// `openai-beta`) is not a secret to a cassette: the text it also appears
/// in is recorded as it is, and a kept header with a changed value fails
/// the replay.
#[test]
fn headers_that_are_not_credentials_are_recorded_as_they_are() {
    const REFERER: &str = "https://myapp.example";
    let path = cassette_path("plain_headers");
    let model = |url: &str, key: Option<&str>, cassette: &Cassette, beta: &str| {
        let builder = OpenAi::builder().base_url(url).model("gpt-4.1").cassette(cassette);
        let builder = builder.header("HTTP-Referer", REFERER).header("openai-beta", beta);
        key.map_or(builder.clone(), |key| builder.api_key(key)).build().unwrap()
    };
    let question = format!("{QUESTION} Answer for {REFERER}.");
    let url = runtime().block_on(async {
        let server = TestServer::start_with(chat_fake()).await;
        let cassette = Cassette::record(&path).unwrap();
        let mut conversation = Conversation::new();
        conversation.push_user(question.as_str());
        let _ = cities::agent(model(&server.url(), Some(CANARY_KEY), &cassette, "tools=v1"), None)
            .run(&mut conversation)
            .await;
        cassette.finish().unwrap();
        server.url()
    });
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(&format!("Answer for {REFERER}.")), "{text}");
    assert!(text.contains("\"openai-beta\": \"tools=v1\""), "{text}");
    assert!(!text.contains(CANARY_KEY) && !text.contains("<redacted>"), "{text}");

    runtime().block_on(async {
        let replay = |beta: &'static str| {
            let (url, path, question) = (url.clone(), path.clone(), question.clone());
            async move {
                let cassette = Cassette::replay(&path).unwrap().allow_unplayed();
                let mut conversation = Conversation::new();
                conversation.push_user(question.as_str());
                let run = cities::agent(model(&url, None, &cassette, beta), None).run(&mut conversation).await;
                (run.is_ok(), cassette.finish())
            }
        };
        let (ok, finished) = replay("tools=v1").await;
        assert!(ok && finished.is_ok(), "{finished:?}");
        let (ok, finished) = replay("tools=v2").await;
        assert!(!ok);
        let error = finished.unwrap_err().to_string();
        assert!(error.contains("/headers/openai-beta: recorded \"tools=v1\", sent \"tools=v2\""), "{error}");
    });
}

/// A redirect is recorded (its body is never read) and replays as the
/// same typed error.
#[test]
fn a_recorded_redirect_replays_as_a_redirect() {
    let path = cassette_path("redirect");
    let url = runtime().block_on(async {
        let server =
            TestServer::start([Reply::json(307, &json!({})).header("location", "https://elsewhere.example/v1")]).await;
        let cassette = Cassette::record(&path).unwrap();
        let messages = [toolloop::Message::user("hello")];
        let model = gpt(&server.url(), Some(CANARY_KEY), &cassette);
        let error = model.complete(toolloop::ModelRequest::new(&messages)).await.unwrap_err();
        assert_eq!(error.kind(), toolloop::model::ModelErrorKind::Redirect, "{error}");
        cassette.finish().unwrap();
        server.url()
    });
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(file["interactions"][0]["response"]["status"], 307, "{file}");
    runtime().block_on(async {
        let cassette = Cassette::replay(&path).unwrap();
        let messages = [toolloop::Message::user("hello")];
        let error = gpt(&url, None, &cassette).complete(toolloop::ModelRequest::new(&messages)).await.unwrap_err();
        assert_eq!(error.kind(), toolloop::model::ModelErrorKind::Redirect, "{error}");
        cassette.finish().unwrap();
    });
}

/// A header the recording kept but did not see (a beta flag added since)
/// fails the replay: it may change what the API answers.
#[test]
fn a_kept_header_sent_only_now_fails_the_replay() {
    let (path, url) = record_chat("new_header", None);
    let file = std::fs::read_to_string(&path).unwrap();
    assert!(file.contains("\"request_headers\""), "the file says which headers it kept");
    runtime().block_on(async {
        let cassette = Cassette::replay(&path).unwrap();
        let model = OpenAi::builder()
            .base_url(&url)
            .model("gpt-4.1")
            .header("openai-beta", "x")
            .cassette(&cassette)
            .build()
            .unwrap();
        let mut conversation = Conversation::new();
        conversation.push_user(QUESTION);
        assert!(cities::agent(model, None).run(&mut conversation).await.is_err());
        let error = cassette.finish().unwrap_err().to_string();
        assert!(error.contains("/headers/openai-beta: recorded nothing, sent \"x\""), "{error}");
    });
}

/// A response whose body the call gave up on (larger than the model's
/// limit) is not recorded: replaying the part read as a whole response
/// would answer what the recorded run never got.
#[test]
fn a_response_the_call_gave_up_on_is_not_recorded() {
    let path = cassette_path("given_up");
    runtime().block_on(async {
        let server = TestServer::start_with(chat_fake()).await;
        let cassette = Cassette::record(&path).unwrap();
        let model = || {
            let builder = OpenAi::builder().base_url(server.url()).model("gpt-4.1").api_key(CANARY_KEY);
            builder.max_response_bytes(64).cassette(&cassette).build().unwrap()
        };
        let mut conversation = Conversation::new();
        conversation.push_user(QUESTION);
        let error = cities::agent(model(), None).run(&mut conversation).await.unwrap_err();
        assert!(
            error.to_string().contains("response_too_large") || format!("{error:?}").contains("ResponseTooLarge"),
            "{error:?}"
        );
        assert_eq!(cassette.played(), 0, "nothing recorded");
        // The same streamed: the events read before the limit are not a whole stream either.
        let messages = [toolloop::Message::user(QUESTION)];
        let streamed =
            toolloop::ModelResponse::from_stream(model().stream(toolloop::ModelRequest::new(&messages))).await;
        assert!(streamed.is_err(), "{streamed:?}");
        assert_eq!(cassette.played(), 0, "nothing recorded");
        cassette.finish().unwrap();
    });
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(file["interactions"], json!([]), "{file}");
}

/// Runs sharing one cassette may replay in another order than they were
/// recorded in (concurrent runs do): each request finds the first
/// exchange not played yet that matches it.
#[test]
fn runs_sharing_a_cassette_replay_in_any_order() {
    let path = cassette_path("shared");
    let questions = ["Which is larger, Paris or Berlin?", "Which is larger, Rome or Berlin?"];
    let url = runtime().block_on(async {
        let cassette = Cassette::record(&path).unwrap();
        let mut url = String::new();
        for question in questions {
            // A fake of its own per run (it answers one script); origins are not matched.
            let server = TestServer::start_with(chat_fake()).await;
            let mut conversation = Conversation::new();
            conversation.push_user(question);
            let run = cities::agent(gpt(&server.url(), Some(CANARY_KEY), &cassette), None).run(&mut conversation).await;
            assert!(run.is_ok(), "{question}");
            url = server.url();
        }
        cassette.finish().unwrap();
        url
    });
    runtime().block_on(async {
        let cassette = Cassette::replay(&path).unwrap();
        for question in questions.iter().rev() {
            assert_eq!(replay_chat(&url, &cassette, question, None).await, None, "{question}");
        }
        cassette.finish().unwrap();
    });
}

#[test]
fn secrets_never_reach_the_cassette() {
    const HEADER_CANARY: &str = "goog-canary-8c1d2e3f4a5b";
    const GATEWAY_CANARY: &str = "gateway-canary-0a9b8c7d";
    const PASSWORD_CANARY: &str = "pass-canary-77e6d5c4";
    let path = cassette_path("secrets");
    let echo = format!("I saw {CANARY_KEY} and {GATEWAY_CANARY}");
    let requests = runtime().block_on(async {
        let server = TestServer::start_with({
            let echo = echo.clone();
            move |request: &RecordedRequest| {
                let answer = chat_completion(json!({"role": "assistant", "content": echo}), "stop")(&json!({}));
                let answer = if request.json()["stream"] == json!(true) {
                    streamed::reply("text/event-stream", streamed::chat(&answer))
                } else {
                    Reply::json(200, &answer)
                };
                answer.header("x-request-id", "req_5e0b1a2c")
            }
        })
        .await;
        let cassette = Cassette::record(&path).unwrap();
        let url = server.url().replace("http://", &format!("http://user:{PASSWORD_CANARY}@"));
        let model = OpenAi::builder()
            .base_url(url)
            .api_key(CANARY_KEY)
            .header("x-goog-api-key", HEADER_CANARY)
            .header("x-gateway-token", GATEWAY_CANARY)
            .cassette(&cassette)
            .build()
            .unwrap();
        let messages = [toolloop::Message::user("hello")];
        let answer = model.complete(toolloop::ModelRequest::new(&messages)).await.unwrap();
        assert_eq!(answer.text(), echo, "the caller sees the answer as sent");
        let streamed =
            toolloop::ModelResponse::from_stream(model.stream(toolloop::ModelRequest::new(&messages))).await.unwrap();
        assert_eq!(streamed.text(), echo);
        cassette.finish().unwrap();
        server.requests()
    });
    // Every secret went to the API...
    let sent = &requests[0];
    assert_eq!(sent.header("authorization"), Some(format!("Bearer {CANARY_KEY}").as_str()));
    assert_eq!(sent.header("x-goog-api-key"), Some(HEADER_CANARY));
    assert_eq!(sent.header("x-gateway-token"), Some(GATEWAY_CANARY));
    // ... and none reached the file, not even echoed back in a body.
    let text = std::fs::read_to_string(&path).unwrap();
    for canary in [CANARY_KEY, HEADER_CANARY, GATEWAY_CANARY, PASSWORD_CANARY, "req_5e0b1a2c", "x-gateway-token"] {
        assert!(!text.contains(canary), "`{canary}` reached the cassette:\n{text}");
    }
    assert_no_secrets(&text);
    let file: Value = serde_json::from_str(&text).unwrap();
    let first = &file["interactions"][0];
    assert!(!first["request"]["url"].as_str().unwrap().contains('@'), "the URL's userinfo is dropped");
    assert_eq!(first["response"]["headers"]["x-request-id"], "<normalised>");
    assert_eq!(first["response"]["body"]["choices"][0]["message"]["content"], "I saw <redacted> and <redacted>");
    assert_eq!(file["interactions"].as_array().unwrap().len(), 2);
}

#[test]
fn a_changed_request_fails_with_a_diff_by_json_pointer() {
    let (path, url) = record_chat("mismatch", None);
    runtime().block_on(async {
        let cassette = Cassette::replay(&path).unwrap();
        let error = replay_chat(&url, &cassette, "Which is larger, Rome or Berlin?", None).await.unwrap();
        assert!(error.contains("request 1 does not match the one recorded in the cassette"), "{error}");
        assert!(
            error.contains(
                "/body/messages/1/content: recorded \"Which is larger, Paris or Berlin?\", sent \"Which is larger, \
                 Rome or Berlin?\""
            ),
            "{error}"
        );
        let error = cassette.finish().unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidInput, "{error}");
        let message = error.to_string();
        let (first, differences) = message.split_once('\n').unwrap();
        assert!(first.starts_with("request 1 does not match"), "{error}");
        assert_eq!(
            differences,
            format!(
                "  /body/messages/1/content: recorded {}, sent \"Which is larger, Rome or Berlin?\"",
                json!(QUESTION)
            )
        );

        // Told to ignore that field, the replay serves the recorded answers.
        let cassette = Cassette::replay(&path).unwrap().ignore_pointer("/body/messages/1/content");
        assert_eq!(replay_chat(&url, &cassette, "Which is larger, Rome or Berlin?", None).await, None);
        cassette.finish().unwrap();
    });
}

#[test]
fn unplayed_interactions_fail_unless_allowed() {
    let (path, url) = record_chat("unplayed", None);
    runtime().block_on(async {
        let cassette = Cassette::replay(&path).unwrap();
        assert!(replay_chat(&url, &cassette, QUESTION, Some(1)).await.is_some(), "the run stops at its call limit");
        let error = cassette.finish().unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Other, "{error}");
        assert!(error.to_string().contains("recorded 3 interactions but only 1 were played"), "{error}");
        assert!(error.to_string().contains("allow_unplayed()"), "{error}");

        let cassette = Cassette::replay(&path).unwrap().allow_unplayed();
        let _ = replay_chat(&url, &cassette, QUESTION, Some(1)).await;
        cassette.finish().unwrap();
    });
}

#[test]
#[should_panic(expected = "recorded 3 interactions but only 1 were played")]
fn a_dropped_cassette_fails_the_test_when_interactions_were_left() {
    let (path, url) = record_chat("unplayed_dropped", None);
    runtime().block_on(async {
        let cassette = Cassette::replay(&path).unwrap();
        let _ = replay_chat(&url, &cassette, QUESTION, Some(1)).await;
    });
}

#[test]
fn more_requests_than_recorded_fail_with_how_to_re_record() {
    let (path, url) = record_chat("exhausted", Some(1));
    runtime().block_on(async {
        let cassette = Cassette::replay(&path).unwrap();
        let error = replay_chat(&url, &cassette, QUESTION, None).await.unwrap();
        assert!(error.contains("request 2 was made, but the cassette") && error.contains("recorded only 1"), "{error}");
        let error = cassette.finish().unwrap_err();
        assert_eq!(error.kind(), ErrorKind::UnexpectedEof, "{error}");
        assert!(error.to_string().contains("recorded only 1"), "{error}");
    });
}

#[test]
fn a_missing_cassette_says_how_to_record_it() {
    let path = cassette_path("never_recorded");
    let error = Cassette::replay(&path).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::NotFound);
    let message = error.to_string();
    assert!(message.contains("never_recorded.json") && message.contains("TOOLLOOP_RECORD=1"), "{message}");
}

#[test]
fn a_recorded_retry_replays() {
    let path = cassette_path("retry");
    let retries = RetryPolicy::default()
        .with_max_retries(2)
        .with_initial_backoff(std::time::Duration::from_millis(1))
        .with_max_backoff(std::time::Duration::from_millis(2));
    let model = move |url: &str, key: Option<&str>, cassette: &Cassette| {
        let mut builder = OpenAi::builder().base_url(url).retry_policy(retries).cassette(cassette);
        if let Some(key) = key {
            builder = builder.api_key(key);
        }
        builder.build().unwrap()
    };
    let limited =
        json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}});
    let url = runtime().block_on(async {
        let answer = chat_completion(json!({"role": "assistant", "content": "hi"}), "stop")(&json!({}));
        let server =
            TestServer::start([Reply::json(429, &limited).header("retry-after-ms", "1"), Reply::json(200, &answer)])
                .await;
        let cassette = Cassette::record(&path).unwrap();
        let messages = [toolloop::Message::user("hello")];
        let recording = model(&server.url(), Some(CANARY_KEY), &cassette);
        assert_eq!(recording.complete(toolloop::ModelRequest::new(&messages)).await.unwrap().text(), "hi");
        cassette.finish().unwrap();
        server.url()
    });
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(file["interactions"][0]["response"]["status"], 429);
    assert_eq!(file["interactions"][0]["response"]["headers"]["retry-after-ms"], "1");
    // Replayed on a paused clock with a slow policy: the retry waits for
    // nothing (no server is there; the recorded `retry-after-ms` would
    // otherwise be waited), so no time passes.
    let paused = tokio::runtime::Builder::new_current_thread().enable_all().start_paused(true).build().unwrap();
    paused.block_on(async {
        let cassette = Cassette::replay(&path).unwrap();
        let messages = [toolloop::Message::user("hello")];
        let slow = RetryPolicy::default()
            .with_max_retries(2)
            .with_initial_backoff(std::time::Duration::from_secs(60))
            .with_max_backoff(std::time::Duration::from_secs(60));
        let replaying = OpenAi::builder().base_url(&url).retry_policy(slow).cassette(&cassette).build().unwrap();
        let started = tokio::time::Instant::now();
        let reply = replaying.complete(toolloop::ModelRequest::new(&messages)).await.unwrap();
        assert_eq!(started.elapsed(), std::time::Duration::ZERO, "a replayed retry waited");
        assert_eq!(reply.text(), "hi");
        assert_eq!(cassette.played(), 2, "the 429 and the retry that succeeded");
        cassette.finish().unwrap();
    });
}

/// Run in a child process by [`the_record_variable_switches_cassettes_to_recording`]
/// with `TOOLLOOP_RECORD` set as it says: prints the mode `Cassette::open`
/// reads from it (replay finds no file at the path it is given).
#[test]
#[ignore = "a helper: run in a child process with TOOLLOOP_RECORD set"]
fn report_the_mode_from_the_environment() {
    let path = std::env::temp_dir().join(format!("toolloop-mode-{}.json", std::process::id()));
    let mode = match Cassette::open(&path) {
        Ok(cassette) if cassette.is_recording() => "Record",
        Ok(_) => "Replay (a file was there)",
        Err(error) if error.kind() == ErrorKind::NotFound => "Replay",
        Err(error) => panic!("{error}"),
    };
    let _ = std::fs::remove_file(&path);
    println!("mode={mode}");
}

#[test]
fn the_record_variable_switches_cassettes_to_recording() {
    let mode_with = |value: Option<&str>| {
        let mut child = std::process::Command::new(std::env::current_exe().unwrap());
        child.args(["--exact", "report_the_mode_from_the_environment", "--include-ignored", "--nocapture"]);
        match value {
            Some(value) => child.env(toolloop::testing::RECORD_VARIABLE, value),
            None => child.env_remove(toolloop::testing::RECORD_VARIABLE),
        };
        let output = child.output().unwrap();
        assert!(output.status.success(), "{output:?}");
        let stdout = String::from_utf8(output.stdout).unwrap();
        stdout.lines().find_map(|line| line.strip_prefix("mode=")).unwrap().to_owned()
    };
    assert_eq!(mode_with(Some("1")), "Record");
    assert_eq!(mode_with(Some("true")), "Record");
    assert_eq!(mode_with(Some("0")), "Replay");
    assert_eq!(mode_with(None), "Replay");
}

/// A server that sends tool calls without ids (some OpenAI-compatible
/// servers): toolloop makes unique ids of its own, from the clock, so they
/// differ between the recording and the replay. The mismatch names them;
/// ignoring those fields replays the run.
#[test]
fn ids_made_up_for_calls_without_ids_can_be_ignored() {
    let fake = || {
        let no_id = |name: &str, arguments: &str| json!({"type": "function", "function": {"name": name, "arguments": arguments}});
        let calls = |calls: Vec<Value>| json!({"role": "assistant", "content": null, "tool_calls": calls});
        fake(
            chat_check,
            vec![
                chat_completion(calls(vec![no_id("population", r#"{"city":"Berlin"}"#)]), "tool_calls"),
                chat_completion(calls(vec![no_id("final_output", r#"{"largest":"Berlin"}"#)]), "tool_calls"),
            ],
            streamed::chat,
            "text/event-stream",
        )
    };
    let path = cassette_path("no_ids");
    let url = runtime().block_on(async {
        let server = TestServer::start_with(fake()).await;
        let cassette = Cassette::record(&path).unwrap();
        assert_eq!(run_agent(gpt(&server.url(), Some(CANARY_KEY), &cassette), false).await.largest, "Berlin");
        cassette.finish().unwrap();
        server.url()
    });
    runtime().block_on(async {
        let cassette = Cassette::replay(&path).unwrap();
        let error = replay_chat(&url, &cassette, QUESTION, None).await.unwrap();
        assert!(error.contains("/body/messages/2/tool_calls/0/id: recorded \"call_"), "{error}");
        assert!(error.contains("/body/messages/3/tool_call_id: recorded \"call_"), "{error}");
        let error = cassette.finish().unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidInput, "{error}");
        assert!(error.to_string().starts_with("request 2 does not match"), "{error}");

        let cassette = Cassette::replay(&path)
            .unwrap()
            .ignore_pointer("/body/messages/*/tool_calls/*/id")
            .ignore_field("tool_call_id");
        assert_eq!(replay_chat(&url, &cassette, QUESTION, None).await, None);
        cassette.finish().unwrap();
    });
}
