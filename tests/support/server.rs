//! A tiny scripted HTTP/1.1 server on 127.0.0.1 for provider tests.
//!
//! It records every request (method, path, headers, body) and answers each
//! one with the next scripted [`Reply`]: a response (optionally delayed), a
//! response whose body is cut short, a dropped connection, or no answer at
//! all. Every response closes its connection, so each request arrives on a
//! fresh one and the script lines up with the requests one to one. While a
//! reply is delayed the server watches the connection and counts clients
//! that hang up ([`TestServer::wait_for_disconnects`]), which is how tests
//! see that a cancelled call really stopped.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// One request as the server received it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedRequest {
    /// `POST`, `GET`, ...
    pub method: String,
    /// The request target, such as `/v1/messages`.
    pub path: String,
    /// Header names (lower-cased) and values, in the order received.
    pub headers: Vec<(String, String)>,
    /// The body bytes.
    pub body: Vec<u8>,
}

impl RecordedRequest {
    /// The value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }

    /// The body parsed as JSON.
    ///
    /// # Panics
    /// When the body is not JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("the request body is JSON")
    }
}

#[derive(Clone, Debug)]
enum Action {
    Respond,
    /// Send the headers (with the full `content-length`) and only this many body bytes, then close.
    CutAfter(usize),
    /// Close the connection without answering.
    Drop,
    /// Never answer; wait until the client goes away.
    Hang,
    /// Send the body with chunked transfer encoding: no `content-length`.
    Chunked,
    /// Send the body in chunked transfer encoding, piece by piece, each
    /// after its delay; then end it, close mid-body, or stall.
    Chunks(Vec<(Duration, Vec<u8>)>, StreamEnd),
}

/// How a chunked body ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamEnd {
    /// The terminating zero-length chunk.
    Complete,
    /// The connection closes without it.
    Cut,
    /// Nothing more is sent until the client goes away.
    Stall,
}

/// What the server does with one request.
#[derive(Clone, Debug)]
pub struct Reply {
    action: Action,
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    delay: Duration,
}

impl Reply {
    /// A response with a JSON body.
    pub fn json(status: u16, body: &serde_json::Value) -> Self {
        Self::raw(status, "application/json", body.to_string())
    }

    /// A response with any body.
    pub fn raw(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Self {
            action: Action::Respond,
            status,
            headers: vec![("content-type".into(), content_type.into())],
            body: body.into(),
            delay: Duration::ZERO,
        }
    }

    /// Reads the request and closes the connection without a response.
    pub fn drop_connection() -> Self {
        Self { action: Action::Drop, ..Self::raw(200, "text/plain", "") }
    }

    /// Never answers.
    pub fn hang() -> Self {
        Self { action: Action::Hang, ..Self::raw(200, "text/plain", "") }
    }

    /// A streamed response: `pieces` sent one by one as chunks of a
    /// chunked body (each after its delay), ended as `end` says.
    pub fn stream(content_type: &str, pieces: Vec<(Duration, Vec<u8>)>, end: StreamEnd) -> Self {
        Self { action: Action::Chunks(pieces, end), ..Self::raw(200, content_type, "") }
    }

    /// Adds a response header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_ascii_lowercase(), value.to_owned()));
        self
    }

    /// Waits this long before answering.
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Sends the body in 4 KiB chunks (`transfer-encoding: chunked`),
    /// announcing no length.
    pub fn chunked(mut self) -> Self {
        self.action = Action::Chunked;
        self
    }

    /// Sends only the first `bytes` of the body (after headers announcing
    /// all of it), then closes the connection.
    pub fn cut_after(mut self, bytes: usize) -> Self {
        self.action = Action::CutAfter(bytes);
        self
    }
}

/// Answers a request as it arrives (a fake that enforces an API's rules).
type Handler = Box<dyn Fn(&RecordedRequest) -> Reply + Send + Sync>;

struct Shared {
    script: Mutex<VecDeque<Reply>>,
    /// Answers requests the script does not (see [`TestServer::respond_with`]).
    responder: Mutex<Option<Responder>>,
    handler: Option<Handler>,
    requests: Mutex<Vec<RecordedRequest>>,
    received: watch::Sender<usize>,
    disconnects: watch::Sender<usize>,
    /// Whether a connection stays open for the next request (see
    /// [`TestServer::keep_alive`]).
    keep_alive: std::sync::atomic::AtomicBool,
    /// Connections accepted.
    connections: std::sync::atomic::AtomicUsize,
}

/// Computes the reply to a request, for servers that implement an API's rules.
type Responder = Box<dyn FnMut(&RecordedRequest) -> Reply + Send>;

/// A scripted server; it stops with the test's runtime.
pub struct TestServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

impl TestServer {
    /// Starts a server on a free port of 127.0.0.1 that answers requests
    /// with `script`, in order (and with HTTP 500 once it runs out).
    ///
    /// # Panics
    /// When no port can be bound.
    pub async fn start(script: impl IntoIterator<Item = Reply>) -> Self {
        Self::launch(script.into_iter().collect(), None).await
    }

