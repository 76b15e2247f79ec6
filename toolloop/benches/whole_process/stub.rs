//! A fast stub of the OpenAI Chat Completions and Anthropic Messages APIs on
//! 127.0.0.1, serving scripted tool-call conversations, whole or streamed.
//!
//! The client is pointed at `http://127.0.0.1:PORT/{calls}`: call `i` of a
//! conversation (counted from the assistant messages in the request) asks
//! for the `lookup` tool until call `calls - 1`, which answers with text. A
//! request with `"stream": true` gets real server-sent events, every event
//! its own HTTP chunk, the whole body in one write: the answer's text is
//! 1 KiB in 8-character deltas (128 text events), then the tool call with its
//! arguments in two deltas, then the stop reason and usage; about 135 events
//! per call on either wire. A request without it gets one JSON body. A plain
//! HTTP/1.1 keep-alive server on tokio, in its own process, so that its work
//! stays out of the client's measurements.

use serde::Deserialize;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Text events per streamed answer.
pub(crate) const TEXT_DELTAS: usize = 128;

#[derive(Deserialize)]
struct Request {
    #[serde(default)]
    messages: Vec<RoleOnly>,
    #[serde(default)]
    stream: bool,
}

#[derive(Deserialize)]
struct RoleOnly {
    #[serde(default)]
    role: String,
}

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

async fn connection(mut stream: TcpStream) -> std::io::Result<()> {
    let mut buffer = Vec::with_capacity(64 * 1024);
    let mut out = Vec::with_capacity(64 * 1024);
    while let Some((path, body)) = read_request(&mut stream, &mut buffer).await? {
        out.clear();
        respond(&path, &body, &mut out);
        stream.write_all(&out).await?;
    }
    Ok(())
}

