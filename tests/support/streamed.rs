//! A whole (non-streamed) response body turned into the stream the same API
//! sends for it with `"stream": true`, event by event as the API documents
//! it: so a fake can answer either way, and a test can check that a streamed
//! call accumulates to exactly what the non-streamed call returns.
//!
//! Text, reasoning and argument JSON are cut into small deltas (a few
//! characters, on character boundaries), so that decoders meet pieces.

use std::time::Duration;

use serde_json::{Value, json};

use crate::{Reply, StreamEnd};

/// How many characters each delta carries.
const DELTA: usize = 5;

/// `text` in pieces of at most [`DELTA`] characters (none for "").
fn pieces(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(DELTA).map(|piece| piece.iter().collect()).collect()
}

fn sse_event(name: &str, data: &Value) -> Vec<u8> {
    format!("event: {name}\ndata: {data}\n\n").into_bytes()
}

/// The events as a chunked reply, one event a chunk.
pub fn reply(content_type: &str, events: Vec<Vec<u8>>) -> Reply {
    Reply::stream(content_type, events.into_iter().map(|event| (Duration::ZERO, event)).collect(), StreamEnd::Complete)
}

/// The Anthropic Messages stream for a whole `message`: `message_start`,
/// each content block (`content_block_start`, its deltas, including
/// `signature_delta` for thinking, `content_block_stop`), `message_delta`
/// with the stop reason and output tokens, `message_stop`.
pub fn anthropic(message: &Value) -> Vec<Vec<u8>> {
    let usage = &message["usage"];
    let mut start_usage = usage.clone();
    start_usage["output_tokens"] = json!(1);
    let mut start = message.clone();
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    start["stop_sequence"] = Value::Null;
    start["usage"] = start_usage;
    let mut events = vec![sse_event("message_start", &json!({"type": "message_start", "message": start}))];
    events.push(sse_event("ping", &json!({"type": "ping"})));
    for (index, block) in message["content"].as_array().into_iter().flatten().enumerate() {
        let delta = |delta: Value| {
            sse_event("content_block_delta", &json!({"type": "content_block_delta", "index": index, "delta": delta}))
        };
        let opened = match block["type"].as_str() {
            Some("text") => json!({"type": "text", "text": ""}),
            Some("thinking") => json!({"type": "thinking", "thinking": "", "signature": ""}),
            Some("tool_use") => json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}),
            _ => block.clone(),
        };
        events.push(sse_event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": opened}),
        ));
        match block["type"].as_str() {
            Some("text") => {
                for piece in pieces(block["text"].as_str().unwrap_or_default()) {
                    events.push(delta(json!({"type": "text_delta", "text": piece})));
                }
            }
            Some("thinking") => {
                for piece in pieces(block["thinking"].as_str().unwrap_or_default()) {
                    events.push(delta(json!({"type": "thinking_delta", "thinking": piece})));
                }
                events.push(delta(json!({"type": "signature_delta", "signature": block["signature"]})));
            }
            Some("tool_use") => {
                for piece in pieces(&block["input"].to_string()) {
                    events.push(delta(json!({"type": "input_json_delta", "partial_json": piece})));
                }
            }
            _ => {}
        }
        events.push(sse_event("content_block_stop", &json!({"type": "content_block_stop", "index": index})));
    }
    events.push(sse_event(
        "message_delta",
        &json!({"type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": message["stop_sequence"]},
            "usage": {"output_tokens": usage["output_tokens"]}}),
    ));
    events.push(sse_event("message_stop", &json!({"type": "message_stop"})));
    events
}

