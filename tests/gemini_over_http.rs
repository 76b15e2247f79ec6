//! Gemini end to end over HTTP, against a local fake that enforces the
//! API's rules as each request arrives (`toolloop_workspace::gemini_rules`):
//! a thinking Gemini 3 agent runs a 4-iteration loop (parallel calls, a
//! validation retry, typed output), streamed and not, saved and resumed
//! mid-loop, with every thought signature sent back byte for byte on its
//! part; a streamed call accumulates to exactly the non-streamed response;
//! Google's errors become typed errors and are retried as they should be;
//! and one conversation switches Anthropic → Gemini → OpenAI Responses →
//! Anthropic.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use toolloop::model::ModelErrorKind;
use toolloop::providers::RetryPolicy;
use toolloop::providers::anthropic::Anthropic;
use toolloop::providers::gemini::Gemini;
use toolloop::providers::openai::OpenAi;
use toolloop::reasoning::{ReasoningConfig, ReasoningEffort, ReasoningSummary};
use toolloop::run::Event;
use toolloop::tool::ToolDefinition;
use toolloop::{Conversation, Message, Model, ModelRequest, ModelResponse};
mod cities;

use cities::{Report, agent};
use toolloop_workspace::anthropic_rules::{AnthropicRules, Block};
use toolloop_workspace::gemini_rules::{self, GeminiRules, PLACEHOLDERS, Part};
use toolloop_workspace::responses_rules::{Item, ResponsesRules};
use toolloop_workspace::{RecordedRequest, Reply, TestServer, streamed};

const KEY: &str = "AIza-test-key";

/// One success body a fake answers with, made from the request.
type Answer = Box<dyn Fn(&Value) -> Value + Send + Sync>;
const MODEL: &str = "gemini-3-flash-preview";

/// The four model turns of the city loop: parallel lookups, a wrong
/// answer the validator sends back, another lookup, the right answer.
fn loop_turns() -> Vec<Vec<Part<'static>>> {
    vec![
        vec![
            Part::Thought("Two cities: look both up at once."),
            Part::Call("population", json!({"city": "Paris"})),
            Part::Call("population", json!({"city": "Berlin"})),
        ],
        vec![Part::Thought("Paris first, I think."), Part::Call("final_output", json!({"largest": "Paris"}))],
        vec![
            Part::Thought("The validator says to check; Rome too?"),
            Part::Text("Checking Rome."),
            Part::Call("population", json!({"city": "Rome"})),
        ],
        vec![Part::Thought("Berlin."), Part::Call("final_output", json!({"largest": "Berlin"}))],
    ]
}

/// A server answering each request that passes `rules` with the next turn.
async fn fake(rules: GeminiRules, turns: Vec<Vec<Part<'static>>>) -> TestServer {
    let turns = Mutex::new(VecDeque::from(turns));
    TestServer::start_with(move |request: &RecordedRequest| {
        if let Err(rejection) = rules.admit(request) {
            return rejection.reply();
        }
        match turns.lock().unwrap().pop_front() {
            Some(parts) => rules.reply(request, &parts),
            None => gemini_rules::error(500, "INTERNAL", "no more answers").reply(),
        }
    })
    .await
}

/// A thinking Gemini 3 model with thought summaries, at `server`.
fn thinking_gemini(server: &TestServer) -> Gemini {
    Gemini::builder()
        .api_key(KEY)
        .base_url(server.url())
        .model(MODEL)
        .reasoning(ReasoningConfig::new(ReasoningEffort::High).with_summary(ReasoningSummary::Auto))
        .build()
        .unwrap()
}

/// The signatures the requests sent back, by (content, part).
fn signatures(body: &Value) -> Vec<(usize, usize, String)> {
    let mut found = Vec::new();
    for (c, content) in body["contents"].as_array().unwrap().iter().enumerate() {
        for (p, part) in content["parts"].as_array().unwrap().iter().enumerate() {
            if let Some(signature) = part["thoughtSignature"].as_str() {
                found.push((c, p, signature.to_owned()));
            }
        }
    }
    found
}

