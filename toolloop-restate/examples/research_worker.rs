//! A Restate worker serving a research agent as a durable service
//! (`Research/ask`) and as sessions (`Session/<id>/message`):
//! `cargo run -p toolloop-restate --example research_worker`.
//!
//! It uses the environment's model (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`,
//! `OLLAMA_HOST`) or an offline one, and serves on `0.0.0.0:9080` (`PORT`).
//! Register it with a Restate server and call it with `curl` (the commands
//! are in the guide's chapter `toolloop::guide::durable`). With `--demo` it starts a Restate server itself (the one
//! `.ci/install-restate` installed, or `RESTATE_SERVER_BIN`), registers,
//! asks one question and two session messages, prints the answers and
//! stops: what CI runs.

use std::time::Duration;

use restate_sdk::prelude::*;
use toolloop::testing::ScriptedModel;
use toolloop::{Agent, Conversation, Model, ModelResponse, ToolCall};
use toolloop_restate::{RestateJournal, Session, ToolApprovals, idempotency_key};

/// Look a topic up in the archive (slow: kill the worker while it runs).
#[derive(toolloop::Tool)]
#[tool(state = Duration)]
struct Lookup {
    /// The topic.
    topic: String,
}

impl Lookup {
    async fn run(self, delay: &Duration) -> Result<String, String> {
        tokio::time::sleep(*delay).await;
        // A real lookup would pass the key to the archive's API.
        let key = idempotency_key().unwrap_or_default();
        println!("lookup `{}` ran (idempotency key {key})", self.topic);
        Ok(format!("the archive says {} is well documented", self.topic))
    }
}

/// The research service's answer.
#[derive(Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct Report {
    /// One line.
    summary: String,
}

/// The research service (in a module: the client the macro generates for
/// it is undocumented).
mod service {
    use super::{Agent, Context, Conversation, HandlerResult, Json, Report, RestateJournal};

    /// The research service.
    pub(crate) struct Research {
        pub(super) agent: Agent<Report>,
    }

    #[restate_sdk::service]
    impl Research {
        /// Researches a question; every model call and lookup is a journaled step.
        #[handler]
        async fn ask(&self, ctx: Context<'_>, question: String) -> HandlerResult<Json<Report>> {
            let mut conversation = Conversation::new();
            conversation.push_user(question);
            let journal = RestateJournal::new(&ctx);
            Ok(Json(journal.run(&self.agent, &mut conversation).await?.output))
        }
    }
}

use service::Research;

/// Offline: look the latest question up, then answer (as text or as the
/// report). A worker serves for as long as it runs: it keeps no requests.
fn offline() -> ScriptedModel {
    ScriptedModel::from_fn(|request| {
        let messages = &request.messages;
        let asked = messages.iter().rposition(|m| m.role == toolloop::Role::User && !m.text().is_empty());
        let question = asked.map(|index| messages[index].text()).unwrap_or_default();
        let looked_up =
            asked.and_then(|index| messages[index..].iter().flat_map(toolloop::Message::tool_results).last());
        let Some(result) = looked_up else {
            let call = ToolCall::new("lookup_1", "lookup", serde_json::json!({"topic": question}));
            return Ok(ModelResponse::from_tool_calls([call]));
        };
        let summary = format!("{} (offline model)", result.content);
        if request.tool_names().contains(&"final_output") {
            let call = ToolCall::new("report_1", "final_output", serde_json::json!({"summary": summary}));
            return Ok(ModelResponse::from_tool_calls([call]));
        }
        Ok(ModelResponse::from_text(summary))
    })
    .without_recording()
}

fn endpoint(delay: Duration) -> Result<Endpoint, Box<dyn std::error::Error>> {
    let model: std::sync::Arc<dyn Model> = toolloop::providers::from_env_or(offline())?.into();
    println!("using {} ({})", model.name(), model.provider());
    let research = Agent::builder()
        .model(std::sync::Arc::clone(&model))
        .system("Research the question with the lookup tool, then report in one line.")
        .tool_with_state::<Lookup>(delay)
        .output::<Report>()
        .build()?;
    let chat = Agent::builder()
        .model(model)
        .system("Answer in one line; use the lookup tool when it helps.")
        .tool_with_state::<Lookup>(delay)
        .build()?;
    Ok(Endpoint::builder().bind(Research { agent: research }).bind(Session::new(chat)).bind(ToolApprovals).build())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().any(|arg| arg == "--demo") {
        return demo::run(endpoint(Duration::ZERO)?).await;
    }
    let port = std::env::var("PORT").ok().and_then(|port| port.parse().ok()).unwrap_or(9080);
    let listener = tokio::net::TcpListener::bind(("0.0.0.0", port)).await?;
    println!("serving Research and Session on port {port}; register http://localhost:{port} with Restate");
    HttpServer::new(endpoint(Duration::from_secs(3))?).serve(listener).await;
    Ok(())
}