/// Reads one request; `None` when the client closed the connection.
async fn read_request(stream: &mut TcpStream, buffer: &mut Vec<u8>) -> std::io::Result<Option<(String, Vec<u8>)>> {
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
        .expect("stub: the request has a content-length");
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

/// Writes the whole HTTP response to `path`'s request `body` into `out`.
fn respond(path: &str, body: &[u8], out: &mut Vec<u8>) {
    let request: Request = serde_json::from_slice(body).expect("stub: the request is JSON with messages");
    let calls: usize = path
        .trim_start_matches('/')
        .split('/')
        .next()
        .and_then(|calls| calls.parse().ok())
        .expect("stub: the path starts with /{calls}/");
    let call = request.messages.iter().filter(|message| message.role == "assistant").count();
    let done = call + 1 >= calls;
    let anthropic = path.ends_with("/messages");
    let turn = Turn { call, done };
    if request.stream {
        out.extend_from_slice(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\
              transfer-encoding: chunked\r\n\r\n",
        );
        let events = if anthropic { turn.anthropic_events() } else { turn.openai_events() };
        for event in events {
            out.extend_from_slice(format!("{:x}\r\n", event.len()).as_bytes());
            out.extend_from_slice(event.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"0\r\n\r\n");
    } else {
        let body = if anthropic { turn.anthropic_body() } else { turn.openai_body() };
        let body = serde_json::to_vec(&body).expect("stub: the response serialises");
        out.extend_from_slice(
            format!("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n", body.len())
                .as_bytes(),
        );
        out.extend_from_slice(&body);
    }
}

/// One model call of a conversation.
struct Turn {
    /// 0-based.
    call: usize,
    /// The last call: text only.
    done: bool,
}

impl Turn {
    fn key(&self) -> String {
        format!("k{}", self.call)
    }

    fn input_tokens(&self) -> usize {
        20 + 30 * self.call
    }

    fn openai_body(&self) -> serde_json::Value {
        let message = if self.done {
            json!({"role": "assistant", "content": "All keys looked up."})
        } else {
            json!({
                "role": "assistant", "content": "Let me look that up.",
                "tool_calls": [{
                    "id": format!("call_{}", self.call), "type": "function",
                    "function": {"name": "lookup", "arguments": json!({"key": self.key()}).to_string()}
                }]
            })
        };
        json!({
            "id": format!("chatcmpl-{}", self.call), "object": "chat.completion", "created": 0, "model": "stub",
            "choices": [{"index": 0, "message": message, "finish_reason": if self.done { "stop" } else { "tool_calls" }}],
            "usage": {"prompt_tokens": self.input_tokens(), "completion_tokens": 12, "total_tokens": self.input_tokens() + 12}
        })
    }

    fn anthropic_body(&self) -> serde_json::Value {
        let content = if self.done {
            json!([{"type": "text", "text": "All keys looked up."}])
        } else {
            json!([
                {"type": "text", "text": "Let me look that up."},
                {"type": "tool_use", "id": format!("toolu_{}", self.call), "name": "lookup", "input": {"key": self.key()}}
            ])
        };
        json!({
            "id": format!("msg_{}", self.call), "type": "message", "role": "assistant", "model": "stub",
            "content": content,
            "stop_reason": if self.done { "end_turn" } else { "tool_use" }, "stop_sequence": null,
            "usage": {"input_tokens": self.input_tokens(), "output_tokens": 12}
        })
    }

    /// The tool call's arguments in two pieces.
    fn argument_pieces(&self) -> [String; 2] {
        let arguments = json!({"key": self.key()}).to_string();
        let (first, second) = arguments.split_at(arguments.len() / 2);
        [first.to_owned(), second.to_owned()]
    }

    fn anthropic_events(&self) -> Vec<String> {
        let sse = |name: &str, data: serde_json::Value| format!("event: {name}\ndata: {data}\n\n");
        let mut events = vec![
            sse(
                "message_start",
                json!({"type": "message_start", "message": {
                    "id": format!("msg_{}", self.call), "type": "message", "role": "assistant", "model": "stub",
                    "content": [], "stop_reason": null, "stop_sequence": null,
                    "usage": {"input_tokens": self.input_tokens(), "cache_creation_input_tokens": 0,
                              "cache_read_input_tokens": 0, "output_tokens": 1}
                }}),
            ),
            sse("ping", json!({"type": "ping"})),
            sse(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            ),
        ];
        for i in 0..TEXT_DELTAS {
            events.push(sse(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0,
                       "delta": {"type": "text_delta", "text": text_piece(i)}}),
            ));
        }
        events.push(sse("content_block_stop", json!({"type": "content_block_stop", "index": 0})));
        if !self.done {
            events.push(sse(
                "content_block_start",
                json!({"type": "content_block_start", "index": 1, "content_block":
                       {"type": "tool_use", "id": format!("toolu_{}", self.call), "name": "lookup", "input": {}}}),
            ));
            for piece in self.argument_pieces() {
                events.push(sse(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 1,
                           "delta": {"type": "input_json_delta", "partial_json": piece}}),
                ));
            }
            events.push(sse("content_block_stop", json!({"type": "content_block_stop", "index": 1})));
        }
        events.push(sse(
            "message_delta",
            json!({"type": "message_delta",
                   "delta": {"stop_reason": if self.done { "end_turn" } else { "tool_use" }, "stop_sequence": null},
                   "usage": {"output_tokens": TEXT_DELTAS + 4}}),
        ));
        events.push(sse("message_stop", json!({"type": "message_stop"})));
        events
    }

    fn openai_events(&self) -> Vec<String> {
        let chunk = |delta: serde_json::Value, finish: Option<&str>| {
            let data = json!({
                "id": format!("chatcmpl-{}", self.call), "object": "chat.completion.chunk", "created": 1_764_000_000,
                "model": "stub", "system_fingerprint": "fp_stub", "service_tier": "default",
                "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
                "usage": null
            });
            format!("data: {data}\n\n")
        };
        let mut events = vec![chunk(json!({"role": "assistant", "content": "", "refusal": null}), None)];
        for i in 0..TEXT_DELTAS {
            events.push(chunk(json!({"content": text_piece(i)}), None));
        }
        if !self.done {
            events.push(chunk(
                json!({"tool_calls": [{"index": 0, "id": format!("call_{}", self.call), "type": "function",
                                       "function": {"name": "lookup", "arguments": ""}}]}),
                None,
            ));
            for piece in self.argument_pieces() {
                events.push(chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}), None));
            }
        }
        events.push(chunk(json!({}), Some(if self.done { "stop" } else { "tool_calls" })));
        let usage = json!({
            "id": format!("chatcmpl-{}", self.call), "object": "chat.completion.chunk", "created": 1_764_000_000,
            "model": "stub", "system_fingerprint": "fp_stub", "choices": [],
            "usage": {"prompt_tokens": self.input_tokens(), "completion_tokens": TEXT_DELTAS + 4,
                      "total_tokens": self.input_tokens() + TEXT_DELTAS + 4}
        });
        events.push(format!("data: {usage}\n\n"));
        events.push("data: [DONE]\n\n".to_owned());
        events
    }
}

/// Text delta `i`: eight characters.
fn text_piece(i: usize) -> &'static str {
    const WORDS: [&str; 8] =
        [" The for", "ecast fo", "r Paris ", "shows li", "ght rain", ", so tak", "e an umb", "rella.  "];
    WORDS[i % WORDS.len()]
}

/// The SSE events of a streamed conversation of `calls` model calls.
pub(crate) fn events_per_conversation(calls: usize, anthropic: bool) -> usize {
    // Anthropic: message_start, ping, the text block's start and stop,
    // message_delta, message_stop; the tool block's start and stop.
    // OpenAI: the role chunk, the finish chunk, the usage chunk, [DONE];
    // the chunk that names the tool call. Then two argument deltas.
    let (fixed, tool) = if anthropic { (6, 2) } else { (4, 1) };
    calls * (TEXT_DELTAS + fixed) + (calls - 1) * (tool + 2)
}