#[tokio::test]
async fn a_thinking_loop_of_four_iterations_sends_every_signature_back_in_place() {
    let server = fake(GeminiRules::new(), loop_turns()).await;
    let model = thinking_gemini(&server);

    // Two model calls, then the conversation is saved, resumed and continued.
    let mut conversation = Conversation::new();
    conversation.push_user("Which is larger, Paris or Berlin?");
    assert!(agent(model.clone(), Some(2)).run(&mut conversation).await.is_err(), "stopped at its call limit");
    let saved = serde_json::to_string(&conversation).unwrap();
    let mut conversation: Conversation = serde_json::from_str(&saved).unwrap();
    let done = agent(model, None).run(&mut conversation).await.unwrap();
    assert_eq!(done.output.largest, "Berlin");

    let requests = server.requests();
    assert_eq!(requests.len(), 4, "every request passed the fake's rules");
    for request in &requests {
        assert_eq!(request.path, format!("/v1beta/models/{MODEL}:generateContent"));
        assert_eq!(request.header("x-goog-api-key"), Some(KEY));
        let body = request.json();
        assert_eq!(
            body["generationConfig"]["thinkingConfig"],
            json!({"thinkingLevel": "high", "includeThoughts": true})
        );
        assert_eq!(body["systemInstruction"], json!({"parts": [{"text": "Compare cities."}]}));
        let declarations = &body["tools"][0]["functionDeclarations"];
        assert_eq!(declarations[0]["name"], "population");
        assert_eq!(declarations[0]["parametersJsonSchema"]["properties"]["city"]["type"], "string");
    }
    // The last request sends back the three earlier calls' signatures, on the
    // first call of each model turn, and the text turn's: none is a placeholder.
    let last = requests[3].json();
    let sent = signatures(&last);
    assert_eq!(sent.iter().map(|(c, p, _)| (*c, *p)).collect::<Vec<_>>(), [(1, 1), (3, 1), (5, 2)], "{last}");
    assert!(sent.iter().all(|(_, _, signature)| !PLACEHOLDERS.contains(&signature.as_str())));
    // Thought summaries went back as thought parts, results as responses with their call's id.
    assert_eq!(last["contents"][1]["parts"][0], json!({"text": "Two cities: look both up at once.", "thought": true}));
    let call_id = &last["contents"][1]["parts"][1]["functionCall"]["id"];
    assert_eq!(last["contents"][2]["parts"][0]["functionResponse"]["id"], *call_id);
    assert_eq!(last["contents"][2]["parts"][0]["functionResponse"]["response"], json!({"output": "2.1"}));

    // Usage: cached prompt tokens are cache reads, thoughts are reasoning (and output) tokens.
    let usage = done.metadata.usage;
    assert_eq!(usage.reasoning_tokens, 2 * 30);
    assert_eq!(usage.cache_read_tokens, 2 * 64);
    assert_eq!(usage.output_tokens, 2 * 50);
    let readable: Vec<String> = conversation.messages().iter().map(Message::reasoning_text).collect();
    assert!(readable.iter().any(|text| text.contains("look both up at once")), "{readable:?}");
}

#[tokio::test]
async fn the_same_loop_streamed_shows_thoughts_and_replays_signatures() {
    let server = fake(GeminiRules::new(), loop_turns()).await;
    let model = thinking_gemini(&server);
    let mut conversation = Conversation::new();
    conversation.push_user("Which is larger, Paris or Berlin?");
    let agent = agent(model, None);
    let mut stream = agent.run_stream(&mut conversation);
    let mut reasoning = String::new();
    while let Some(event) = stream.next().await {
        match event {
            Event::ReasoningDelta { text } => reasoning.push_str(&text),
            Event::ModelCallDiscarded { error, .. } => panic!("a model call failed: {error}"),
            _ => {}
        }
    }
    let report = Some(stream.output().await.unwrap().output);
    assert_eq!(report.map(|report: Report| report.largest).as_deref(), Some("Berlin"));
    assert!(reasoning.contains("look both up at once") && reasoning.contains("Berlin."), "{reasoning}");
    let requests = server.requests();
    assert_eq!(requests.len(), 4, "every request passed the fake's rules");
    assert!(requests.iter().all(|r| r.path == format!("/v1beta/models/{MODEL}:streamGenerateContent?alt=sse")));
    assert_eq!(signatures(&requests[3].json()).len(), 3);
    assert!(conversation.unanswered_tool_calls().is_empty());
}