/// Starts a Restate server, registers the worker, calls it, stops.
mod demo {
    use std::process::{Command, Stdio};

    use restate_sdk::prelude::*;
    use serde_json::{Value, json};

    fn port() -> std::io::Result<u16> {
        Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
    }

    /// Kills the server when the demo ends, however it ends.
    struct Server(std::process::Child);

    impl Drop for Server {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    pub(super) async fn run(endpoint: Endpoint) -> Result<(), Box<dyn std::error::Error>> {
        let binary = std::env::var_os("RESTATE_SERVER_BIN").map_or_else(
            || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../.restate/restate-server"),
            std::path::PathBuf::from,
        );
        if !binary.is_file() {
            return Err(format!("no restate-server at {}: run .ci/install-restate", binary.display()).into());
        }
        let dir = std::env::temp_dir().join(format!("toolloop-restate-demo-{}", std::process::id()));
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::new();
        // A port found free can be taken before the server binds it: a
        // server that exits while starting is started again on other ports.
        let mut started = None;
        for _ in 0..5 {
            let _ = std::fs::remove_dir_all(&dir);
            let (ingress, admin, fabric) = (port()?, port()?, port()?);
            let mut server = Server(
                Command::new(&binary)
                    .arg("--no-logo")
                    .env("RESTATE_BASE_DIR", &dir)
                    .env("RESTATE_LISTEN_MODE", "tcp")
                    .env("RESTATE_DISABLE_TELEMETRY", "true")
                    .env("RESTATE_INGRESS__BIND_ADDRESS", format!("127.0.0.1:{ingress}"))
                    .env("RESTATE_ADMIN__BIND_ADDRESS", format!("127.0.0.1:{admin}"))
                    .env("RESTATE_BIND_ADDRESS", format!("127.0.0.1:{fabric}"))
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()?,
            );
            let (admin, ingress) = (format!("http://127.0.0.1:{admin}"), format!("http://127.0.0.1:{ingress}"));
            let starting = std::time::Instant::now();
            loop {
                if server.0.try_wait()?.is_some() {
                    break;
                }
                let health =
                    http.get(format!("{admin}/health")).timeout(std::time::Duration::from_secs(2)).send().await;
                if health.is_ok_and(|response| response.status().is_success()) {
                    started = Some((server, admin, ingress));
                    break;
                }
                if starting.elapsed() > std::time::Duration::from_secs(60) {
                    return Err("restate-server did not become healthy in 60 s".into());
                }
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            if started.is_some() {
                break;
            }
        }
        let Some((_server, admin, ingress)) = started else {
            return Err("restate-server exited while starting, five times".into());
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let worker = format!("http://{}", listener.local_addr()?);
        tokio::spawn(HttpServer::new(endpoint).serve(listener));

        let registered = http.post(format!("{admin}/deployments")).json(&json!({"uri": worker})).send().await?;
        println!("registered {worker}: {}", registered.status());

        let call = async |path: &str, body: Value| -> Result<Value, Box<dyn std::error::Error>> {
            let response = http.post(format!("{ingress}/{path}")).json(&body).send().await?;
            let status = response.status();
            let body: Value = response.json().await?;
            if !status.is_success() {
                return Err(format!("{path}: {status} {body}").into());
            }
            Ok(body)
        };
        println!("Research/ask -> {}", call("Research/ask", json!("durable execution")).await?);
        println!("Session/demo/message -> {}", call("Session/demo/message", json!("hello")).await?);
        println!("Session/demo/message -> {}", call("Session/demo/message", json!("and Restate?")).await?);
        let _ = std::fs::remove_dir_all(&dir);
        Ok(())
    }
}
