//! Workers: an endpoint served in this process, or in a child process that
//! a test can kill with SIGKILL.

use std::path::Path;
use std::process::{Child, Command, Stdio};

use restate_sdk::prelude::*;
use tokio::net::TcpListener;

/// An endpoint served in this process until dropped.
pub struct InProcess {
    pub url: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl InProcess {
    /// Serves `endpoint` on `port` (0: a free one).
    pub async fn serve(endpoint: Endpoint, port: u16) -> Self {
        let listener = TcpListener::bind(("127.0.0.1", port)).await.expect("bind the worker");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(HttpServer::new(endpoint).serve_with_cancel(listener, stopped));
        Self { url, stop: Some(stop) }
    }
}

impl Drop for InProcess {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// The test binary itself, running its `worker_process` entry point, which
/// serves the tests' endpoint on `port` until killed.
pub struct Process {
    child: Child,
    pub url: String,
}

/// The variables the worker process reads.
pub const ROLE: &str = "TOOLLOOP_RESTATE_WORKER";

impl Process {
    /// Starts a worker on `port`, its model at `llm`, its files in `dir`,
    /// `hold` the milliseconds the `hold` tool waits.
    pub fn spawn(port: u16, llm: &str, dir: &Path, hold_ms: u64) -> Self {
        let child = Command::new(std::env::current_exe().expect("test binary"))
            .args(["worker_process", "--exact", "--ignored", "--nocapture", "--test-threads=1"])
            .env(ROLE, "1")
            .env("WORKER_PORT", port.to_string())
            .env("WORKER_LLM", llm)
            .env("WORKER_DIR", dir)
            .env("WORKER_HOLD_MS", hold_ms.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the worker process");
        Self { child, url: format!("http://127.0.0.1:{port}") }
    }

    /// Waits until the worker accepts connections.
    pub async fn ready(&self) {
        for _ in 0..300 {
            if tokio::net::TcpStream::connect(self.url.trim_start_matches("http://")).await.is_ok() {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        panic!("the worker process did not listen on {}", self.url);
    }

    /// SIGKILL: the process dies between two instructions.
    pub fn kill(mut self) {
        self.child.kill().expect("SIGKILL the worker");
        self.child.wait().expect("reap the worker");
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
