//! The floor: the same conversation driven by a minimal hand-written loop of
//! `reqwest` + `serde_json`, with no framework.

use serde::Serialize;
use serde_json::{Value, json};

/// What the `lookup` tool answers, shared with the toolloop driver so both
/// loops feed the model the same bytes.
pub(crate) fn lookup(key: &str) -> String {
    format!("value of {key}: 42")
}

#[derive(Serialize)]
struct OpenAiRequest<'a> {
    model: &'a str,
    messages: &'a [Value],
    tools: &'a Value,
}

/// Runs one conversation against `base` (OpenAI format); returns model calls.
pub(crate) async fn openai_conversation(client: &reqwest::Client, base: &str) -> usize {
    let tools = json!([{
        "type": "function",
        "function": {
            "name": "lookup", "description": "Look a key up.",
            "parameters": {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}
        }
    }]);
    let mut messages = vec![
        json!({"role": "system", "content": "You look keys up."}),
        json!({"role": "user", "content": "Look up every key."}),
    ];
    let mut calls = 0;
    loop {
        crate::measure::stamp();
        let body = serde_json::to_vec(&OpenAiRequest { model: "stub", messages: &messages, tools: &tools }).unwrap();
        let response = client
            .post(format!("{base}/v1/chat/completions"))
            .header("authorization", "Bearer sk-bench")
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        calls += 1;
        let mut response: Value = serde_json::from_slice(&response).unwrap();
        let message = response["choices"][0]["message"].take();
        let tool_calls = message["tool_calls"].as_array().cloned().unwrap_or_default();
        messages.push(message);
        if tool_calls.is_empty() {
            return calls;
        }
        for call in tool_calls {
            let arguments: Value = serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
            let content = lookup(arguments["key"].as_str().unwrap());
            messages.push(json!({"role": "tool", "tool_call_id": call["id"], "content": content}));
        }
    }
}

#[derive(Serialize)]
struct AnthropicRequest<'a> {
    model: &'a str,
    max_tokens: u32,
    system: &'a str,
    messages: &'a [Value],
    tools: &'a Value,
}

/// Runs one conversation against `base` (Anthropic format); returns model calls.
pub(crate) async fn anthropic_conversation(client: &reqwest::Client, base: &str) -> usize {
    let tools = json!([{
        "name": "lookup", "description": "Look a key up.",
        "input_schema": {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}
    }]);
    let mut messages = vec![json!({"role": "user", "content": "Look up every key."})];
    let mut calls = 0;
    loop {
        let request = AnthropicRequest {
            model: "stub",
            max_tokens: 1024,
            system: "You look keys up.",
            messages: &messages,
            tools: &tools,
        };
        let response = client
            .post(format!("{base}/v1/messages"))
            .header("x-api-key", "sk-bench")
            .header("anthropic-version", "2023-06-01")
            .header("content-type", "application/json")
            .body(serde_json::to_vec(&request).unwrap())
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        calls += 1;
        let mut response: Value = serde_json::from_slice(&response).unwrap();
        let content = response["content"].take();
        let results: Vec<Value> = content
            .as_array()
            .unwrap()
            .iter()
            .filter(|block| block["type"] == "tool_use")
            .map(|block| {
                json!({"type": "tool_result", "tool_use_id": block["id"], "content": lookup(block["input"]["key"].as_str().unwrap())})
            })
            .collect();
        messages.push(json!({"role": "assistant", "content": content}));
        if results.is_empty() {
            return calls;
        }
        messages.push(json!({"role": "user", "content": results}));
    }
}

#[derive(Serialize)]
struct ResponsesRequest<'a> {
    model: &'a str,
    instructions: &'a str,
    input: &'a [Value],
    tools: &'a Value,
    store: bool,
    include: [&'a str; 1],
}

/// Runs one conversation against `base` (OpenAI Responses format, stateless:
/// every reasoning item sent back); returns model calls.
pub(crate) async fn responses_conversation(client: &reqwest::Client, base: &str) -> usize {
    let tools = json!([{
        "type": "function", "name": "lookup", "description": "Look a key up.",
        "parameters": {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}
    }]);
    let mut input = vec![json!({"role": "user", "content": [{"type": "input_text", "text": "Look up every key."}]})];
    let mut calls = 0;
    loop {
        crate::measure::stamp();
        let request = ResponsesRequest {
            model: "stub",
            instructions: "You look keys up.",
            input: &input,
            tools: &tools,
            store: false,
            include: ["reasoning.encrypted_content"],
        };
        let response = client
            .post(format!("{base}/v1/responses"))
            .header("authorization", "Bearer sk-bench")
            .header("content-type", "application/json")
            .body(serde_json::to_vec(&request).unwrap())
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        calls += 1;
        let mut response: Value = serde_json::from_slice(&response).unwrap();
        let Value::Array(output) = response["output"].take() else { panic!("stub: output is an array") };
        let mut results = Vec::new();
        for item in output {
            if item["type"] == "function_call" {
                let arguments: Value = serde_json::from_str(item["arguments"].as_str().unwrap()).unwrap();
                let output = lookup(arguments["key"].as_str().unwrap());
                results.push(json!({"type": "function_call_output", "call_id": item["call_id"], "output": output}));
                input.push(json!({
                    "type": "function_call", "call_id": item["call_id"], "name": item["name"], "arguments": item["arguments"]
                }));
            } else if item["type"] == "reasoning" {
                input.push(json!({
                    "type": "reasoning", "id": item["id"], "summary": item["summary"],
                    "encrypted_content": item["encrypted_content"]
                }));
            } else {
                input.push(item);
            }
        }
        if results.is_empty() {
            return calls;
        }
        input.extend(results);
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GeminiRequest<'a> {
    system_instruction: &'a Value,
    contents: &'a [Value],
    tools: &'a Value,
}

/// Runs one conversation against `base` (Gemini format, each model turn
/// sent back as received, thought signatures included); returns model calls.
pub(crate) async fn gemini_conversation(client: &reqwest::Client, base: &str) -> usize {
    let tools = json!([{"functionDeclarations": [{
        "name": "lookup", "description": "Look a key up.",
        "parametersJsonSchema": {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}
    }]}]);
    let system = json!({"parts": [{"text": "You look keys up."}]});
    let mut contents = vec![json!({"role": "user", "parts": [{"text": "Look up every key."}]})];
    let mut calls = 0;
    loop {
        crate::measure::stamp();
        let request = GeminiRequest { system_instruction: &system, contents: &contents, tools: &tools };
        let response = client
            .post(format!("{base}/v1beta/models/stub:generateContent"))
            .header("x-goog-api-key", "bench-key")
            .header("content-type", "application/json")
            .body(serde_json::to_vec(&request).unwrap())
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        calls += 1;
        let mut response: Value = serde_json::from_slice(&response).unwrap();
        let content = response["candidates"][0]["content"].take();
        let results: Vec<Value> = content["parts"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|part| part.get("functionCall"))
            .map(|call| {
                let output = lookup(call["args"]["key"].as_str().unwrap());
                json!({"functionResponse": {"id": call["id"], "name": call["name"], "response": {"output": output}}})
            })
            .collect();
        contents.push(content);
        if results.is_empty() {
            return calls;
        }
        contents.push(json!({"role": "user", "parts": results}));
    }
}