    /// Starts a server that answers each request with what `handler` makes
    /// of it, so that a fake can reject a request on the spot, the way the
    /// real API would.
    ///
    /// # Panics
    /// When no port can be bound.
    pub async fn start_with(handler: impl Fn(&RecordedRequest) -> Reply + Send + Sync + 'static) -> Self {
        Self::launch(VecDeque::new(), Some(Box::new(handler))).await
    }

    async fn launch(script: VecDeque<Reply>, handler: Option<Handler>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local address");
        let shared = Arc::new(Shared {
            script: Mutex::new(script.into_iter().collect()),
            responder: Mutex::new(None),
            handler,
            requests: Mutex::new(Vec::new()),
            received: watch::channel(0).0,
            disconnects: watch::channel(0).0,
            keep_alive: std::sync::atomic::AtomicBool::new(false),
            connections: std::sync::atomic::AtomicUsize::new(0),
        });
        let accepting = Arc::clone(&shared);
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                accepting.connections.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                tokio::spawn(serve(stream, Arc::clone(&accepting)));
            }
        });
        Self { addr, shared }
    }

    /// Starts a server that answers every request with what `responder`
    /// computes from it: a fake of an API that enforces its rules.
    pub async fn respond_with(responder: impl FnMut(&RecordedRequest) -> Reply + Send + 'static) -> Self {
        let server = Self::start([]).await;
        *server.shared.responder.lock().expect("responder lock") = Some(Box::new(responder));
        server
    }

    /// Keeps each connection open for the next request after a complete
    /// reply (HTTP/1.1 keep-alive), as API servers do; by default every
    /// reply closes its connection.
    #[must_use]
    pub fn keep_alive(self) -> Self {
        self.shared.keep_alive.store(true, std::sync::atomic::Ordering::SeqCst);
        self
    }

    /// How many connections clients opened.
    pub fn connections(&self) -> usize {
        self.shared.connections.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request received so far, in order.
    ///
    /// # Panics
    /// When a server task panicked while holding the lock.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.requests.lock().expect("requests lock").clone()
    }

    /// Waits until at least `count` requests have arrived.
    pub async fn wait_for_requests(&self, count: usize) {
        let mut received = self.shared.received.subscribe();
        let _ = received.wait_for(|n| *n >= count).await;
    }

    /// Waits until at least `count` clients hung up while their reply was
    /// being delayed (or never sent).
    pub async fn wait_for_disconnects(&self, count: usize) {
        let mut disconnects = self.shared.disconnects.subscribe();
        let _ = disconnects.wait_for(|n| *n >= count).await;
    }
}

async fn serve(stream: TcpStream, shared: Arc<Shared>) {
    let mut reader = BufReader::new(stream);
    while let Some(request) = read_request(&mut reader).await {
        if !answer(&mut reader, &shared, request).await {
            break;
        }
    }
    let _ = reader.get_mut().shutdown().await;
}

/// Answers one request; whether the connection may carry another.
async fn answer(reader: &mut BufReader<TcpStream>, shared: &Shared, request: RecordedRequest) -> bool {
    let keep_alive = shared.keep_alive.load(std::sync::atomic::Ordering::SeqCst);
    let connection = if keep_alive { "keep-alive" } else { "close" };
    let handled = shared.handler.as_ref().map(|handler| handler(&request));
    let computed =
        handled.or_else(|| shared.responder.lock().expect("responder lock").as_mut().map(|respond| respond(&request)));
    shared.requests.lock().expect("requests lock").push(request);
    shared.received.send_modify(|n| *n += 1);
    let reply = computed.or_else(|| shared.script.lock().expect("script lock").pop_front()).unwrap_or_else(|| {
        Reply::json(500, &serde_json::json!({"error": "the test server's script ran out of replies"}))
    });

    let wait = match reply.action {
        Action::Hang => None,
        _ => Some(reply.delay),
    };
    if !wait_or_disconnect(reader, wait).await {
        shared.disconnects.send_modify(|n| *n += 1);
        return false;
    }
    let reusable = keep_alive && matches!(reply.action, Action::Respond | Action::Chunked);
    let stream = reader.get_mut();
    let head = |len: Option<usize>| {
        let length =
            len.map_or_else(|| "transfer-encoding: chunked".to_owned(), |len| format!("content-length: {len}"));
        let mut head = format!("HTTP/1.1 {} Scripted\r\n{length}\r\nconnection: {connection}\r\n", reply.status);
        for (name, value) in &reply.headers {
            let _ = write!(head, "{name}: {value}\r\n");
        }
        head.push_str("\r\n");
        head
    };
    let _ = match reply.action {
        Action::Respond => {
            let mut bytes = head(Some(reply.body.len())).into_bytes();
            bytes.extend_from_slice(&reply.body);
            stream.write_all(&bytes).await
        }
        Action::CutAfter(sent) => {
            let mut bytes = head(Some(reply.body.len())).into_bytes();
            bytes.extend_from_slice(&reply.body[..sent.min(reply.body.len())]);
            stream.write_all(&bytes).await
        }
        Action::Chunked => {
            let mut bytes = head(None).into_bytes();
            for chunk in reply.body.chunks(4096) {
                let _ = write!(HexLen(&mut bytes), "{:x}\r\n", chunk.len());
                bytes.extend_from_slice(chunk);
                bytes.extend_from_slice(b"\r\n");
            }
            bytes.extend_from_slice(b"0\r\n\r\n");
            stream.write_all(&bytes).await
        }
        Action::Chunks(pieces, end) => {
            let mut head = format!(
                "HTTP/1.1 {} Scripted\r\ntransfer-encoding: chunked\r\nconnection: {connection}\r\n",
                reply.status
            );
            for (name, value) in &reply.headers {
                let _ = write!(head, "{name}: {value}\r\n");
            }
            head.push_str("\r\n");
            return stream.write_all(head.as_bytes()).await.is_ok()
                && send_pieces(stream, shared, pieces, end).await
                && keep_alive;
        }
        Action::Drop | Action::Hang => Ok(()),
    };
    let _ = stream.flush().await;
    reusable
}

