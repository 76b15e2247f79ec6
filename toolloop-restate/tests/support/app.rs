//! The application the tests run: a research agent (typed), a quick agent
//! (text) and sessions, served by a Restate endpoint.
#![allow(clippy::unused_async)] // tool handlers are async by contract

use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use restate_sdk::prelude::*;
use serde::{Deserialize, Serialize};
use toolloop::providers::RetryPolicy;
use toolloop::providers::anthropic::Anthropic;
use toolloop::run::{Decision, Governance};
use toolloop::{Agent, Conversation, ToolCall};
use toolloop_restate::{RestateJournal, Session, ToolApprovals, idempotency_key};

/// Where the tools leave their traces.
#[derive(Clone, Debug)]
pub struct Files {
    /// One line per `note` execution: the idempotency key and the text.
    pub notes: PathBuf,
    /// One line per `hold` execution.
    pub holds: PathBuf,
    /// One line per `publish` execution.
    pub published: PathBuf,
    /// How long `hold` waits.
    pub hold: Duration,
}

impl Files {
    /// Files in `dir`.
    pub fn in_dir(dir: &std::path::Path, hold: Duration) -> Self {
        Self { notes: dir.join("notes"), holds: dir.join("holds"), published: dir.join("published"), hold }
    }
}

fn append(path: &std::path::Path, line: &str) -> Result<(), String> {
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path).map_err(|e| e.to_string())?;
    writeln!(file, "{line}").map_err(|e| e.to_string())?;
    file.sync_all().map_err(|e| e.to_string())
}

/// Lines of a trace file.
pub fn lines(path: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(path).unwrap_or_default().lines().map(str::to_owned).collect()
}

/// Save a note (a side effect: a line in the notes file).
#[derive(toolloop::Tool)]
#[tool(state = Files)]
pub struct Note {
    /// The note.
    pub text: String,
}

impl Note {
    async fn run(self, files: &Files) -> Result<String, String> {
        let key = idempotency_key().ok_or("no idempotency key outside a durable run")?;
        append(&files.notes, &format!("{key} {}", self.text))?;
        Ok("saved".to_owned())
    }
}

/// Wait for the archive (slow; changes nothing but its trace).
#[derive(toolloop::Tool)]
#[tool(state = Files)]
pub struct Hold {
    /// Why.
    pub why: String,
}

impl Hold {
    async fn run(self, files: &Files) -> Result<String, String> {
        append(&files.holds, &self.why)?;
        tokio::time::sleep(files.hold).await;
        Ok("archive ready".to_owned())
    }
}

/// Publish a report (needs a person's approval).
#[derive(toolloop::Tool)]
#[tool(state = Files)]
pub struct Publish {
    /// The report's title.
    pub title: String,
}

impl Publish {
    async fn run(self, files: &Files) -> Result<String, String> {
        let key = idempotency_key().unwrap_or_default();
        append(&files.published, &format!("{key} {}", self.title))?;
        Ok(format!("{} is live", self.title))
    }
}

/// The research agent's report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Report {
    /// The title.
    pub title: String,
    /// How many notes were taken.
    pub notes: u32,
}

/// What `Research/ask` takes.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Question {
    /// The question.
    pub text: String,
    /// Deny approvals nobody gave within this many milliseconds.
    #[serde(default)]
    pub approval_timeout_ms: Option<u64>,
}

/// The provider retries once inside a step (quickly, for the tests).
pub const PROVIDER_ATTEMPTS: usize = 2;

fn model(llm: &str) -> Anthropic {
    let retries = RetryPolicy::none().with_max_retries(1).with_initial_backoff(Duration::from_millis(10));
    Anthropic::builder().api_key("test-key").base_url(llm).retry_policy(retries).build().expect("model")
}

fn governance() -> Governance {
    Governance::new().policy(|call| if call.name == "publish" { Decision::Ask } else { Decision::Allow })
}

/// The research agent's governance: its approver publishes drafts itself
/// and passes every other publication on to a person (`Decision::Ask`).
fn research_governance() -> Governance {
    governance().approver(|call: ToolCall| async move {
        let draft = call.input["title"].as_str().is_some_and(|title| title.starts_with("Draft"));
        if draft { Decision::Allow } else { Decision::Ask }
    })
}

/// The typed research agent.
pub struct Research {
    agent: Agent<Report>,
}

#[restate_sdk::service]
impl Research {
    /// Answers a question with a report.
    #[handler]
    async fn ask(&self, ctx: Context<'_>, question: Json<Question>) -> HandlerResult<Json<Report>> {
        let question = question.into_inner();
        let mut conversation = Conversation::new();
        conversation.push_user(question.text);
        let mut journal = RestateJournal::new(&ctx);
        if let Some(millis) = question.approval_timeout_ms {
            journal = journal.approval_timeout(Duration::from_millis(millis));
        }
        Ok(Json(journal.run(&self.agent, &mut conversation).await?.output))
    }
}

