//! Tools, outputs and response builders shared by the agent and loop tests.
#![allow(dead_code, unreachable_pub, clippy::unused_async)] // each test file uses a subset; tool handlers are async by contract

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use toolloop::{ContentBlock, Conversation, FailureKind, Message, ModelResponse, Role, ToolCall, ToolResult, Usage};

/// Search the web.
#[derive(toolloop::Tool)]
pub struct Search {
    /// What to look for.
    pub query: String,
}

impl Search {
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok(format!("results for {}", self.query))
    }
}

/// Look a key up in the database.
#[derive(toolloop::Tool)]
#[tool(state = Db)]
pub struct Lookup {
    /// The key.
    pub key: String,
}

/// A stand-in database: counts lookups.
#[derive(Clone, Default)]
pub struct Db {
    pub lookups: Arc<AtomicUsize>,
}

impl Lookup {
    async fn run(self, db: &Db) -> Result<String, String> {
        db.lookups.fetch_add(1, Ordering::SeqCst);
        if self.key == "missing" { Err(format!("no row for `{}`", self.key)) } else { Ok(format!("row {}", self.key)) }
    }
}

/// Wait, then answer.
#[derive(toolloop::Tool)]
#[tool(state = Gauge)]
pub struct Wait {
    /// Milliseconds to wait.
    pub millis: u64,
    /// What to answer.
    pub label: String,
}

/// Tracks how many `Wait` calls run at once.
#[derive(Clone, Default)]
pub struct Gauge {
    pub running: Arc<AtomicUsize>,
    pub peak: Arc<AtomicUsize>,
    pub finished: Arc<AtomicUsize>,
}

impl Wait {
    async fn run(self, gauge: &Gauge) -> Result<String, std::convert::Infallible> {
        let now = gauge.running.fetch_add(1, Ordering::SeqCst) + 1;
        gauge.peak.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(self.millis)).await;
        gauge.running.fetch_sub(1, Ordering::SeqCst);
        gauge.finished.fetch_add(1, Ordering::SeqCst);
        Ok(self.label)
    }
}

/// A report.
#[derive(Debug, Clone, PartialEq, serde::Deserialize, schemars::JsonSchema)]
pub struct Report {
    /// The title.
    pub title: String,
    /// A score from 1 to 10.
    #[schemars(range(min = 1, max = 10))]
    pub score: u32,
}

/// A tool call block.
pub fn call(id: &str, name: &str, input: Value) -> ToolCall {
    ToolCall::new(id, name, input)
}

/// A response holding `calls`.
pub fn calls(calls: impl IntoIterator<Item = ToolCall>) -> ModelResponse {
    ModelResponse::from_tool_calls(calls)
}

/// A response with one call of the output tool.
pub fn output(id: &str, title: &str, score: u32) -> ModelResponse {
    calls([call(id, "final_output", json!({"title": title, "score": score}))])
}

/// A response with one `submit` call.
pub fn submit(id: &str) -> ModelResponse {
    calls([call(id, "submit", json!({}))])
}

/// `Usage::new(input, output)`.
pub fn usage(input: u64, output: u64) -> Usage {
    Usage::new(input, output)
}

/// A conversation holding one user message.
pub fn ask(text: &str) -> Conversation {
    let mut conversation = Conversation::new();
    conversation.push_user(text);
    conversation
}

/// Every tool result in the conversation, in order.
pub fn results(conversation: &Conversation) -> Vec<ToolResult> {
    conversation.messages().iter().flat_map(|m| m.tool_results().cloned()).collect()
}

/// The failure kinds of every tool result, in order.
pub fn failures(conversation: &Conversation) -> Vec<Option<FailureKind>> {
    results(conversation).iter().map(|r| r.failure).collect()
}

/// Panics unless every tool call has a result and roles alternate where the APIs require it.
#[track_caller]
pub fn assert_consistent(conversation: &Conversation) {
    assert!(
        conversation.unanswered_tool_calls().is_empty(),
        "dangling tool calls: {:?}",
        conversation.unanswered_tool_calls()
    );
    for pair in conversation.messages().windows(2) {
        if pair[0].tool_calls().next().is_some() {
            assert_eq!(pair[1].role, Role::User, "a tool call must be followed by its results");
            let ids: Vec<_> = pair[0].tool_calls().map(|c| c.id.clone()).collect();
            let answered: Vec<_> = pair[1].tool_results().map(|r| r.call_id.clone()).collect();
            assert_eq!(ids, answered, "results must answer the calls in order, in the next message");
        }
    }
}