/// The OpenAI Responses stream for a whole `response`: `response.created`,
/// each output item (`response.output_item.added`, its parts and deltas,
/// `response.output_item.done` with the whole item), `response.completed`.
pub fn responses(response: &Value) -> Vec<Vec<u8>> {
    let mut sequence = 0u64;
    let mut events = Vec::new();
    let mut push = |mut event: Value| {
        event["sequence_number"] = json!(sequence);
        sequence += 1;
        events.push(sse_event(event["type"].as_str().unwrap_or("message"), &event));
    };
    let mut created = response.clone();
    created["status"] = json!("in_progress");
    created["output"] = json!([]);
    created["usage"] = Value::Null;
    push(json!({"type": "response.created", "response": created.clone()}));
    push(json!({"type": "response.in_progress", "response": created}));
    for (output_index, item) in response["output"].as_array().into_iter().flatten().enumerate() {
        let item_id = item["id"].clone();
        let mut added = item.clone();
        match item["type"].as_str() {
            Some("reasoning") => added["summary"] = json!([]),
            Some("message") => {
                added["content"] = json!([]);
                added["status"] = json!("in_progress");
            }
            Some("function_call") => {
                added["arguments"] = json!("");
                added["status"] = json!("in_progress");
            }
            _ => {}
        }
        push(json!({"type": "response.output_item.added", "output_index": output_index, "item": added}));
        match item["type"].as_str() {
            Some("reasoning") => {
                for (summary_index, part) in item["summary"].as_array().into_iter().flatten().enumerate() {
                    let text = part["text"].as_str().unwrap_or_default();
                    push(json!({"type": "response.reasoning_summary_part.added", "item_id": item_id,
                        "output_index": output_index, "summary_index": summary_index,
                        "part": {"type": "summary_text", "text": ""}}));
                    for piece in pieces(text) {
                        push(json!({"type": "response.reasoning_summary_text.delta", "item_id": item_id,
                            "output_index": output_index, "summary_index": summary_index, "delta": piece}));
                    }
                    push(json!({"type": "response.reasoning_summary_text.done", "item_id": item_id,
                        "output_index": output_index, "summary_index": summary_index, "text": text}));
                }
            }
            Some("message") => {
                for (content_index, part) in item["content"].as_array().into_iter().flatten().enumerate() {
                    let (kind, field, delta_type) = if part["type"] == "refusal" {
                        ("refusal", "refusal", "response.refusal.delta")
                    } else {
                        ("output_text", "text", "response.output_text.delta")
                    };
                    let text = part[field].as_str().unwrap_or_default();
                    let mut empty = json!({"type": kind});
                    empty[field] = json!("");
                    if kind == "output_text" {
                        empty["annotations"] = json!([]);
                    }
                    push(json!({"type": "response.content_part.added", "item_id": item_id,
                        "output_index": output_index, "content_index": content_index, "part": empty}));
                    for piece in pieces(text) {
                        push(json!({"type": delta_type, "item_id": item_id, "output_index": output_index,
                            "content_index": content_index, "delta": piece}));
                    }
                    push(json!({"type": "response.content_part.done", "item_id": item_id,
                        "output_index": output_index, "content_index": content_index, "part": part}));
                }
            }
            Some("function_call") => {
                let arguments = item["arguments"].as_str().unwrap_or_default();
                for piece in pieces(arguments) {
                    push(json!({"type": "response.function_call_arguments.delta", "item_id": item_id,
                        "output_index": output_index, "delta": piece}));
                }
                push(json!({"type": "response.function_call_arguments.done", "item_id": item_id,
                    "output_index": output_index, "arguments": arguments}));
            }
            _ => {}
        }
        push(json!({"type": "response.output_item.done", "output_index": output_index, "item": item}));
    }
    let last = if response["status"] == "incomplete" { "response.incomplete" } else { "response.completed" };
    push(json!({"type": last, "response": response}));
    events
}

/// The OpenAI Chat Completions stream for a whole `completion`: chunks with
/// `choices[0].delta` (role, reasoning, content, tool calls by index), a
/// chunk with the finish reason, a usage chunk (`stream_options.include_usage`)
/// and `[DONE]`.
pub fn chat(completion: &Value) -> Vec<Vec<u8>> {
    let chunk = |choices: Value| {
        json!({"id": completion["id"], "object": "chat.completion.chunk", "created": 1,
            "model": completion["model"], "choices": choices})
    };
    let delta = |delta: Value| chunk(json!([{"index": 0, "delta": delta, "finish_reason": null}]));
    let choice = &completion["choices"][0];
    let message = &choice["message"];
    let mut chunks = vec![delta(json!({"role": "assistant", "content": ""}))];
    for field in ["reasoning_content", "content", "refusal"] {
        for piece in pieces(message[field].as_str().unwrap_or_default()) {
            let mut part = json!({});
            part[field] = json!(piece);
            chunks.push(delta(part));
        }
    }
    for (index, call) in message["tool_calls"].as_array().into_iter().flatten().enumerate() {
        chunks.push(delta(json!({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
            "function": {"name": call["function"]["name"], "arguments": ""}}]})));
        for piece in pieces(call["function"]["arguments"].as_str().unwrap_or_default()) {
            chunks.push(delta(json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})));
        }
    }
    chunks.push(chunk(json!([{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}])));
    let mut usage = chunk(json!([]));
    usage["usage"] = completion["usage"].clone();
    chunks.push(usage);
    let mut frames: Vec<Vec<u8>> = chunks.iter().map(|chunk| format!("data: {chunk}\n\n").into_bytes()).collect();
    frames.push(b"data: [DONE]\n\n".to_vec());
    frames
}

