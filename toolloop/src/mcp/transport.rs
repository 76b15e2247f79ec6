//! How to reach an MCP server: a child process speaking over stdio, a
//! Streamable HTTP endpoint, or any byte stream (an in-process pair).
//!
//! A transport is a recipe, not a connection: the client keeps it so that
//! it can connect again after the server went away.

use std::ffi::OsString;
use std::fmt;
use std::future::Future;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use rmcp::service::RunningService;
use rmcp::transport::common::client_side_sse::ExponentialBackoff;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt as _};
use tokio::io::{AsyncRead, AsyncWrite};

use super::McpError;
use crate::model::BoxFuture;

/// How long connecting and listing tools may take by default.
pub const DEFAULT_MCP_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// A byte stream an MCP connection can run over.
// Hidden from the docs only (`cfg(doc)`): a bound (any `AsyncRead + AsyncWrite` stream), not written by users.
#[cfg_attr(doc, doc(hidden))]
pub trait McpStream: AsyncRead + AsyncWrite + Send + Unpin + 'static {}

impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> McpStream for T {}

type StreamFactory = dyn Fn() -> BoxFuture<'static, std::io::Result<Box<dyn McpStream>>> + Send + Sync;

/// How to reach an MCP server: a child process speaking MCP over stdio
/// ([`child_process`](Self::child_process)), a Streamable HTTP endpoint
/// ([`streamable_http`](Self::streamable_http)), or any byte stream
/// ([`from_stream_fn`](Self::from_stream_fn)).
///
/// The settings of each kind are methods: [`arg`](Self::arg),
/// [`env`](Self::env), [`current_dir`](Self::current_dir),
/// [`quiet`](Self::quiet) for a child process;
/// [`bearer_token`](Self::bearer_token) and [`header`](Self::header) for
/// HTTP. A setting for another kind of transport (`arg` on an HTTP
/// endpoint) makes [`McpClient::connect`](super::McpClient::connect) fail
/// with [`McpError::Connect`] saying so; it is never silently dropped.
/// [`request_timeout`](Self::request_timeout) and
/// [`auto_reconnect`](Self::auto_reconnect) apply to every kind.
///
/// ```
/// use toolloop::mcp::McpTransport;
///
/// let time = McpTransport::child_process("uvx").arg("mcp-server-time").quiet();
/// assert_eq!(time.name(), "uvx");
/// let docs = McpTransport::streamable_http("https://mcp.example.com/mcp").bearer_token("...");
/// assert_eq!(docs.name(), "https://mcp.example.com/mcp");
/// ```
#[derive(Clone)]
pub struct McpTransport {
    kind: Kind,
    label: String,
    pub(crate) request_timeout: Duration,
    pub(crate) auto_reconnect: bool,
    /// The first setting given that does not apply to this kind of
    /// transport, reported at connect.
    misplaced: Option<&'static str>,
}

#[derive(Clone)]
enum Kind {
    ChildProcess(ChildProcess),
    Http(StreamableHttp),
    Stream(Arc<StreamFactory>),
}

impl fmt::Debug for McpTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match &self.kind {
            Kind::ChildProcess(child) => format!("{child:?}"),
            Kind::Http(http) => format!("{http:?}"),
            Kind::Stream(_) => "Stream".to_owned(),
        };
        f.debug_struct("McpTransport")
            .field("label", &self.label)
            .field("kind", &kind)
            .field("request_timeout", &self.request_timeout)
            .field("auto_reconnect", &self.auto_reconnect)
            .field("misplaced", &self.misplaced)
            .finish()
    }
}

impl McpTransport {
    /// An MCP server started as a child process that speaks MCP over its
    /// stdin and stdout (`npx -y @modelcontextprotocol/server-memory`,
    /// `uvx mcp-server-time`, a binary of yours): runs `program`, looked up
    /// in `PATH` like a shell would.
    ///
    /// The process is started at connect (and again at reconnect) and
    /// stopped when the client closes or is dropped. Its stderr is
    /// inherited unless [`quiet`](Self::quiet) is set. The label is the
    /// program's file name.
    pub fn child_process(program: impl Into<OsString>) -> Self {
        let child = ChildProcess {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            current_dir: None,
            quiet: false,
        };
        let label = child.label();
        Self::of(Kind::ChildProcess(child), label)
    }

    /// An MCP server behind a Streamable HTTP endpoint (`https://host/mcp`).
    ///
    /// Requests go over the same TLS stack as the model providers (rustls
    /// with the `ring` provider and the platform's verifier). Redirects are
    /// not followed, so a token never travels to another origin. The label
    /// is the URL without credentials, query or fragment.
    pub fn streamable_http(url: impl Into<String>) -> Self {
        let http = StreamableHttp { url: url.into(), bearer_token: None, headers: Vec::new() };
        let label = redacted_url(&http.url);
        Self::of(Kind::Http(http), label)
    }

