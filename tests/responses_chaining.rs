//! The Responses API's stored-response mode (`chain_responses`) against a
//! local fake that keeps stored responses as the API does: a request may
//! name only a stored response (`previous_response_not_found`), must not
//! send again an item the stored conversation holds ("Duplicate item
//! found"), and its new items must fit the stored ones (reasoning before
//! its calls, every output answering a call). A chained loop sends only
//! the new items; a resumed, switched or re-modelled conversation, and the
//! call after one whose stored response was deleted, is sent whole and
//! chained again from there.

#![allow(clippy::unused_async)] // tool handlers are async by contract, even when they never wait

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolloop::model::ModelErrorKind;
use toolloop::providers::RetryPolicy;
use toolloop::providers::anthropic::Anthropic;
use toolloop::providers::openai::{OpenAi, OpenAiResponses};
use toolloop::reasoning::ReasoningEffort;
use toolloop::{Conversation, Model, ModelRequest};
mod cities;

use cities::agent;
use toolloop_workspace::responses_rules::{Item, ResponsesRules};
use toolloop_workspace::{RecordedRequest, Reply, TestServer, replies, streamed};

/// The answers of a 4-call loop: parallel lookups, a wrong output the
/// validator sends back, a lookup that fails, the right output.
fn turns() -> Vec<Vec<Item<'static>>> {
    vec![
        vec![
            Item::Reasoning("Look both up at once."),
            Item::FunctionCall("call_1", "population", json!({"city": "Paris"})),
            Item::FunctionCall("call_2", "population", json!({"city": "Berlin"})),
        ],
        vec![
            Item::Reasoning("Paris first."),
            Item::FunctionCall("call_3", "final_output", json!({"largest": "Paris"})),
        ],
        vec![
            Item::Reasoning(""),
            Item::Message("Checking Rome."),
            Item::FunctionCall("call_5", "population", json!({"city": "Rome"})),
        ],
        vec![Item::Reasoning("Berlin."), Item::FunctionCall("call_4", "final_output", json!({"largest": "Berlin"}))],
    ]
}

/// A fake Responses server answering `turns` in order, each request
/// checked by the API's rules first; answers are stored when asked.
async fn fake(rules: &Arc<ResponsesRules>, turns: Vec<Vec<Item<'static>>>) -> TestServer {
    let rules = Arc::clone(rules);
    let turns = Mutex::new(VecDeque::from(turns));
    TestServer::start_with(move |request: &RecordedRequest| {
        let body = request.json();
        if let Err(rejection) = rules.check(&body) {
            return rejection.reply();
        }
        match turns.lock().unwrap().pop_front() {
            Some(items) if body["stream"] == json!(true) => {
                streamed::reply("text/event-stream", streamed::responses(&rules.respond_to(&body, &items, 8)))
            }
            Some(items) => Reply::json(200, &rules.respond_to(&body, &items, 8)),
            None => Reply::json(500, &json!({"error": {"message": "no more answers", "type": "server_error"}})),
        }
    })
    .await
}

fn chained(server: &TestServer) -> OpenAiResponses {
    OpenAi::responses()
        .api_key("k")
        .base_url(server.url())
        .model("gpt-5.1")
        .reasoning(ReasoningEffort::Medium)
        .chain_responses(true)
        .retry_policy(RetryPolicy::none())
        .build()
        .unwrap()
}