/// The Ollama `/api/chat` stream for a whole `response`: one line a piece of
/// thinking or content, the tool calls whole in one line (as Ollama sends
/// them), and a last line with `done: true`, the done reason and counts.
pub fn ollama(response: &Value) -> Vec<Vec<u8>> {
    let line = |message: Value| json!({"model": response["model"], "created_at": response["created_at"], "message": message, "done": false});
    let message = &response["message"];
    let mut lines = Vec::new();
    for piece in pieces(message["thinking"].as_str().unwrap_or_default()) {
        lines.push(line(json!({"role": "assistant", "content": "", "thinking": piece})));
    }
    for piece in pieces(message["content"].as_str().unwrap_or_default()) {
        lines.push(line(json!({"role": "assistant", "content": piece})));
    }
    if let Some(calls) = message.get("tool_calls") {
        lines.push(line(json!({"role": "assistant", "content": "", "tool_calls": calls})));
    }
    let mut last = response.clone();
    last["message"] = json!({"role": "assistant", "content": ""});
    lines.push(last);
    lines.iter().map(|line| format!("{line}\n").into_bytes()).collect()
}

/// The Gemini `streamGenerateContent?alt=sse` stream for a whole
/// `response`, as the API sends it: each event a whole response holding
/// the next piece of one part (text and thoughts cut into small pieces,
/// a function call whole, with its signature), a text part's signature on
/// an empty text part after its last piece, and the usage and
/// `finishReason` on the last event. Events end with `\r\n\r\n`.
pub fn gemini(response: &Value) -> Vec<Vec<u8>> {
    // As the API streams it: every chunk carries the usage so far (the
    // prompt's whole, the output's growing), the last one the final usage.
    let usage = &response["usageMetadata"];
    let so_far = std::cell::Cell::new(0_u64);
    let chunk = |parts: Value, last: bool| {
        let mut chunk = json!({
            "candidates": [{"content": {"role": "model", "parts": parts}, "index": 0}],
            "modelVersion": response["modelVersion"],
            "responseId": response["responseId"]
        });
        if last {
            chunk["candidates"][0]["finishReason"] = response["candidates"][0]["finishReason"].clone();
            chunk["usageMetadata"] = usage.clone();
        } else if usage.is_object() {
            let output = usage["candidatesTokenCount"].as_u64().unwrap_or(0);
            so_far.set((so_far.get() + 1).min(output));
            let mut partial = usage.clone();
            partial["candidatesTokenCount"] = json!(so_far.get());
            partial["totalTokenCount"] = json!(usage["promptTokenCount"].as_u64().unwrap_or(0) + so_far.get());
            if let Some(object) = partial.as_object_mut() {
                object.remove("thoughtsTokenCount");
            }
            chunk["usageMetadata"] = partial;
        }
        chunk
    };
    let mut chunks = Vec::new();
    for part in response["candidates"][0]["content"]["parts"].as_array().into_iter().flatten() {
        if part.get("functionCall").is_some() {
            chunks.push(chunk(json!([part]), false));
            continue;
        }
        let thought = part["thought"] == json!(true);
        for piece in pieces(part["text"].as_str().unwrap_or_default()) {
            let mut piece = json!({"text": piece});
            if thought {
                piece["thought"] = json!(true);
            }
            chunks.push(chunk(json!([piece]), false));
        }
        if let Some(signature) = part.get("thoughtSignature") {
            let mut signed = json!({"text": "", "thoughtSignature": signature});
            if thought {
                signed["thought"] = json!(true);
            }
            chunks.push(chunk(json!([signed]), false));
        }
    }
    chunks.push(chunk(json!([]), true));
    chunks.iter().map(|chunk| format!("data: {chunk}\r\n\r\n").into_bytes()).collect()
}