    /// A transport over byte streams that `connect` opens, once per
    /// (re)connection: an in-process pair (`tokio::io::duplex`), a Unix
    /// socket, a TCP stream. `label` names the server in errors.
    pub fn from_stream_fn<F, Fut, S>(label: impl Into<String>, connect: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = std::io::Result<S>> + Send + 'static,
        S: McpStream,
    {
        let factory: Arc<StreamFactory> = Arc::new(move || {
            let opening = connect();
            Box::pin(async move { opening.await.map(|stream| Box::new(stream) as Box<dyn McpStream>) })
        });
        Self::of(Kind::Stream(factory), label.into())
    }

    fn of(kind: Kind, label: String) -> Self {
        Self { kind, label, request_timeout: DEFAULT_MCP_REQUEST_TIMEOUT, auto_reconnect: false, misplaced: None }
    }

    /// How long the handshake and `tools/list` may take (30 s by default).
    /// Tool calls have their own timeout (see
    /// [`ToolSelection::timeout`](super::ToolSelection::timeout)).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Reconnects once, before a tool call, when the connection is found
    /// closed (the server exited): the call that was in flight when it
    /// died still fails, later ones start the server again.
    pub fn auto_reconnect(mut self) -> Self {
        self.auto_reconnect = true;
        self
    }

    /// A child process: adds an argument.
    pub fn arg(self, arg: impl Into<OsString>) -> Self {
        self.child("arg", |child| child.args.push(arg.into()))
    }

    /// A child process: adds arguments.
    pub fn args<I: IntoIterator<Item = A>, A: Into<OsString>>(self, args: I) -> Self {
        self.child("args", |child| child.args.extend(args.into_iter().map(Into::into)))
    }

    /// A child process: sets an environment variable for the process (its
    /// value is never printed by `Debug`).
    pub fn env(self, name: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.child("env", |child| child.env.push((name.into(), Some(value.into()))))
    }

    /// A child process: removes an environment variable from the process's
    /// environment.
    pub fn env_remove(self, name: impl Into<OsString>) -> Self {
        self.child("env_remove", |child| child.env.push((name.into(), None)))
    }

    /// A child process: sets its working directory.
    pub fn current_dir(self, dir: impl Into<PathBuf>) -> Self {
        self.child("current_dir", |child| child.current_dir = Some(dir.into()))
    }

    /// A child process: discards the server's stderr instead of passing it
    /// through.
    pub fn quiet(self) -> Self {
        self.child("quiet", |child| child.quiet = true)
    }

    /// Streamable HTTP: sends `Authorization: Bearer <token>` (never
    /// printed by `Debug`).
    pub fn bearer_token(self, token: impl Into<String>) -> Self {
        self.http("bearer_token", |http| http.bearer_token = Some(token.into()))
    }

    /// Streamable HTTP: sends a header with every request (its value is
    /// never printed).
    pub fn header(self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.http("header", |http| http.headers.push((name.into(), value.into())))
    }

    /// Names the server in errors and logs instead of the default (the
    /// program's file name, or the URL without its query).
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    /// The server's name in errors and logs.
    pub fn name(&self) -> &str {
        &self.label
    }

    fn child(mut self, setting: &'static str, set: impl FnOnce(&mut ChildProcess)) -> Self {
        match &mut self.kind {
            Kind::ChildProcess(child) => set(child),
            _ => self.misplaced = self.misplaced.or(Some(setting)),
        }
        self
    }

    fn http(mut self, setting: &'static str, set: impl FnOnce(&mut StreamableHttp)) -> Self {
        match &mut self.kind {
            Kind::Http(http) => set(http),
            _ => self.misplaced = self.misplaced.or(Some(setting)),
        }
        self
    }

    /// Opens a connection and completes the MCP handshake.
    pub(crate) async fn connect<H: ClientHandler>(
        &self,
        handler: H,
    ) -> Result<RunningService<RoleClient, H>, McpError> {
        let connect_error =
            |error: &dyn fmt::Display| McpError::Connect { server: self.label.clone(), message: error.to_string() };
        if let Some(setting) = self.misplaced {
            let kind = match self.kind {
                Kind::ChildProcess(_) => "a child process",
                Kind::Http(_) => "a Streamable HTTP endpoint",
                Kind::Stream(_) => "a byte stream",
            };
            return Err(connect_error(&format!("the transport setting `{setting}` does not apply to {kind}")));
        }
        match &self.kind {
            Kind::ChildProcess(child) => {
                let process = child.spawn().map_err(|source| McpError::Spawn { server: self.label.clone(), source })?;
                handler.serve(process).await.map_err(|e| connect_error(&e))
            }
            Kind::Http(http) => {
                let transport = http.transport().map_err(|e| connect_error(&e))?;
                handler.serve(transport).await.map_err(|e| connect_error(&e))
            }
            Kind::Stream(factory) => {
                let stream = factory().await.map_err(|e| connect_error(&e))?;
                handler.serve(stream).await.map_err(|e| connect_error(&e))
            }
        }
    }
}

/// The settings of a child process transport.
#[derive(Clone)]
struct ChildProcess {
    program: OsString,
    args: Vec<OsString>,
    env: Vec<(OsString, Option<OsString>)>,
    current_dir: Option<PathBuf>,
    quiet: bool,
}

impl fmt::Debug for ChildProcess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Environment values often are keys: show only the names.
        let env: Vec<_> = self.env.iter().map(|(name, _)| name).collect();
        f.debug_struct("ChildProcess")
            .field("program", &self.program)
            .field("args", &self.args)
            .field("env", &env)
            .field("current_dir", &self.current_dir)
            .field("quiet", &self.quiet)
            .finish()
    }
}