/// The text of every user message that holds text (feedback, prompts).
pub fn user_texts(conversation: &Conversation) -> Vec<String> {
    conversation
        .messages()
        .iter()
        .filter(|m| m.role == Role::User && m.content.iter().any(|b| matches!(b, ContentBlock::Text { .. })))
        .map(Message::text)
        .collect()
}

/// Delete a file (counts its deletions: a test can tell whether it ran).
#[derive(toolloop::Tool)]
#[tool(state = Deletions)]
pub struct Delete {
    /// Its path.
    pub path: String,
}

/// How many times [`Delete`] ran.
#[derive(Default)]
pub struct Deletions(pub AtomicUsize);

impl Delete {
    async fn run(self, deletions: &Deletions) -> Result<String, std::convert::Infallible> {
        deletions.0.fetch_add(1, Ordering::SeqCst);
        Ok(format!("deleted {}", self.path))
    }
}

/// A [`MemoryJournal`](toolloop::run::journal::MemoryJournal) that notes
/// the name of every step as the run issues it, and says whether it takes
/// steps at once (`Journal::parallel_steps`).
pub struct IssuedJournal {
    pub inner: toolloop::run::journal::MemoryJournal,
    pub parallel: bool,
    /// The steps' names, as issued.
    names: std::sync::Mutex<Vec<String>>,
    /// The tool executions the steps gave back, as JSON.
    executions: std::sync::Mutex<Vec<serde_json::Value>>,
}

impl IssuedJournal {
    pub fn new(inner: toolloop::run::journal::MemoryJournal, parallel: bool) -> Self {
        Self { inner, parallel, names: std::sync::Mutex::default(), executions: std::sync::Mutex::default() }
    }

    fn issue(&self, step: &toolloop::run::journal::Step<'_>) {
        self.names.lock().unwrap().push(step.to_string());
    }

    /// The names of the steps issued so far, in order.
    pub fn issued(&self) -> Vec<String> {
        self.names.lock().unwrap().clone()
    }

    /// The tool executions the steps gave back so far (recorded or
    /// replayed), as JSON, in the order they finished.
    #[allow(dead_code)] // not every test file reads them
    pub fn executions(&self) -> Vec<serde_json::Value> {
        self.executions.lock().unwrap().clone()
    }
}

impl toolloop::run::journal::Journal for IssuedJournal {
    fn model_call<'a>(
        &'a self,
        step: toolloop::run::journal::Step<'a>,
        call: toolloop::model::BoxFuture<'a, Result<ModelResponse, toolloop::ModelError>>,
    ) -> toolloop::model::BoxFuture<'a, Result<ModelResponse, toolloop::ModelError>> {
        self.issue(&step);
        self.inner.model_call(step, call)
    }

    fn summary<'a>(
        &'a self,
        step: toolloop::run::journal::Step<'a>,
        summarise: toolloop::model::BoxFuture<'a, Result<String, toolloop::ModelError>>,
    ) -> toolloop::model::BoxFuture<'a, Result<String, toolloop::ModelError>> {
        self.issue(&step);
        self.inner.summary(step, summarise)
    }

    fn tool_execution<'a>(
        &'a self,
        step: toolloop::run::journal::Step<'a>,
        execute: toolloop::model::BoxFuture<'a, Result<toolloop::tool::ToolExecution, toolloop::Cancelled>>,
    ) -> toolloop::model::BoxFuture<'a, Result<toolloop::tool::ToolExecution, toolloop::Cancelled>> {
        self.issue(&step);
        let execution = self.inner.tool_execution(step, execute);
        Box::pin(async move {
            let execution = execution.await;
            if let Ok(done) = &execution {
                self.executions.lock().unwrap().push(serde_json::to_value(done).unwrap());
            }
            execution
        })
    }

    fn approval<'a>(
        &'a self,
        call: &'a ToolCall,
        approver: Option<&'a dyn toolloop::run::Approver>,
    ) -> toolloop::model::BoxFuture<'a, toolloop::run::Decision> {
        self.issue(&toolloop::run::journal::Step::Approval { call });
        self.inner.approval(call, approver)
    }

    fn elapsed<'a>(
        &'a self,
        step: toolloop::run::journal::Step<'a>,
        measured: Duration,
    ) -> toolloop::model::BoxFuture<'a, Duration> {
        self.issue(&step);
        self.inner.elapsed(step, measured)
    }

    fn parallel_steps(&self) -> bool {
        self.parallel
    }
}
