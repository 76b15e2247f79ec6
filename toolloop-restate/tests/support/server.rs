//! A Restate server for one test: started from the installed binary on
//! free ports in a temporary directory, stopped (killed) when dropped, also
//! when the test panics.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How to get the server when it is missing.
const INSTALL: &str = "install it with `.ci/install-restate` (npm install @restatedev/restate-server@1.7.12 into \
                       .restate/), or point RESTATE_SERVER_BIN at a restate-server 1.7 binary";

/// The `restate-server` binary: `RESTATE_SERVER_BIN`, else the one
/// `.ci/install-restate` installed. Panics, saying how to install it, when
/// there is none.
pub fn binary() -> PathBuf {
    if let Some(path) = std::env::var_os("RESTATE_SERVER_BIN") {
        let path = PathBuf::from(path);
        assert!(path.is_file(), "RESTATE_SERVER_BIN={} is not a file; {INSTALL}", path.display());
        return path;
    }
    let installed = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.restate/restate-server");
    assert!(installed.is_file(), "restate-server not found at {}; {INSTALL}", installed.display());
    installed
}

/// A port nobody listens on now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0").local_addr().expect("local address").port()
}

/// An HTTP client (the workspace builds reqwest without a TLS provider of its own).
pub fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

/// A running Restate server.
pub struct Restate {
    child: Child,
    dir: PathBuf,
    /// `http://127.0.0.1:PORT`, the ingress.
    pub ingress: String,
    /// `http://127.0.0.1:PORT`, the admin API.
    pub admin: String,
    pub http: reqwest::Client,
}

impl Drop for Restate {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Restate {
    /// Starts a server and waits until it is healthy. A free port can be
    /// taken between choosing it and the server binding it (by an outgoing
    /// connection of another test, say): a server that exits saying so is
    /// started again on other ports, up to five times.
    pub async fn start() -> Self {
        for _ in 0..4 {
            match Self::start_once().await {
                Ok(server) => return server,
                Err(log) if log.contains("Address in use") => {}
                Err(log) => panic!("restate-server exited while starting:\n{log}"),
            }
        }
        Self::start_once().await.unwrap_or_else(|log| panic!("restate-server exited while starting:\n{log}"))
    }

    /// Starts a server on fresh ports: the server, or its log when it exited.
    async fn start_once() -> Result<Self, String> {
        let binary = binary();
        let dir = std::env::temp_dir().join(format!("toolloop-restate-{}-{}", std::process::id(), free_port()));
        std::fs::create_dir_all(&dir).expect("temporary directory");
        let (ingress, admin, fabric) = (free_port(), free_port(), free_port());
        let log = std::fs::File::create(dir.join("restate.log")).expect("log file");
        // Everything that may panic comes before the spawn: once the child
        // runs, only `Self`'s drop stops it.
        let http = client();
        let (stdout, stderr) = (log.try_clone().expect("log file"), log);
        let child = Command::new(&binary)
            .arg("--no-logo")
            .current_dir(&dir)
            .env("RESTATE_BASE_DIR", &dir)
            .env("RESTATE_LISTEN_MODE", "tcp")
            .env("RESTATE_DISABLE_TELEMETRY", "true")
            .env("RESTATE_INGRESS__BIND_ADDRESS", format!("127.0.0.1:{ingress}"))
            .env("RESTATE_ADMIN__BIND_ADDRESS", format!("127.0.0.1:{admin}"))
            .env("RESTATE_BIND_ADDRESS", format!("127.0.0.1:{fabric}"))
            .env("RESTATE_ADVERTISED_ADDRESS", format!("http://127.0.0.1:{fabric}"))
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {}: {error}; {INSTALL}", binary.display()));
        let mut server = Self {
            child,
            dir,
            ingress: format!("http://127.0.0.1:{ingress}"),
            admin: format!("http://127.0.0.1:{admin}"),
            http,
        };
        server.wait_healthy().await?;
        Ok(server)
    }

    /// Waits until both APIs answer: the server's log when it exits first.
    async fn wait_healthy(&mut self) -> Result<(), String> {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("server status") {
                return Err(format!("({status})\n{}", self.log()));
            }
            // A bounded wait: a port held by something else may accept and
            // never answer.
            let health = |url: String| self.http.get(url).timeout(Duration::from_secs(2)).send();
            let admin = health(format!("{}/health", self.admin)).await;
            let ingress = health(format!("{}/restate/health", self.ingress)).await;
            if admin.is_ok_and(|r| r.status().is_success()) && ingress.is_ok_and(|r| r.status().is_success()) {
                return Ok(());
            }
            assert!(started.elapsed() < Duration::from_secs(60), "restate-server not healthy in 60 s:\n{}", self.log());
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("restate.log")).unwrap_or_default()
    }

    /// Registers the deployment serving at `uri` (forcing over an earlier one).
    pub async fn register(&self, uri: &str) {
        let response = self
            .http
            .post(format!("{}/deployments", self.admin))
            .json(&json!({"uri": uri, "force": true}))
            .send()
            .await
            .expect("admin API");
        let status = response.status();
        let body = response.text().await.unwrap_or_default();
        assert!(status.is_success(), "registering {uri}: {status} {body}");
    }

    /// Calls `path` (`Service/handler`, `Object/key/handler`) through the
    /// ingress and waits for its response: status and JSON body.
    pub fn call(&self, path: &str, body: &Value) -> impl Future<Output = (u16, Value)> + use<> {
        let request = self.http.post(format!("{}/{path}", self.ingress)).json(body);
        async move {
            let response = request.send().await.expect("ingress");
            let status = response.status().as_u16();
            let text = response.text().await.unwrap_or_default();
            (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
        }
    }

    /// Calls a handler that takes no input.
    pub async fn call_empty(&self, path: &str) -> (u16, Value) {
        let response = self.http.post(format!("{}/{path}", self.ingress)).send().await.expect("ingress");
        let status = response.status().as_u16();
        let text = response.text().await.unwrap_or_default();
        (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }

    /// Replaces the state of the virtual object `service`/`key` (admin API;
    /// applied asynchronously).
    pub async fn set_state(&self, service: &str, key: &str, name: &str, value: &[u8]) {
        let body = json!({"object_key": key, "new_state": {name: value}});
        let response =
            self.http.post(format!("{}/services/{service}/state", self.admin)).json(&body).send().await.expect("admin");
        let status = response.status();
        assert!(status.is_success(), "setting state: {status} {}", response.text().await.unwrap_or_default());
    }

    /// Starts `path` without waiting: the invocation id.
    pub async fn send(&self, path: &str, body: &Value) -> String {
        let (status, response) = self.call(&format!("{path}/send"), body).await;
        assert!((200..300).contains(&status), "sending {path}: {status} {response}");
        response["invocationId"].as_str().expect("invocation id").to_owned()
    }

    /// Waits for the invocation's response: status and JSON body.
    pub async fn attach(&self, invocation: &str) -> (u16, Value) {
        let response = self
            .http
            .get(format!("{}/restate/invocation/{invocation}/attach", self.ingress))
            .send()
            .await
            .expect("ingress");
        let status = response.status().as_u16();
        let text = response.text().await.unwrap_or_default();
        (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }

    /// Cancels an invocation through the admin API.
    pub async fn cancel(&self, invocation: &str) {
        let response =
            self.http.patch(format!("{}/invocations/{invocation}/cancel", self.admin)).send().await.expect("admin API");
        let status = response.status();
        assert!(status.is_success(), "cancelling {invocation}: {status} {}", response.text().await.unwrap_or_default());
    }
}