/// Sends a chunked body's `pieces` (the head already sent), each after its
/// delay, ended as `end` says; whether it ended complete.
async fn send_pieces(
    stream: &mut TcpStream,
    shared: &Shared,
    pieces: Vec<(Duration, Vec<u8>)>,
    end: StreamEnd,
) -> bool {
    let _ = stream.flush().await;
    for (delay, piece) in pieces {
        if !sleep_or_hang_up(stream, delay).await {
            shared.disconnects.send_modify(|n| *n += 1);
            return false;
        }
        let mut chunk = format!("{:x}\r\n", piece.len()).into_bytes();
        chunk.extend_from_slice(&piece);
        chunk.extend_from_slice(b"\r\n");
        if stream.write_all(&chunk).await.is_err() || stream.flush().await.is_err() {
            shared.disconnects.send_modify(|n| *n += 1);
            return false;
        }
    }
    match end {
        StreamEnd::Complete => {
            let written = stream.write_all(b"0\r\n\r\n").await;
            let _ = stream.flush().await;
            written.is_ok()
        }
        StreamEnd::Cut => {
            let _ = stream.flush().await;
            false
        }
        StreamEnd::Stall => {
            // Wait for the client to hang up (reads see EOF or an error).
            let mut buf = [0u8; 64];
            loop {
                match tokio::io::AsyncReadExt::read(stream, &mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
            }
            shared.disconnects.send_modify(|n| *n += 1);
            false
        }
    }
}

/// Lets `write!` append to a byte buffer.
struct HexLen<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for HexLen<'_> {
    fn write_str(&mut self, text: &str) -> std::fmt::Result {
        self.0.extend_from_slice(text.as_bytes());
        Ok(())
    }
}

/// Sleeps for `delay` unless the client hangs up first; returns whether the
/// client is still there.
async fn sleep_or_hang_up(stream: &mut TcpStream, delay: Duration) -> bool {
    if delay.is_zero() {
        return true;
    }
    let mut buf = [0u8; 64];
    tokio::select! {
        () = tokio::time::sleep(delay) => true,
        read = tokio::io::AsyncReadExt::read(stream, &mut buf) => matches!(read, Ok(n) if n > 0),
    }
}

/// Sleeps for `wait` (forever when `None`) unless the client hangs up
/// first; returns whether the client is still there.
async fn wait_or_disconnect(reader: &mut BufReader<TcpStream>, wait: Option<Duration>) -> bool {
    if wait == Some(Duration::ZERO) {
        return true;
    }
    let sleep = async {
        match wait {
            Some(wait) => tokio::time::sleep(wait).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(sleep);
    let mut byte = [0u8; 1];
    loop {
        tokio::select! {
            () = &mut sleep => return true,
            read = reader.read(&mut byte) => match read {
                Ok(0) | Err(_) => return false,
                Ok(_) => {}
            },
        }
    }
}

async fn read_request(reader: &mut BufReader<TcpStream>) -> Option<RecordedRequest> {
    let mut line = String::new();
    reader.read_line(&mut line).await.ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let path = parts.next()?.to_owned();
    let mut headers = Vec::new();
    loop {
        line.clear();
        reader.read_line(&mut line).await.ok()?;
        let trimmed = line.trim_end();
        if trimmed.is_empty() {
            break;
        }
        let (name, value) = trimmed.split_once(':')?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    let length = headers.iter().find(|(n, _)| n == "content-length").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).await.ok()?;
    Some(RecordedRequest { method, path, headers, body })
}