/// Review 2: a research agent whose calls run two at a time (as a
/// Restate journal allows: in turn) and whose approver passes every
/// publication on to a person (`Decision::Ask`), slowly for a title
/// starting "Slow".
pub struct Pair {
    agent: Agent<Report>,
}

#[restate_sdk::service]
impl Pair {
    /// Answers a question with a report.
    #[handler]
    async fn ask(&self, ctx: Context<'_>, question: Json<Question>) -> HandlerResult<Json<Report>> {
        let question = question.into_inner();
        let mut conversation = Conversation::new();
        conversation.push_user(question.text);
        let journal = RestateJournal::new(&ctx);
        Ok(Json(journal.run(&self.agent, &mut conversation).await?.output))
    }
}

/// Review 2, a control: the pair agent without an approver.
pub struct PairDirect {
    agent: Agent<Report>,
}

#[restate_sdk::service]
impl PairDirect {
    /// Answers a question with a report.
    #[handler]
    async fn ask(&self, ctx: Context<'_>, question: Json<Question>) -> HandlerResult<Json<Report>> {
        let question = question.into_inner();
        let mut conversation = Conversation::new();
        conversation.push_user(question.text);
        let journal = RestateJournal::new(&ctx);
        Ok(Json(journal.run(&self.agent, &mut conversation).await?.output))
    }
}

fn pair_direct_agent(llm: &str, files: &Files) -> Agent<Report> {
    Agent::builder()
        .model(model(llm))
        .tool_with_state::<Publish>(files.clone())
        .governance(governance())
        .parallel_tool_calls(std::num::NonZeroUsize::new(2).unwrap())
        .output::<Report>()
        .build()
        .expect("agent")
}

fn pair_agent(llm: &str, files: &Files) -> Agent<Report> {
    Agent::builder()
        .model(model(llm))
        .tool_with_state::<Publish>(files.clone())
        .tool_with_state::<Note>(files.clone())
        .governance(governance().approver(|call: ToolCall| async move {
            if call.input["title"].as_str().is_some_and(|title| title.starts_with("Slow")) {
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            Decision::Ask
        }))
        .parallel_tool_calls(std::num::NonZeroUsize::new(2).unwrap())
        .output::<Report>()
        .build()
        .expect("agent")
}

/// The quick text agent.
pub struct Quick {
    agent: Agent,
}

#[restate_sdk::service]
impl Quick {
    /// Answers a question.
    #[handler]
    async fn ask(&self, ctx: Context<'_>, question: String) -> HandlerResult<String> {
        let mut conversation = Conversation::new();
        conversation.push_user(question);
        Ok(RestateJournal::new(&ctx).run(&self.agent, &mut conversation).await?.output)
    }
}

/// The quick agent alone (for runs in process).
pub fn quick_agent(llm: &str, files: &Files) -> Agent {
    text_agent(llm, files)
}

fn session_agent(llm: &str, files: &Files, external: toolloop::tool::ToolDefinition) -> Agent {
    Agent::builder()
        .model(model(llm))
        .system("Answer briefly.")
        .tool_with_state::<Note>(files.clone())
        .tool_with_state::<Publish>(files.clone())
        .external_tool(external)
        .governance(governance())
        .build()
        .expect("agent")
}

fn text_agent(llm: &str, files: &Files) -> Agent {
    Agent::builder()
        .model(model(llm))
        .system("Answer briefly.")
        .tool_with_state::<Note>(files.clone())
        .tool_with_state::<Publish>(files.clone())
        .governance(governance())
        .build()
        .expect("agent")
}

/// The endpoint serving every service of the tests.
pub fn endpoint(llm: &str, files: &Files) -> Endpoint {
    let research = Agent::builder()
        .model(model(llm))
        .system("Research, take notes, report.")
        .tool_with_state::<Note>(files.clone())
        .tool_with_state::<Hold>(files.clone())
        .tool_with_state::<Publish>(files.clone())
        .governance(research_governance())
        .output::<Report>()
        .build()
        .expect("agent");
    let quick = text_agent(llm, files);
    // The sessions' agent also has a tool the caller executes (its calls pause the run).
    let locate = toolloop::tool::ToolDefinition::from_schema(
        "locate",
        "The user's location, from their device.",
        serde_json::json!({"type": "object", "properties": {}}),
    );
    let sessions = session_agent(llm, files, locate);
    let fast_retries = || {
        ServiceOptions::new()
            .retry_policy_initial_interval(Duration::from_millis(50))
            .retry_policy_max_interval(Duration::from_millis(300))
    };
    Endpoint::builder()
        .bind(Research { agent: research }.into_service_definition().options(fast_retries()))
        .bind(Pair { agent: pair_agent(llm, files) }.into_service_definition().options(fast_retries()))
        .bind(PairDirect { agent: pair_direct_agent(llm, files) }.into_service_definition().options(fast_retries()))
        .bind(Quick { agent: quick }.into_service_definition().options(fast_retries()))
        .bind(Session::new(sessions).into_service_definition().options(fast_retries()))
        .bind(ToolApprovals.into_service_definition().options(fast_retries()))
        .build()
}
