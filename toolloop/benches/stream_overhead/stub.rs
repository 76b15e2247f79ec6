//! A stub LLM server on 127.0.0.1 that streams one scripted answer in the
//! Anthropic Messages or the OpenAI Chat Completions format: a text block of
//! `texts` text deltas, then a `lookup` tool call whose arguments arrive in
//! `arguments` deltas, then the stop reason and usage, as the real APIs
//! stream them (every event its own HTTP chunk).
//!
//! The mix and the pacing are in the URL path the client is pointed at:
//! `/{texts}/{arguments}/{pace_ms}/v1/messages` (or `.../chat/completions`).
//! With a pace of 0 the whole body goes out in one write (the client reads
//! events in batches: the cost of parsing alone); with a pace, the response
//! head goes out at once, then each event on its own after `pace_ms`, as a
//! model writes them (the client wakes up for every event).
//!
//! The first text delta starts with `@` and the server's wall-clock time in
//! nanoseconds when it wrote that delta, which is also the first byte of the
//! body: the client subtracts it from the time the text event reaches it.
//! It runs in another process so that its cost stays out of the client's.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Serves until the process is killed; prints the port on stdout first.
pub(crate) async fn serve() -> std::io::Result<()> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    println!("{}", listener.local_addr()?.port());
    loop {
        let (stream, _) = listener.accept().await?;
        stream.set_nodelay(true)?;
        tokio::spawn(async move {
            let _ = connection(stream).await;
        });
    }
}

/// What one request asks the stub for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Mix {
    /// Text deltas.
    pub(crate) texts: usize,
    /// Argument deltas of the tool call.
    pub(crate) arguments: usize,
}

impl Mix {
    /// The SSE events of one response in `format` (each `data:` line one event).
    pub(crate) fn events(self, anthropic: bool) -> usize {
        // Anthropic: message_start, ping, two block starts and stops,
        // message_delta, message_stop. OpenAI: the role chunk, the chunk
        // that names the tool call, the finish chunk, the usage chunk, [DONE].
        self.texts + self.arguments + if anthropic { 8 } else { 5 }
    }
}

async fn connection(mut stream: TcpStream) -> std::io::Result<()> {
    let mut buffer = Vec::with_capacity(64 * 1024);
    while let Some(path) = read_request(&mut stream, &mut buffer).await? {
        let mut parts = path.trim_start_matches('/').split('/');
        let mut number = || parts.next().and_then(|part| part.parse::<usize>().ok()).expect("stub: /texts/args/pace/");
        let mix = Mix { texts: number(), arguments: number() };
        let pace = Duration::from_millis(number() as u64);
        let anthropic = path.ends_with("/messages");
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\
                    transfer-encoding: chunked\r\n\r\n";
        let events = if anthropic { anthropic_events(mix) } else { openai_events(mix) };
        let first_text = first_text(anthropic);
        if pace.is_zero() {
            let mut body = Vec::from(head.as_bytes());
            for (i, event) in events.iter().enumerate() {
                chunk(&mut body, &stamped(event, i == first_text));
            }
            body.extend_from_slice(b"0\r\n\r\n");
            stream.write_all(&body).await?;
            continue;
        }
        stream.write_all(head.as_bytes()).await?;
        // The first write carries everything up to the first text delta:
        // the body's first byte and its first text arrive together.
        let mut first = Vec::new();
        for (i, event) in events[..=first_text].iter().enumerate() {
            tokio::time::sleep(if i == 0 { pace } else { Duration::ZERO }).await;
            chunk(&mut first, &stamped(event, i == first_text));
        }
        stream.write_all(&first).await?;
        for event in &events[first_text + 1..] {
            tokio::time::sleep(pace).await;
            let mut bytes = Vec::new();
            chunk(&mut bytes, event);
            stream.write_all(&bytes).await?;
        }
        stream.write_all(b"0\r\n\r\n").await?;
    }
    Ok(())
}

/// The position of the first text delta in a format's event list.
fn first_text(anthropic: bool) -> usize {
    if anthropic { 3 } else { 1 }
}

/// The marker the first text delta carries, replaced by the time it is written.
const STAMP: &str = "@0000000000000000000";

fn stamped(event: &str, first_text: bool) -> String {
    if first_text {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos();
        event.replacen(STAMP, &format!("@{now:019}"), 1)
    } else {
        event.to_owned()
    }
}

/// The server's time stamp in a first text delta, in nanoseconds since the epoch.
pub(crate) fn stamp_of(text: &str) -> Option<u128> {
    text.strip_prefix('@')?.get(..19)?.parse().ok()
}

