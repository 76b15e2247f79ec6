//! The tools of the MCP test server: one for each way a call can go (a
//! result, a failure, a panic, a timeout, a cancellation, a tool list
//! change, the process exiting). Served over stdio by the
//! `toolloop-mcp-test-server` binary, and in-process by the tests.
#![allow(clippy::unused_async)] // the handlers need not await

use std::convert::Infallible;
use std::sync::{Arc, OnceLock};

use tokio::sync::watch;
use toolloop::mcp::McpServer;
use toolloop::{Tool, ToolSet};

/// What the stateful tools share: the server (to change its tools) and
/// counters the tests wait on.
pub struct Lab {
    server: OnceLock<McpServer>,
    started: watch::Sender<usize>,
    cancelled: watch::Sender<usize>,
    exit_allowed: bool,
}

impl Lab {
    /// Waits until `hang` was called `count` times.
    pub async fn started(&self, count: usize) {
        let _ = self.started.subscribe().wait_for(|n| *n >= count).await;
    }

    /// Waits until `count` calls of `hang` were cancelled.
    pub async fn cancelled(&self, count: usize) {
        let _ = self.cancelled.subscribe().wait_for(|n| *n >= count).await;
    }

    /// How many calls of `hang` were cancelled so far.
    pub fn cancelled_count(&self) -> usize {
        *self.cancelled.borrow()
    }
}

/// The test server. `exit_allowed` adds the `exit` tool, which ends the
/// process: only for the child-process server.
pub fn server(exit_allowed: bool) -> (McpServer, Arc<Lab>) {
    let lab = Arc::new(Lab {
        server: OnceLock::new(),
        started: watch::Sender::new(0),
        cancelled: watch::Sender::new(0),
        exit_allowed,
    });
    let server = McpServer::new(tool_set(&lab, false))
        .name("toolloop-test-server", "1.0.0")
        .instructions("Tools for testing toolloop's MCP support.");
    let _ = lab.server.set(server.clone());
    (server, lab)
}

fn tool_set(lab: &Arc<Lab>, with_secret: bool) -> ToolSet {
    let mut tools = ToolSet::new();
    tools.add::<Add>().unwrap();
    tools.add::<Echo>().unwrap();
    tools.add::<Fail>().unwrap();
    tools.add::<Boom>().unwrap();
    tools.add::<Sleepy>().unwrap();
    tools.add_with_state::<Hang>(Arc::clone(lab)).unwrap();
    tools.add_with_state::<HangStarted>(Arc::clone(lab)).unwrap();
    tools.add_with_state::<CancelledCalls>(Arc::clone(lab)).unwrap();
    tools.add_with_state::<Unlock>(Arc::clone(lab)).unwrap();
    tools.add_with_state::<Lock>(Arc::clone(lab)).unwrap();
    if with_secret {
        tools.add::<Secret>().unwrap();
    }
    if lab.exit_allowed {
        tools.add::<Exit>().unwrap();
    }
    tools
}

/// Add two integers.
#[derive(Tool)]
pub struct Add {
    /// The first.
    a: i64,
    /// The second.
    b: i64,
}

impl Add {
    async fn run(self) -> Result<i64, Infallible> {
        Ok(self.a + self.b)
    }
}

/// Repeat a short text.
#[derive(Tool)]
pub struct Echo {
    /// At most 20 characters.
    #[schemars(length(max = 20))]
    text: String,
    /// How many times (once when left out).
    times: Option<u8>,
}

impl Echo {
    async fn run(self) -> Result<serde_json::Value, Infallible> {
        let times = usize::from(self.times.unwrap_or(1));
        Ok(serde_json::json!({"echo": self.text.repeat(times)}))
    }
}

/// Fail with the given message.
#[derive(Tool)]
pub struct Fail {
    /// What to fail with.
    message: String,
}

impl Fail {
    async fn run(self) -> Result<String, String> {
        Err(self.message)
    }
}

/// Panic.
#[derive(Tool)]
pub struct Boom {}

impl Boom {
    async fn run(self) -> Result<String, Infallible> {
        panic!("kaboom")
    }
}

/// Take longer than this tool's own timeout of 100 ms.
#[derive(Tool)]
#[tool(timeout = "100ms")]
pub struct Sleepy {}

impl Sleepy {
    async fn run(self) -> Result<String, Infallible> {
        tokio::time::sleep(std::time::Duration::from_secs(60)).await;
        Ok("woke up".to_owned())
    }
}

/// Wait until the call is cancelled.
#[derive(Tool)]
#[tool(state = Arc<Lab>, timeout = "60s")]
pub struct Hang {}

/// Counts a cancelled `hang` when its future is dropped.
struct CountsCancellation<'a>(&'a Lab);

impl Drop for CountsCancellation<'_> {
    fn drop(&mut self) {
        self.0.cancelled.send_modify(|n| *n += 1);
    }
}

impl Hang {
    async fn run(self, lab: &Arc<Lab>) -> Result<String, Infallible> {
        let _counts = CountsCancellation(lab);
        lab.started.send_modify(|n| *n += 1);
        std::future::pending::<()>().await;
        unreachable!("pending never completes")
    }
}

/// Wait until `hang` was called at least `at_least` times.
#[derive(Tool)]
#[tool(state = Arc<Lab>, timeout = "30s")]
pub struct HangStarted {
    /// How many calls to wait for.
    at_least: usize,
}

impl HangStarted {
    async fn run(self, lab: &Arc<Lab>) -> Result<&'static str, Infallible> {
        lab.started(self.at_least).await;
        Ok("started")
    }
}

/// Wait until at least `at_least` calls of `hang` were cancelled, and say how many were.
#[derive(Tool)]
#[tool(state = Arc<Lab>, timeout = "30s")]
pub struct CancelledCalls {
    /// How many cancellations to wait for.
    at_least: usize,
}

impl CancelledCalls {
    async fn run(self, lab: &Arc<Lab>) -> Result<usize, Infallible> {
        lab.cancelled(self.at_least).await;
        Ok(lab.cancelled_count())
    }
}

/// Add the `secret` tool to this server.
#[derive(Tool)]
#[tool(state = Arc<Lab>)]
pub struct Unlock {}

impl Unlock {
    async fn run(self, lab: &Arc<Lab>) -> Result<&'static str, Infallible> {
        lab.server.get().expect("set at start").set_tools(tool_set(lab, true)).await;
        Ok("unlocked")
    }
}

/// Remove the `secret` tool again.
#[derive(Tool)]
#[tool(state = Arc<Lab>)]
pub struct Lock {}

impl Lock {
    async fn run(self, lab: &Arc<Lab>) -> Result<&'static str, Infallible> {
        lab.server.get().expect("set at start").set_tools(tool_set(lab, false)).await;
        Ok("locked")
    }
}

/// Tell the secret.
#[derive(Tool)]
pub struct Secret {}

impl Secret {
    async fn run(self) -> Result<&'static str, Infallible> {
        Ok("42")
    }
}

/// End the server process in the middle of this call.
#[derive(Tool)]
pub struct Exit {}

impl Exit {
    async fn run(self) -> Result<&'static str, Infallible> {
        std::process::exit(3)
    }
}