fn types(body: &Value) -> Vec<String> {
    body["input"].as_array().unwrap().iter().map(|item| item["type"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn a_chained_loop_sends_only_new_items_and_a_resumed_one_starts_whole() {
    let rules = Arc::new(ResponsesRules::new());
    let server = fake(&rules, turns()).await;
    let model = chained(&server);
    let mut conversation = Conversation::new();
    conversation.push_user("Which is larger, Paris or Berlin?");
    let stopped = agent(model.clone(), Some(2)).run(&mut conversation).await;
    assert!(stopped.is_err(), "the first half stops at its call limit");
    // Saved and resumed: the messages are copies, which the model cannot vouch for.
    let mut resumed: Conversation = serde_json::from_str(&serde_json::to_string(&conversation).unwrap()).unwrap();
    let done = agent(model, None).run(&mut resumed).await.unwrap();
    assert_eq!(done.output.largest, "Berlin");
    assert_eq!(done.metadata.usage.reasoning_tokens, 2 * 8);

    let requests: Vec<Value> = server.requests().iter().map(RecordedRequest::json).collect();
    assert_eq!(requests.len(), 4, "every request passed the fake's rules");
    for request in &requests {
        assert_eq!(request["store"], json!(true), "only stored responses can be continued");
        assert_eq!(request["include"], json!(["reasoning.encrypted_content"]));
        assert_eq!(request["instructions"], "Compare cities.", "instructions are not carried over");
        assert_eq!(request["tools"].as_array().unwrap().len(), 2);
    }
    // 1: whole. 2: continues response 1 with the two outputs only.
    assert!(requests[0].get("previous_response_id").is_none());
    assert_eq!(types(&requests[0]), ["message"]);
    assert_eq!(requests[1]["previous_response_id"], "resp_fake_1");
    assert_eq!(types(&requests[1]), ["function_call_output", "function_call_output"]);
    // 3: the resumed conversation is sent whole (its reasoning still encrypted in it), 4 continues it.
    assert!(requests[2].get("previous_response_id").is_none());
    assert_eq!(types(&requests[2])[..4], ["message", "reasoning", "function_call", "function_call"]);
    assert_eq!(requests[3]["previous_response_id"], "resp_fake_3");
    assert_eq!(types(&requests[3]), ["function_call_output"]);
    assert!(requests[3]["input"][0]["output"].as_str().unwrap().contains("no data for Rome"));
    assert!(rules.is_stored("resp_fake_4"));
}

/// Streamed, the loop chains the same way: each streamed answer is
/// remembered once whole, and the next request sends only the new items.
#[tokio::test]
async fn a_streamed_chained_loop_sends_only_new_items() {
    let rules = Arc::new(ResponsesRules::new());
    let server = fake(&rules, turns()).await;
    let agent = agent(chained(&server), None);
    let mut conversation = Conversation::new();
    conversation.push_user("Which is larger, Paris or Berlin?");
    let stream = agent.run_stream(&mut conversation);
    let result = stream.output().await;
    assert_eq!(result.unwrap().output.largest, "Berlin");

    let requests: Vec<Value> = server.requests().iter().map(RecordedRequest::json).collect();
    assert_eq!(requests.len(), 4, "every request passed the fake's rules");
    assert!(requests.iter().all(|request| request["stream"] == json!(true)));
    assert!(requests[0].get("previous_response_id").is_none());
    for (n, request) in requests.iter().enumerate().skip(1) {
        assert_eq!(request["previous_response_id"], format!("resp_fake_{n}"), "request {}", n + 1);
    }
    assert_eq!(types(&requests[1]), ["function_call_output", "function_call_output"]);
    assert_eq!(types(&requests[3]), ["function_call_output"]);
}

#[tokio::test]
async fn a_switch_to_another_provider_or_model_sends_the_conversation_whole() {
    let rules = Arc::new(ResponsesRules::new());
    let mut answers = turns();
    answers.remove(1);
    let responses_server = fake(&rules, answers).await;
    let anthropic_server =
        TestServer::start([replies::anthropic::tool_use(&[("toolu_9", "population", json!({"city": "Rome"}))])]).await;
    let responses = chained(&responses_server);
    let anthropic = Anthropic::builder().api_key("k").base_url(anthropic_server.url()).build().unwrap();

    let mut conversation = Conversation::new();
    conversation.push_user("Which is larger, Paris or Berlin?");
    assert!(agent(responses.clone(), Some(1)).run(&mut conversation).await.is_err());
    assert!(agent(anthropic, Some(1)).run(&mut conversation).await.is_err());
    let done = agent(responses.clone(), None).run(&mut conversation).await.unwrap();
    assert_eq!(done.output.largest, "Berlin");

    let requests: Vec<Value> = responses_server.requests().iter().map(RecordedRequest::json).collect();
    assert_eq!(requests.len(), 3);
    // After Anthropic's turn the stored response no longer ends the prefix: whole, with that turn as text.
    assert!(requests[1].get("previous_response_id").is_none());
    assert!(requests[1].to_string().contains("[called tool `population`"));
    assert_eq!(requests[2]["previous_response_id"], "resp_fake_2");
    assert_eq!(types(&requests[2]), ["function_call_output"]);

    // Another model on the same client does not continue this model's response.
    conversation.push_user("And Madrid?");
    let tools = [toolloop::tool::ToolDefinition::from_schema("population", "Look up.", json!({"type": "object"}))];
    let other = responses.with_model("gpt-5.1-mini");
    let request = ModelRequest::new(conversation.messages()).with_tools(&tools);
    let error = other.complete(request).await.unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::Server, "the fake ran out of answers, after its checks passed");
    let last = responses_server.requests().last().unwrap().json();
    assert!(last.get("previous_response_id").is_none());
    assert_eq!(last["model"], "gpt-5.1-mini");
}

#[tokio::test]
async fn a_response_that_was_not_stored_cannot_be_continued() {
    let rules = Arc::new(ResponsesRules::new());
    let server = fake(&rules, turns()).await;
    let model = chained(&server);
    let tools = [toolloop::tool::ToolDefinition::from_schema("population", "Look up.", json!({"type": "object"}))];
    let mut conversation = Conversation::new();
    conversation.push_user("Which is larger?");
    let first = model.complete(ModelRequest::new(conversation.messages()).with_tools(&tools)).await.unwrap();
    assert_eq!(first.id.as_deref(), Some("resp_fake_1"));
    let sent = server.requests()[0].json();

    // The fake's rules, as the API's: an unknown id, a stateless response, an item sent twice.
    let missing = rules.check(&json!({"previous_response_id": "resp_gone", "input": []})).unwrap_err();
    assert_eq!(
        (missing.body["error"]["code"].as_str(), missing.message()),
        (Some("previous_response_not_found"), "Previous response with id 'resp_gone' not found.")
    );
    let unstored = rules.respond_to(&json!({"store": false, "input": []}), &[Item::Message("hi")], 0);
    let unstored_id = unstored["id"].as_str().unwrap();
    assert!(!rules.is_stored(unstored_id));
    assert!(rules.check(&json!({"previous_response_id": unstored_id, "input": []})).is_err());
    let mut resent = sent.clone();
    resent["previous_response_id"] = json!("resp_fake_1");
    resent["input"] = json!([
        {"type": "function_call", "call_id": "call_1", "name": "population", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "2.1"}
    ]);
    let duplicate = rules.check(&resent).unwrap_err();
    assert!(duplicate.message().starts_with("Duplicate item found with id call_1."), "{}", duplicate.message());
    let orphan = rules
        .check(&json!({"previous_response_id": "resp_fake_1", "input": [
            {"type": "function_call_output", "call_id": "call_7", "output": "?"}
        ]}))
        .unwrap_err();
    assert!(orphan.message().contains("No tool call found"), "{}", orphan.message());
    rules
        .check(&json!({"previous_response_id": "resp_fake_1", "input": [
            {"type": "function_call_output", "call_id": "call_1", "output": "2.1"},
            {"type": "function_call_output", "call_id": "call_2", "output": "3.7"}
        ]}))
        .unwrap();
}

#[tokio::test]
async fn a_deleted_stored_response_fails_one_call_and_the_next_is_sent_whole() {
    let rules = Arc::new(ResponsesRules::new());
    let server = fake(&rules, turns()).await;
    let model = chained(&server);
    let mut conversation = Conversation::new();
    conversation.push_user("Which is larger, Paris or Berlin?");
    assert!(agent(model.clone(), Some(1)).run(&mut conversation).await.is_err());
    rules.delete("resp_fake_1");
    let before = conversation.clone();

    let error = agent(model.clone(), None).run(&mut conversation).await.unwrap_err();
    let model_error = error.model_error().unwrap();
    assert_eq!(model_error.kind(), ModelErrorKind::InvalidRequest);
    assert_eq!(model_error.error_type(), Some("previous_response_not_found"));
    assert!(conversation == before, "the conversation is intact and sendable");

    // Sent whole, stored again, and chained from there.
    let done = agent(model, None).run(&mut conversation).await.unwrap();
    assert_eq!(done.output.largest, "Berlin");
    let requests: Vec<Value> = server.requests().iter().map(RecordedRequest::json).collect();
    assert_eq!(requests.len(), 5, "one answered, the failed one, three answered");
    assert_eq!(requests[1]["previous_response_id"], "resp_fake_1");
    assert!(requests[2].get("previous_response_id").is_none());
    assert_eq!(types(&requests[2])[..2], ["message", "reasoning"]);
    assert_eq!(requests[3]["previous_response_id"], "resp_fake_2");
}

#[tokio::test]
async fn behind_a_fallback_the_answering_model_chains_its_own_responses() {
    // The primary is overloaded on every call; the chained Responses model answers the whole loop.
    let overloaded = json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    let down = TestServer::start_with(move |_| Reply::json(529, &overloaded)).await;
    let rules = Arc::new(ResponsesRules::new());
    let up = fake(&rules, turns()).await;
    let primary =
        Anthropic::builder().api_key("k").base_url(down.url()).retry_policy(RetryPolicy::none()).build().unwrap();
    let model = toolloop::providers::Fallback::new(primary).then(chained(&up));
    let mut conversation = Conversation::new();
    conversation.push_user("Which is larger, Paris or Berlin?");
    let done = agent(model, None).run(&mut conversation).await.unwrap();
    assert_eq!(done.output.largest, "Berlin");
    let requests: Vec<Value> = up.requests().iter().map(RecordedRequest::json).collect();
    assert_eq!(requests.len(), 4, "every request passed the fake's rules");
    assert!(requests[0].get("previous_response_id").is_none());
    for (index, request) in requests.iter().enumerate().skip(1) {
        assert_eq!(request["previous_response_id"], format!("resp_fake_{index}"));
        assert!(types(request).iter().all(|kind| kind == "function_call_output"));
    }
}