fn chunk(out: &mut Vec<u8>, data: &str) {
    out.extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes());
    out.extend_from_slice(data.as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// The text of text delta `i`: a stamp first, then a word or two, as models
/// stream them.
fn text_piece(i: usize) -> String {
    const WORDS: [&str; 8] = [" The", " forecast", " for", " Paris", " shows", " light", " rain,", " so"];
    if i == 0 { format!("{STAMP} Let me check") } else { WORDS[i % WORDS.len()].to_owned() }
}

/// The tool call's arguments (ASCII), cut into exactly `pieces` fragments of
/// about 5 bytes.
fn argument_pieces(pieces: usize) -> Vec<String> {
    let pieces = pieces.max(1);
    let mut words = String::new();
    while words.len() + 12 < pieces * 5 {
        words.push_str(if words.is_empty() { "weather" } else { " weather" });
    }
    let arguments = json!({ "key": words }).to_string();
    let cut = |i: usize| i * arguments.len() / pieces;
    (0..pieces).map(|i| arguments[cut(i)..cut(i + 1)].to_owned()).collect()
}

fn anthropic_events(mix: Mix) -> Vec<String> {
    let sse = |name: &str, data: serde_json::Value| format!("event: {name}\ndata: {data}\n\n");
    let mut events = vec![
        sse(
            "message_start",
            json!({"type": "message_start", "message": {
                "id": "msg_01", "type": "message", "role": "assistant", "model": "stub", "content": [],
                "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": 320, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 1}
            }}),
        ),
        sse("ping", json!({"type": "ping"})),
        sse(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
    ];
    for i in 0..mix.texts {
        events.push(sse(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text_piece(i)}}),
        ));
    }
    events.push(sse("content_block_stop", json!({"type": "content_block_stop", "index": 0})));
    events.push(sse(
        "content_block_start",
        json!({"type": "content_block_start", "index": 1,
               "content_block": {"type": "tool_use", "id": "toolu_01", "name": "lookup", "input": {}}}),
    ));
    for piece in argument_pieces(mix.arguments) {
        events.push(sse(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 1,
                   "delta": {"type": "input_json_delta", "partial_json": piece}}),
        ));
    }
    events.push(sse("content_block_stop", json!({"type": "content_block_stop", "index": 1})));
    events.push(sse(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null},
               "usage": {"output_tokens": mix.texts + mix.arguments}}),
    ));
    events.push(sse("message_stop", json!({"type": "message_stop"})));
    events
}

fn openai_events(mix: Mix) -> Vec<String> {
    let chunk = |delta: serde_json::Value, finish: Option<&str>| {
        let data = json!({
            "id": "chatcmpl-01", "object": "chat.completion.chunk", "created": 1_764_000_000, "model": "stub",
            "system_fingerprint": "fp_stub", "service_tier": "default",
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
            "usage": null
        });
        format!("data: {data}\n\n")
    };
    let mut events = vec![chunk(json!({"role": "assistant", "content": "", "refusal": null}), None)];
    for i in 0..mix.texts {
        events.push(chunk(json!({"content": text_piece(i)}), None));
    }
    events.push(chunk(
        json!({"tool_calls": [{"index": 0, "id": "call_01", "type": "function",
                               "function": {"name": "lookup", "arguments": ""}}]}),
        None,
    ));
    for piece in argument_pieces(mix.arguments) {
        events.push(chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}), None));
    }
    events.push(chunk(json!({}), Some("tool_calls")));
    let usage = json!({
        "id": "chatcmpl-01", "object": "chat.completion.chunk", "created": 1_764_000_000, "model": "stub",
        "system_fingerprint": "fp_stub", "choices": [],
        "usage": {"prompt_tokens": 320, "completion_tokens": mix.texts + mix.arguments,
                  "total_tokens": 320 + mix.texts + mix.arguments}
    });
    events.push(format!("data: {usage}\n\n"));
    events.push("data: [DONE]\n\n".to_owned());
    events
}

/// Reads one request's head and body; returns its path, or `None` when the
/// client closed the connection.
async fn read_request(stream: &mut TcpStream, buffer: &mut Vec<u8>) -> std::io::Result<Option<String>> {
    let header_end = loop {
        if let Some(end) = buffer.windows(4).position(|window| window == b"\r\n\r\n") {
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
    let body: serde_json::Value =
        serde_json::from_slice(&buffer[body_start..body_start + length]).expect("stub: the request body is JSON");
    assert_eq!(body["stream"], true, "stub: the request asks for a stream");
    buffer.drain(..body_start + length);
    Ok(Some(path))
}