impl ChildProcess {
    fn label(&self) -> String {
        let path = std::path::Path::new(&self.program);
        path.file_name().unwrap_or(path.as_os_str()).to_string_lossy().into_owned()
    }

    fn spawn(&self) -> std::io::Result<TokioChildProcess> {
        let mut command = tokio::process::Command::new(&self.program);
        command.args(&self.args);
        for (name, value) in &self.env {
            match value {
                Some(value) => command.env(name, value),
                None => command.env_remove(name),
            };
        }
        if let Some(dir) = &self.current_dir {
            command.current_dir(dir);
        }
        let stderr = if self.quiet { Stdio::null() } else { Stdio::inherit() };
        let (process, _stderr) = TokioChildProcess::builder(command).stderr(stderr).spawn()?;
        Ok(process)
    }
}

/// The settings of a Streamable HTTP transport.
#[derive(Clone)]
struct StreamableHttp {
    url: String,
    bearer_token: Option<String>,
    headers: Vec<(String, String)>,
}

impl fmt::Debug for StreamableHttp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("StreamableHttp")
            .field("url", &redacted_url(&self.url))
            .field("bearer_token", &self.bearer_token.as_ref().map(|_| "<redacted>"))
            .field("headers", &headers)
            .finish()
    }
}

impl StreamableHttp {
    fn transport(&self) -> Result<StreamableHttpClientTransport<reqwest::Client>, String> {
        let parsed = reqwest::Url::parse(&self.url).map_err(|e| format!("invalid URL: {e}"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err("the URL's scheme must be http or https".to_owned());
        }
        let mut headers = std::collections::HashMap::new();
        for (name, value) in &self.headers {
            let name = reqwest::header::HeaderName::try_from(name.as_str())
                .map_err(|_| format!("invalid header name `{name}`"))?;
            let mut value = reqwest::header::HeaderValue::try_from(value.as_str())
                .map_err(|_| format!("invalid value for header `{name}`"))?;
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        let mut config = StreamableHttpClientTransportConfig::with_uri(self.url.as_str()).custom_headers(headers);
        // rmcp retries a lost event stream forever by default, which leaves
        // a call to a server that went away pending until its timeout.
        let mut retry = ExponentialBackoff::default();
        retry.max_times = Some(2);
        retry.max_delay = Some(std::time::Duration::from_secs(2));
        config.retry_config = Arc::new(retry);
        if let Some(token) = &self.bearer_token {
            config = config.auth_header(token.as_str());
        }
        Ok(StreamableHttpClientTransport::with_client(http_client()?, config))
    }
}

/// `url` without credentials, query or fragment, for errors and logs.
fn redacted_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.set_query(None);
            parsed.set_fragment(None);
            parsed.to_string()
        }
        Err(_) => "<invalid URL>".to_owned(),
    }
}

/// A reqwest client for MCP over HTTP: the providers' TLS stack and
/// redirect refusal, and no idle pooling (rmcp's advice: avoids delayed-ACK
/// stalls on reused connections).
fn http_client() -> Result<reqwest::Client, String> {
    crate::providers::client_builder()
        .map_err(|error| error.to_string())?
        .pool_max_idle_per_host(0)
        .build()
        .map_err(|error| error.to_string())
}

#[cfg(test)]
mod tests {
    use super::McpTransport;

    #[test]
    fn labels_and_debug_never_show_secrets() {
        let http = McpTransport::streamable_http("https://user:pw@mcp.example.com/mcp?key=secret#x")
            .bearer_token("tok-123")
            .header("X-Api-Key", "hdr-456");
        assert_eq!(http.name(), "https://mcp.example.com/mcp");
        let debug = format!("{http:?}");
        for secret in ["pw", "secret", "tok-123", "hdr-456"] {
            assert!(!debug.contains(secret), "{debug}");
        }

        let child = McpTransport::child_process("/usr/bin/uvx").arg("mcp-server-time").env("TOKEN", "s3cret");
        assert_eq!(child.name(), "uvx");
        assert!(!format!("{child:?}").contains("s3cret"));
        assert_eq!(child.label("time").name(), "time");
    }
}