/// One response, asked for whole and streamed, is the same response: the
/// same blocks, signatures in the same places, and for calls the API gave no
/// id, the same synthesised ids.
#[tokio::test]
async fn a_streamed_call_accumulates_to_the_non_streamed_response() {
    let turn = vec![
        Part::Thought("Plan."),
        Part::Text("Looking both up."),
        Part::Call("population", json!({"city": "Paris"})),
        Part::Call("population", json!({"city": "Berlin"})),
    ];
    let server = fake(GeminiRules::new().without_call_ids(), vec![turn.clone(), turn]).await;
    let model = thinking_gemini(&server);
    let tools = [ToolDefinition::from_schema("population", "Population.", json!({"type": "object"}))];
    let history = [Message::user("Paris or Berlin?")];
    let request = ModelRequest::new(&history).with_tools(&tools);
    let whole = model.complete(request).await.unwrap();
    let streamed = ModelResponse::from_stream(model.stream(request)).await.unwrap();
    assert_eq!(streamed, whole);
    let ids: Vec<&str> = whole.tool_calls().map(|call| call.id.as_str()).collect();
    assert_eq!(ids, ["call_0_resp1", "call_1_resp1"]);
    // The opaque states, as a saved conversation holds them.
    let states: Vec<Value> = whole.reasoning().map(|r| serde_json::to_value(r).unwrap()["opaque"].take()).collect();
    assert_eq!(states[0]["provider"], "gemini");
    assert_eq!(states[0]["state"], json!({"type": "thought"}));
    assert_eq!(states[1]["state"]["type"], "thought_signature");
    assert_eq!(whole.usage.input_tokens, 110);
}

/// Calls from a model the API gave no ids: the loop answers them with the
/// synthesised ids, which the fake pairs with the calls.
#[tokio::test]
async fn calls_without_ids_are_answered_with_synthesised_ones() {
    let server = fake(GeminiRules::new().without_call_ids(), loop_turns()).await;
    let mut conversation = Conversation::new();
    conversation.push_user("Which is larger, Paris or Berlin?");
    let done = agent(thinking_gemini(&server), None).run(&mut conversation).await.unwrap();
    assert_eq!(done.output.largest, "Berlin");
    let last = server.requests()[3].json();
    assert_eq!(last["contents"][2]["parts"][1]["functionResponse"]["id"], "call_1_resp1");
}

#[test]
fn the_fake_rejects_what_the_api_rejects() {
    let rules = GeminiRules::new();
    let prompt = json!({"role": "user", "parts": [{"text": "weather?"}]});
    let request = json!({"contents": [prompt.clone()]});
    let reply = rules.respond(&request, MODEL, &[Part::Call("weather", json!({"city": "Paris"}))]);
    let mut call = reply["candidates"][0]["content"].clone();
    let response = json!({"role": "user", "parts": [{"functionResponse": {"id": call["parts"][0]["functionCall"]["id"], "name": "weather", "response": {"output": "sunny"}}}]});
    let turn = |call: &Value| json!({"contents": [prompt.clone(), call.clone(), response.clone()]});
    assert_eq!(rules.check(MODEL, &turn(&call)), Ok(()));

    // A missing signature in the current turn: the API's error, naming the call and its position.
    let signature = call["parts"][0].as_object_mut().unwrap().remove("thoughtSignature").unwrap();
    let rejection = rules.check(MODEL, &turn(&call)).unwrap_err();
    assert_eq!((rejection.status, &rejection.body["error"]["status"]), (400, &json!("INVALID_ARGUMENT")));
    assert!(rejection.message().starts_with(
        "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly"
    ));
    assert!(
        rejection.message().contains("function call `default_api:weather` , position 2."),
        "{}",
        rejection.message()
    );
    // Gemini 2.5 does not require it; nor does a past turn.
    assert_eq!(rules.check("gemini-2.5-flash", &turn(&call)), Ok(()));
    let mut later = turn(&call);
    later["contents"]
        .as_array_mut()
        .unwrap()
        .extend([json!({"role": "model", "parts": [{"text": "Sunny."}]}), prompt.clone()]);
    assert_eq!(rules.check(MODEL, &later), Ok(()));

    // Altered, moved or not base64: rejected; the documented placeholder passes.
    call["parts"][0]["thoughtSignature"] = json!("c2lnbmVk");
    assert_eq!(rules.check(MODEL, &turn(&call)).unwrap_err().message(), "Corrupted thought signature.");
    call["parts"][0]["thoughtSignature"] = json!("not base64!");
    assert!(rules.check(MODEL, &turn(&call)).unwrap_err().message().contains("Base64 decoding failed"));
    call["parts"][0]["thoughtSignature"] = json!(PLACEHOLDERS[0]);
    assert_eq!(rules.check(MODEL, &turn(&call)), Ok(()));
    call["parts"][0]["thoughtSignature"] = signature.clone();
    call["parts"][0]["functionCall"]["args"] = json!({"city": "Rome"});
    assert_eq!(rules.check(MODEL, &turn(&call)).unwrap_err().message(), "Corrupted thought signature.");

    // Turn order and pairing.
    call["parts"][0]["functionCall"]["args"] = json!({"city": "Paris"});
    let message = |request: Value| rules.check(MODEL, &request).unwrap_err().message().to_owned();
    assert_eq!(
        message(json!({"contents": [prompt.clone(), prompt.clone()]})),
        "Please ensure that multiturn requests alternate between user and model."
    );
    assert_eq!(
        message(json!({"contents": [call.clone(), response.clone()]})),
        "Please ensure that function call turn comes immediately after a user turn or after a function response turn."
    );
    let two = json!({"role": "user", "parts": [response["parts"][0].clone(), response["parts"][0].clone()]});
    assert_eq!(
        message(json!({"contents": [prompt.clone(), call.clone(), two]})),
        "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn."
    );
    let mut renamed = response.clone();
    renamed["parts"][0]["functionResponse"]["name"] = json!("forecast");
    assert!(message(json!({"contents": [prompt.clone(), call.clone(), renamed]})).contains("`forecast` answers none"));
    let mut wrong_id = response.clone();
    wrong_id["parts"][0]["functionResponse"]["id"] = json!("other");
    assert!(message(json!({"contents": [prompt.clone(), call, wrong_id]})).contains("answers none"));

    // Thinking: a budget and a level together, or a level before Gemini 3.
    let both = json!({"contents": [prompt.clone()], "generationConfig": {"thinkingConfig": {"thinkingBudget": 1024, "thinkingLevel": "low"}}});
    assert_eq!(
        message(both),
        "Unable to submit request because thinking_budget and thinking_level are not supported together."
    );
    let level = json!({"contents": [prompt], "generationConfig": {"thinkingConfig": {"thinkingLevel": "low"}}});
    assert_eq!(
        rules.check("gemini-2.5-flash", &level).unwrap_err().message(),
        "Thinking level is not supported for this model."
    );
}

