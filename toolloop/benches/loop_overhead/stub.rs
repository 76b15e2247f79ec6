//! A fast stub LLM server on 127.0.0.1 speaking the OpenAI Chat Completions,
//! OpenAI Responses and Anthropic Messages formats, with scripted tool-call conversations.
//!
//! Iteration `i` of a conversation (counted from the assistant messages, or
//! the Responses `function_call` items, in the request) asks for the `lookup` tool until iteration `iterations - 1`, which
//! answers with text. It is a plain HTTP/1.1 keep-alive server on tokio so
//! that its own cost stays small and out of the client's measurements (it
//! runs in another process).

use std::sync::Arc;

use serde::Deserialize;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[derive(Deserialize)]
struct Request {
    #[serde(default)]
    messages: Vec<RoleOnly>,
    /// Responses API input items.
    #[serde(default)]
    input: Vec<RoleOnly>,
    /// Gemini contents.
    #[serde(default)]
    contents: Vec<RoleOnly>,
}

#[derive(Deserialize)]
struct RoleOnly {
    #[serde(default)]
    role: String,
    #[serde(default, rename = "type")]
    kind: String,
}

/// Serves until the process is killed; prints the port on stdout first.
pub(crate) async fn serve(iterations: usize) -> std::io::Result<()> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    println!("{}", listener.local_addr()?.port());
    let iterations = Arc::new(iterations);
    loop {
        let (stream, _) = listener.accept().await?;
        stream.set_nodelay(true)?;
        let iterations = Arc::clone(&iterations);
        tokio::spawn(async move {
            let _ = connection(stream, *iterations).await;
        });
    }
}

async fn connection(mut stream: TcpStream, iterations: usize) -> std::io::Result<()> {
    let mut buffer = Vec::with_capacity(64 * 1024);
    loop {
        let Some((path, body)) = read_request(&mut stream, &mut buffer).await? else { return Ok(()) };
        let response = respond(&path, &body, iterations);
        let head =
            format!("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n", response.len());
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(&response).await?;
    }
}

/// Reads one request; `None` when the client closed the connection.
async fn read_request(stream: &mut TcpStream, buffer: &mut Vec<u8>) -> std::io::Result<Option<(String, Vec<u8>)>> {
    let header_end = loop {
        if let Some(end) = find(buffer, b"\r\n\r\n") {
            break end;
        }
        buffer.reserve(16 * 1024);
        if stream.read_buf(buffer).await? == 0 {
            return Ok(None);
        }
    };
    let head = String::from_utf8_lossy(&buffer[..header_end]).into_owned();
    let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
    let length = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-length").then(|| value.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    let body_start = header_end + 4;
    while buffer.len() < body_start + length {
        buffer.reserve(body_start + length - buffer.len());
        if stream.read_buf(buffer).await? == 0 {
            return Ok(None);
        }
    }
    let body = buffer[body_start..body_start + length].to_vec();
    buffer.drain(..body_start + length);
    Ok(Some((path, body)))
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|window| window == needle)
}

fn respond(path: &str, body: &[u8], iterations: usize) -> Vec<u8> {
    let request: Request = serde_json::from_slice(body).expect("stub: request is JSON with messages");
    let iteration = request.messages.iter().filter(|m| m.role == "assistant").count()
        + request.input.iter().filter(|item| item.kind == "function_call").count()
        + request.contents.iter().filter(|content| content.role == "model").count();
    let done = iteration + 1 >= iterations;
    let key = format!("k{iteration}");
    let input_tokens = 20 + 30 * iteration;
    let response = if path.ends_with("/messages") {
        let content = if done {
            json!([{"type": "text", "text": "All keys looked up."}])
        } else {
            json!([
                {"type": "text", "text": "Let me look that up."},
                {"type": "tool_use", "id": format!("toolu_{iteration}"), "name": "lookup", "input": {"key": key}}
            ])
        };
        json!({
            "id": format!("msg_{iteration}"), "type": "message", "role": "assistant", "model": "stub",
            "content": content,
            "stop_reason": if done { "end_turn" } else { "tool_use" }, "stop_sequence": null,
            "usage": {"input_tokens": input_tokens, "output_tokens": 12}
        })
    } else if path.ends_with(":generateContent") {
        // As Gemini 3 answers: a signature on the call, else on the last part.
        let signature = format!("c2lnbmF0dXJl{iteration:04}");
        let parts = if done {
            json!([{"text": "All keys looked up.", "thoughtSignature": signature}])
        } else {
            json!([
                {"text": "Let me look that up."},
                {"functionCall": {"id": format!("fc{iteration}"), "name": "lookup", "args": {"key": key}}, "thoughtSignature": signature}
            ])
        };
        json!({
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": input_tokens, "candidatesTokenCount": 12, "thoughtsTokenCount": 8},
            "modelVersion": "stub", "responseId": format!("resp{iteration}")
        })
    } else if path.ends_with("/responses") {
        let mut output = vec![json!({
            "type": "reasoning", "id": format!("rs_{iteration}"), "summary": [],
            "encrypted_content": format!("gAAAA-stub-{iteration}")
        })];
        if done {
            output.push(json!({
                "type": "message", "id": format!("msg_{iteration}"), "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": "All keys looked up.", "annotations": []}]
            }));
        } else {
            output.push(json!({
                "type": "function_call", "id": format!("fc_{iteration}"), "call_id": format!("call_{iteration}"),
                "name": "lookup", "arguments": json!({"key": key}).to_string(), "status": "completed"
            }));
        }
        json!({
            "id": format!("resp_{iteration}"), "object": "response", "status": "completed", "model": "stub",
            "output": output,
            "usage": {
                "input_tokens": input_tokens, "output_tokens": 12, "total_tokens": input_tokens + 12,
                "output_tokens_details": {"reasoning_tokens": 8}
            }
        })
    } else {
        let message = if done {
            json!({"role": "assistant", "content": "All keys looked up."})
        } else {
            json!({
                "role": "assistant", "content": "Let me look that up.",
                "tool_calls": [{
                    "id": format!("call_{iteration}"), "type": "function",
                    "function": {"name": "lookup", "arguments": json!({"key": key}).to_string()}
                }]
            })
        };
        json!({
            "id": format!("chatcmpl-{iteration}"), "object": "chat.completion", "created": 0, "model": "stub",
            "choices": [{"index": 0, "message": message, "finish_reason": if done { "stop" } else { "tool_calls" }}],
            "usage": {"prompt_tokens": input_tokens, "completion_tokens": 12, "total_tokens": input_tokens + 12}
        })
    };
    serde_json::to_vec(&response).expect("stub: response serialises")
}
