//! The fake model: an Anthropic Messages server (tests/support's), which
//! rejects what the real API rejects and answers from a script keyed by the
//! run's question and the turn.

use serde_json::{Value, json};
use toolloop_workspace::anthropic_rules::AnthropicRules;
use toolloop_workspace::{RecordedRequest, Reply, TestServer, replies};

/// The question a request answers (its first user message) and its turn
/// (how many assistant messages it holds).
pub fn position(request: &Value) -> (String, usize) {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    let first = messages.first().map(|message| text_of(&message["content"])).unwrap_or_default();
    let turn = messages.iter().filter(|message| message["role"] == "assistant").count();
    (first, turn)
}

fn text_of(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|block| block["text"].as_str()).collect::<Vec<_>>().join(""),
        _ => String::new(),
    }
}

/// The last tool result of a request: its content and whether it is an error.
pub fn last_tool_result(request: &Value) -> Option<(String, bool)> {
    let messages = request["messages"].as_array()?;
    let blocks = messages.last()?["content"].as_array()?;
    let result = blocks.iter().rev().find(|block| block["type"] == "tool_result")?;
    Some((text_of(&result["content"]), result["is_error"] == true))
}

/// The last user text of a request.
pub fn last_user_text(request: &Value) -> String {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    messages.iter().rev().find(|message| message["role"] == "user").map(|m| text_of(&m["content"])).unwrap_or_default()
}

/// Every `tool_use` must be answered by a `tool_result` at the start of the
/// next (user) message, as the Messages API requires.
fn check_pairing(request: &Value) -> Result<(), String> {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    for (index, message) in messages.iter().enumerate() {
        let blocks = message["content"].as_array().cloned().unwrap_or_default();
        let uses: Vec<&str> = blocks
            .iter()
            .filter(|block| block["type"] == "tool_use")
            .filter_map(|block| block["id"].as_str())
            .collect();
        if uses.is_empty() {
            continue;
        }
        let next = messages.get(index + 1).and_then(|next| next["content"].as_array().cloned()).unwrap_or_default();
        let results: Vec<&str> = next
            .iter()
            .take_while(|block| block["type"] == "tool_result")
            .filter_map(|block| block["tool_use_id"].as_str())
            .collect();
        if results != uses {
            return Err(format!(
                "messages.{}: `tool_use` ids were found without `tool_result` blocks immediately after: {uses:?}",
                index + 1
            ));
        }
    }
    Ok(())
}

/// A fake whose answers `script` computes from the request body.
pub async fn start(script: impl Fn(&Value) -> Reply + Send + Sync + 'static) -> TestServer {
    let rules = AnthropicRules::new();
    TestServer::start_with(move |request: &RecordedRequest| {
        let body = request.json();
        if let Err(rejection) = rules.check(&body) {
            return rejection.reply();
        }
        if let Err(message) = check_pairing(&body) {
            return Reply::json(
                400,
                &json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}}),
            );
        }
        script(&body)
    })
    .await
}

/// One tool call.
pub fn tool(id: &str, name: &str, input: Value) -> Reply {
    replies::anthropic::tool_use(&[(id, name, input)])
}

/// Several tool calls.
pub fn tools(calls: &[(&str, &str, Value)]) -> Reply {
    replies::anthropic::tool_use(calls)
}

/// A text answer.
pub fn text(text: &str) -> Reply {
    replies::anthropic::text(text)
}

/// The script of every test: by the question's first word.
pub fn script(request: &Value) -> Reply {
    let (question, turn) = position(request);
    let word = question.split_whitespace().next().unwrap_or_default();
    match (word, turn) {
        // Four model calls: notes, a slow lookup, a note, the report.
        ("research", 0) => tool("n1", "note", json!({"text": "first"})),
        ("research", 1) => {
            tools(&[("n2", "note", json!({"text": "second"})), ("h2", "hold", json!({"why": "archive"}))])
        }
        ("research", 2) => tool("n3", "note", json!({"text": "third"})),
        ("research", _) => tool("out", "final_output", json!({"title": "Findings", "notes": 3})),
        // A call that needs approval, then a report saying how it went.
        ("publish", 0) => tool("p1", "publish", json!({"title": "Findings"})),
        // A draft, which the research agent's approver publishes itself.
        ("draft", 0) => tool("p2", "publish", json!({"title": "Draft notes"})),
        // Review 2: two publications in one response, for the pair agent.
        ("pair", 0) => {
            tools(&[("p3", "publish", json!({"title": "Slow one"})), ("p4", "publish", json!({"title": "Quick one"}))])
        }
        ("pairok", 0) => {
            tools(&[("p3", "publish", json!({"title": "Quick one"})), ("p4", "publish", json!({"title": "Slow one"}))])
        }
        // Three notes in one response, for the pair agent (no approval).
        ("pairnotes", 0) => tools(&[
            ("n4", "note", json!({"text": "fourth"})),
            ("n5", "note", json!({"text": "fifth"})),
            ("n6", "note", json!({"text": "sixth"})),
        ]),
        ("pairnotes", _) => tool("out", "final_output", json!({"title": "Noted", "notes": 3})),
        ("publish" | "draft" | "pair" | "pairok", _) => {
            let title = match last_tool_result(request) {
                Some((content, true)) => format!("not published: {content}"),
                Some((content, false)) => format!("published: {content}"),
                None => "no result".to_owned(),
            };
            tool("out", "final_output", json!({"title": title, "notes": 0}))
        }
        // Model errors: one the API would not accept again, one it may.
        ("broken", _) => Reply::json(
            400,
            &json!({"type": "error", "error": {"type": "invalid_request_error", "message": "the fake rejects this"}}),
        ),
        ("flaky", _) => Reply::json(
            529,
            &json!({"type": "error", "error": {"type": "overloaded_error", "message": "the fake is overloaded"}}),
        ),
        // A note, then an answer.
        ("quick", 0) => tool("q1", "note", json!({"text": question})),
        ("quick", _) => text(&format!("done: {question}")),
        // A session message whose answer needs an external tool's result.
        ("where", 0) => tool("l1", "locate", json!({})),
        ("where", 1) => match last_tool_result(request) {
            Some((content, false)) => text(&format!("you are in {content}")),
            _ => text("no location"),
        },
        // A session message that needs an approval.
        ("approve-me", 0) => tool("p9", "publish", json!({"title": "Session notes"})),
        // Sessions: an answer naming the message answered.
        _ => text(&format!("answer to {}", last_user_text(request))),
    }
}