/// A signature changed in the saved conversation reaches the API, which
/// rejects it: a typed invalid request with Google's status and message.
#[tokio::test]
async fn a_corrupted_signature_fails_with_the_apis_error() {
    let server = fake(GeminiRules::new(), loop_turns()).await;
    let model = thinking_gemini(&server);
    let mut conversation = Conversation::new();
    conversation.push_user("Which is larger, Paris or Berlin?");
    assert!(agent(model.clone(), Some(1)).run(&mut conversation).await.is_err());
    let saved = serde_json::to_string(&conversation).unwrap();
    let first = serde_json::from_str::<Value>(&saved).unwrap()["messages"][1].to_string();
    let signature = first.split("\"signature\":\"").nth(1).unwrap().split('"').next().unwrap().to_owned();
    let tampered = saved.replace(&signature, "AAAAAAAAAAA=");
    let tampered: Conversation = serde_json::from_str(&tampered).unwrap();
    let tools = agent_tools();
    let error = model.complete(ModelRequest::new(tampered.messages()).with_tools(&tools)).await.unwrap_err();
    assert_eq!((error.kind(), error.status()), (ModelErrorKind::InvalidRequest, Some(400)));
    assert_eq!(error.error_type(), Some("INVALID_ARGUMENT"));
    assert_eq!(error.message(), "Corrupted thought signature.");
}

fn agent_tools() -> Vec<ToolDefinition> {
    vec![ToolDefinition::from_schema("population", "Population.", json!({"type": "object"}))]
}

fn quick() -> RetryPolicy {
    RetryPolicy::default().with_initial_backoff(Duration::from_millis(1)).with_max_backoff(Duration::from_millis(2))
}

fn google_error(code: u16, status: &str, message: &str) -> Reply {
    gemini_rules::error(code, status, message).reply()
}

#[tokio::test]
async fn googles_errors_become_typed_errors_and_transient_ones_are_retried() {
    let ok = GeminiRules::new().respond(&json!({"contents": [{}]}), MODEL, &[Part::Text("Hi.")]);
    let server = TestServer::start([
        google_error(503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
        google_error(500, "INTERNAL", "An internal error has occurred."),
        Reply::json(200, &ok),
    ])
    .await;
    let model = Gemini::builder().api_key(KEY).base_url(server.url()).retry_policy(quick()).build().unwrap();
    let history = [Message::user("hi")];
    let response = model.complete(ModelRequest::new(&history)).await.unwrap();
    assert_eq!(response.text(), "Hi.");
    assert_eq!(server.requests().len(), 3, "503 and 500 were retried");

    // Rate limits carry Google's RetryInfo delay; the context window its numbers.
    let quota = json!({"error": {"code": 429, "message": "You exceeded your current quota. Please retry in 36.2s.", "status": "RESOURCE_EXHAUSTED",
        "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "36s"}]}});
    let overflow = google_error(
        400,
        "INVALID_ARGUMENT",
        "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).",
    );
    let server = TestServer::start([Reply::json(429, &quota), overflow]).await;
    let model =
        Gemini::builder().api_key(KEY).base_url(server.url()).retry_policy(RetryPolicy::none()).build().unwrap();
    let error = model.complete(ModelRequest::new(&history)).await.unwrap_err();
    assert_eq!((error.kind(), error.error_type()), (ModelErrorKind::RateLimited, Some("RESOURCE_EXHAUSTED")));
    assert_eq!(error.retry_after(), Some(Duration::from_secs(37)), "the delay, rounded down by the API, plus a second");
    assert!(error.is_retryable());
    let error = model.complete(ModelRequest::new(&history)).await.unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::ContextOverflow);
    assert_eq!((error.prompt_tokens(), error.context_window()), (Some(1_196_265), Some(1_048_575)));
}

/// A rate limit whose `RetryInfo` says to wait is retried after that wait.
#[tokio::test]
async fn a_rate_limit_is_retried_after_its_retry_info_delay() {
    let quota = json!({"error": {"code": 429, "message": "Resource exhausted.", "status": "RESOURCE_EXHAUSTED",
        "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "0s"}]}});
    let ok = GeminiRules::new().respond(&json!({"contents": [{}]}), MODEL, &[Part::Text("Hi.")]);
    let server = TestServer::start([Reply::json(429, &quota), Reply::json(200, &ok)]).await;
    let model = Gemini::builder().api_key(KEY).base_url(server.url()).build().unwrap();
    let history = [Message::user("hi")];
    assert_eq!(model.complete(ModelRequest::new(&history)).await.unwrap().text(), "Hi.");
    assert_eq!(server.requests().len(), 2);
}

/// A stream that fails before its first content is retried; one that fails
/// after it ends with the error, its partial answer discarded by the run.
#[tokio::test]
async fn streamed_failures_before_content_are_retried() {
    let failure = format!(
        "data: {}\r\n\r\n",
        json!({"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}})
    );
    let ok = GeminiRules::new().respond(&json!({"contents": [{}]}), MODEL, &[Part::Text("Hello there.")]);
    let mut cut = streamed::gemini(&ok);
    cut.truncate(2);
    cut.push(failure.clone().into_bytes());
    let server = TestServer::start([
        streamed::reply("text/event-stream", vec![failure.into_bytes()]),
        streamed::reply("text/event-stream", streamed::gemini(&ok)),
        streamed::reply("text/event-stream", cut),
    ])
    .await;
    let model = Gemini::builder().api_key(KEY).base_url(server.url()).retry_policy(quick()).build().unwrap();
    let history = [Message::user("hi")];
    let response = ModelResponse::from_stream(model.stream(ModelRequest::new(&history))).await.unwrap();
    assert_eq!(response.text(), "Hello there.");
    assert_eq!(server.requests().len(), 2, "the failure before content was retried");
    let error = ModelResponse::from_stream(model.stream(ModelRequest::new(&history))).await.unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::Overloaded);
    assert_eq!(server.requests().len(), 3, "a failure after content is not retried");
}

#[tokio::test]
async fn reasoning_settings_gemini_rules_out_fail_before_sending() {
    let server = TestServer::start([]).await;
    let model = Gemini::builder()
        .api_key(KEY)
        .base_url(server.url())
        .model("gemini-2.5-flash")
        .reasoning(ReasoningConfig::off().with_budget_tokens(50_000))
        .build()
        .unwrap();
    let history = [Message::user("hi")];
    let error = model.complete(ModelRequest::new(&history)).await.unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::InvalidRequest);
    assert_eq!(error.message(), "the thinking budget must be at most 24576 tokens, but it is 50000");
    assert!(server.requests().is_empty());
}

fn anthropic_answers(rules: &Arc<AnthropicRules>) -> Vec<Answer> {
    let turns = [
        vec![
            Block::Thinking("Two cities: look both up at once."),
            Block::ToolUse("toolu_1", "population", json!({"city": "Paris"})),
            Block::ToolUse("toolu_2", "population", json!({"city": "Berlin"})),
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

/// A server checking each request with `check` and answering with the next of `answers`.
async fn checked(
    check: impl Fn(&Value) -> Result<(), Reply> + Send + Sync + 'static,
    answers: Vec<Answer>,
) -> TestServer {
    let answers = Mutex::new(VecDeque::from(answers));
    TestServer::start_with(move |request| {
        let body = request.json();
        if let Err(rejection) = check(&body) {
            return rejection;
        }
        match answers.lock().unwrap().pop_front() {
            Some(answer) => Reply::json(200, &answer(&body)),
            None => Reply::json(500, &json!({"error": "no more answers"})),
        }
    })
    .await
}

/// Anthropic → Gemini → Responses → Anthropic in one conversation, each
/// behind a fake of its API's rules: Gemini takes Claude's calls as calls
/// (with the documented placeholder signature) and never sees its thinking;
/// Responses and Anthropic see Gemini's calls as text and none of its
/// signatures; Claude's own thinking goes back to Claude byte for byte.
#[tokio::test]
async fn one_conversation_switches_anthropic_gemini_responses_and_back() {
    let anthropic_rules = Arc::new(AnthropicRules::new());
    let checker = Arc::clone(&anthropic_rules);
    let anthropic_server =
        checked(move |body| checker.check(body).map_err(|r| r.reply()), anthropic_answers(&anthropic_rules)).await;
    let gemini_server = fake(GeminiRules::new(), vec![loop_turns().remove(1)]).await;
    let responses_rules = Arc::new(ResponsesRules::new());
    let checker = Arc::clone(&responses_rules);
    let items = vec![Item::Reasoning("Rome too."), Item::FunctionCall("call_5", "population", json!({"city": "Rome"}))];
    let responder = Arc::clone(&responses_rules);
    let responses_server = checked(
        move |body| checker.check(body).map_err(|r| r.reply()),
        vec![Box::new(move |request: &Value| responder.respond_to(request, &items, 16))],
    )
    .await;

    let claude = Anthropic::builder()
        .api_key("k")
        .base_url(anthropic_server.url())
        .model("claude-sonnet-4-5")
        .reasoning(ReasoningConfig::new(ReasoningEffort::Low).with_budget_tokens(1024))
        .build()
        .unwrap();
    let gemini = thinking_gemini(&gemini_server);
    let gpt = OpenAi::responses()
        .api_key("k")
        .base_url(responses_server.url())
        .reasoning(ReasoningEffort::Medium)
        .build()
        .unwrap();

    let mut conversation = Conversation::new();
    conversation.push_user("Which is larger, Paris or Berlin?");
    assert!(agent(claude.clone(), Some(1)).run(&mut conversation).await.is_err(), "Claude looked both up");
    assert!(agent(gemini, Some(1)).run(&mut conversation).await.is_err(), "Gemini answered Paris, sent back");
    assert!(agent(gpt, Some(1)).run(&mut conversation).await.is_err(), "GPT looked Rome up");
    let done = agent(claude, None).run(&mut conversation).await.unwrap();
    assert_eq!(done.output.largest, "Berlin");

    // Gemini: Claude's calls as calls, the first with the placeholder; no Claude thinking.
    let sent = gemini_server.requests()[0].json();
    let claude_turn = &sent["contents"][1]["parts"];
    assert_eq!(claude_turn[0]["functionCall"]["id"], "toolu_1");
    assert_eq!(claude_turn[0]["thoughtSignature"], PLACEHOLDERS[0]);
    assert!(claude_turn[1].get("thoughtSignature").is_none());
    assert!(!sent.to_string().contains("look both up at once"));
    // Responses: Gemini's call as text, no Gemini signature.
    let sent = String::from_utf8_lossy(&responses_server.requests()[0].body).into_owned();
    assert!(sent.contains("[called tool `final_output`"), "{sent}");
    assert!(!sent.contains("thoughtSignature") && !sent.contains("Paris first, I think"));
    // Back to Claude: its own thinking replayed, the others' calls as text.
    let sent = anthropic_server.requests()[1].json();
    assert_eq!(sent["messages"][1]["content"][0]["type"], "thinking");
    let text = sent.to_string();
    assert!(text.contains("[called tool `final_output`") && text.contains("[called tool `population` with"), "{text}");
    assert!(!text.contains("thoughtSignature") && !text.contains("Paris first, I think"));
    assert!(conversation.unanswered_tool_calls().is_empty());
}

/// A reply with no content (`MALFORMED_FUNCTION_CALL`: the model's call
/// did not parse) leaves a blank model turn in the conversation. The next
/// request leaves it out, so the user turns around it go as one turn:
/// the API refuses two user turns side by side ("Please ensure that
/// multiturn requests alternate between user and model").
#[tokio::test]
async fn a_reply_with_no_content_leaves_no_blank_turn_in_the_next_request() {
    let rules = GeminiRules::new();
    let answered = Mutex::new(0);
    let server = TestServer::start_with(move |request: &RecordedRequest| {
        if let Err(rejection) = rules.admit(request) {
            return rejection.reply();
        }
        let mut answered = answered.lock().unwrap();
        *answered += 1;
        if *answered == 1 {
            let empty = json!({
                "candidates": [{"finishReason": "MALFORMED_FUNCTION_CALL", "index": 0}],
                "usageMetadata": {"promptTokenCount": 100, "totalTokenCount": 100},
                "modelVersion": MODEL,
                "responseId": "resp-empty"
            });
            return Reply::json(200, &empty);
        }
        rules.reply(request, &[Part::Call("final_output", json!({"largest": "Berlin"}))])
    })
    .await;
    let model = Gemini::builder().api_key(KEY).base_url(server.url()).model(MODEL).build().unwrap();
    let mut conversation = Conversation::new();
    conversation.push_user("Which is larger, Paris or Berlin?");
    let done = agent(model, None).run(&mut conversation).await.unwrap();
    assert_eq!(done.output.largest, "Berlin");
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "the second request passed the fake's rules");
    let second = requests[1].json();
    let turns: Vec<&str> = second["contents"].as_array().unwrap().iter().map(|c| c["role"].as_str().unwrap()).collect();
    assert_eq!(turns, ["user"], "{second}");
    assert!(conversation.iter().any(|message| message.content.is_empty()), "the conversation keeps the blank reply");
}

/// A tool loop on Vertex AI, through the fake's Vertex rules: its
/// `functionCall` and `functionResponse` have no `id` field (the API
/// rejects one as unknown), so no request sends one and every one passes.
#[tokio::test]
async fn a_vertex_tool_loop_sends_no_call_ids() {
    let server = fake(GeminiRules::new().without_call_ids(), loop_turns()).await;
    let model = Gemini::builder()
        .vertex("my-project", "us-central1")
        .vertex_token("ya29.token")
        .base_url(server.url())
        .model(MODEL)
        .reasoning(ReasoningConfig::new(ReasoningEffort::High).with_summary(ReasoningSummary::Auto))
        .build()
        .unwrap();
    let mut conversation = Conversation::new();
    conversation.push_user("Which is larger, Paris or Berlin?");
    let done = agent(model, None).run(&mut conversation).await.unwrap();
    assert_eq!(done.output.largest, "Berlin");
    let requests = server.requests();
    assert_eq!(requests.len(), 4, "every request passed the fake's rules");
    let last = requests[3].json();
    let mut answered = 0;
    for content in last["contents"].as_array().unwrap() {
        for part in content["parts"].as_array().unwrap() {
            for field in ["functionCall", "functionResponse"] {
                if let Some(value) = part.get(field) {
                    assert!(value.get("id").is_none(), "{value}");
                    answered += usize::from(field == "functionResponse");
                }
            }
        }
    }
    assert_eq!(answered, 4, "{last}");
}

/// Vertex AI: the project and location in the path, the bearer token from
/// the token source asked before each request, and a failing source as an
/// authentication error that sends nothing.
#[tokio::test]
async fn vertex_names_the_project_and_sends_the_bearer_token() {
    let ok = GeminiRules::new().respond(&json!({"contents": [{}]}), MODEL, &[Part::Text("Hi.")]);
    let server =
        TestServer::start([Reply::json(200, &ok), streamed::reply("text/event-stream", streamed::gemini(&ok))]).await;
    let asked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = Arc::clone(&asked);
    let model = Gemini::builder()
        .vertex("my-project", "us-central1")
        .base_url(server.url())
        .vertex_token_source(move || {
            Ok(format!("ya29.token{}", counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst)))
        })
        .build()
        .unwrap();
    let history = [Message::user("hi")];
    model.complete(ModelRequest::new(&history)).await.unwrap();
    ModelResponse::from_stream(model.stream(ModelRequest::new(&history))).await.unwrap();
    let requests = server.requests();
    assert_eq!(
        requests[0].path,
        format!("/v1/projects/my-project/locations/us-central1/publishers/google/models/{MODEL}:generateContent")
    );
    assert_eq!(requests[0].header("authorization"), Some("Bearer ya29.token0"));
    assert_eq!(requests[1].header("authorization"), Some("Bearer ya29.token1"));
    assert!(requests[1].path.ends_with(":streamGenerateContent?alt=sse"));
    assert_eq!(requests[0].header("x-goog-api-key"), None);

    let failing = Gemini::builder()
        .vertex("p", "global")
        .base_url(server.url())
        .vertex_token_source(|| Err("the credentials expired".into()))
        .build()
        .unwrap();
    let error = failing.complete(ModelRequest::new(&history)).await.unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::Authentication);
    assert!(error.message().contains("the credentials expired"));
    assert_eq!(server.requests().len(), 2, "nothing was sent");
}

/// Tool parameters in the `OpenAPI` subset, for endpoints without
/// `parametersJsonSchema`: a derived tool's schema, converted.
#[tokio::test]
async fn tools_can_be_declared_in_the_openapi_subset() {
    let server = fake(GeminiRules::new(), vec![vec![Part::Text("Hi.")]]).await;
    let model =
        Gemini::builder().api_key(KEY).base_url(server.url()).model(MODEL).openapi_parameters().build().unwrap();
    let tools = [
        ToolDefinition::from_schema(
            "population",
            "Population.",
            json!({"type": "object", "properties": {"city": {"type": "string"}, "year": {"type": ["integer", "null"]}}, "required": ["city"], "additionalProperties": false}),
        ),
        // No arguments: declared without parameters (the API refuses an OBJECT with no properties).
        ToolDefinition::from_schema("now", "The time.", json!({"type": "object", "properties": {}})),
    ];
    let history = [Message::user("hi")];
    model.complete(ModelRequest::new(&history).with_tools(&tools)).await.unwrap();
    let declarations = &server.requests()[0].json()["tools"][0]["functionDeclarations"];
    assert_eq!(declarations[1], json!({"name": "now", "description": "The time."}));
    let declaration = &declarations[0];
    assert!(declaration.get("parametersJsonSchema").is_none());
    assert_eq!(
        declaration["parameters"],
        json!({"type": "OBJECT", "properties": {"city": {"type": "STRING"}, "year": {"type": "INTEGER", "nullable": true}}, "required": ["city"]})
    );
}

/// A stream that fails after its first text: the run shows the discard,
/// ends with the error, and nothing of the partial answer reaches the
/// conversation.
#[tokio::test]
async fn a_fault_mid_stream_is_discarded_by_the_run() {
    let ok = GeminiRules::new().respond(&json!({"contents": [{}]}), MODEL, &[Part::Text("Paris is larger, I think.")]);
    let mut cut = streamed::gemini(&ok);
    cut.truncate(2);
    cut.push(
        format!(
            "data: {}\r\n\r\n",
            json!({"error": {"code": 500, "message": "Internal error.", "status": "INTERNAL"}})
        )
        .into_bytes(),
    );
    let server = TestServer::start([streamed::reply("text/event-stream", cut)]).await;
    let model =
        Gemini::builder().api_key(KEY).base_url(server.url()).retry_policy(RetryPolicy::none()).build().unwrap();
    let agent = agent(model, None);
    let mut conversation = Conversation::new();
    conversation.push_user("Which is larger, Paris or Berlin?");
    let mut stream = agent.run_stream(&mut conversation);
    let (mut deltas, mut discarded) = (0, false);
    while let Some(event) = stream.next().await {
        match event {
            Event::TextDelta { .. } => deltas += 1,
            Event::ModelCallDiscarded { error, .. } => discarded = error.contains("Internal error."),
            _ => {}
        }
    }
    let failed = stream.output().await.err();
    assert!(deltas > 0 && discarded, "the partial answer was shown, then discarded");
    assert!(failed.is_some());
    assert_eq!(conversation.messages().len(), 1, "nothing provisional reached the conversation");
}

/// Gemini 2.5 takes a thinking budget (and never a level beside it), which
/// the fake accepts; the thoughts come back as reasoning text.
#[tokio::test]
async fn gemini_2_5_thinks_with_a_budget() {
    let server = fake(GeminiRules::new(), vec![vec![Part::Thought("Short."), Part::Text("Berlin.")]]).await;
    let model = Gemini::builder()
        .api_key(KEY)
        .base_url(server.url())
        .model("gemini-2.5-flash")
        .reasoning(
            ReasoningConfig::new(ReasoningEffort::Low).with_budget_tokens(2048).with_summary(ReasoningSummary::Auto),
        )
        .build()
        .unwrap();
    let history = [Message::user("Paris or Berlin?")];
    let response = model.complete(ModelRequest::new(&history)).await.unwrap();
    assert_eq!((response.text().as_str(), response.reasoning_text().as_str()), ("Berlin.", "Short."));
    let sent = server.requests()[0].json();
    assert_eq!(sent["generationConfig"]["thinkingConfig"], json!({"thinkingBudget": 2048, "includeThoughts": true}));
    assert_eq!(server.requests()[0].path, "/v1beta/models/gemini-2.5-flash:generateContent");
}
