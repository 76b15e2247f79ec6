//! The shapes of `run` a derived tool accepts, each called through a
//! `ToolSet`. The shapes it rejects are pinned in `tests/compile_fail/tests/ui/tool/run_*.rs`.
#![allow(clippy::unused_async)] // tool handlers are async by contract, even when they never wait

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;

use serde_json::json;
use toolloop::{CancellationToken, ToolCall, ToolSet};

async fn content(tools: &ToolSet, name: &str) -> String {
    let call = ToolCall::new("1", name, json!({}));
    tools.execute(&call, &CancellationToken::new()).await.unwrap().result.content
}

/// Returns a future without being `async`.
#[derive(toolloop::Tool)]
struct ReturnsFuture {
    /// What to say.
    #[serde(default)]
    text: Option<String>,
}

impl ReturnsFuture {
    // The future is built outside `async`, as a hand-written one would be.
    #[allow(clippy::manual_async_fn)]
    fn run(self) -> impl Future<Output = Result<String, Infallible>> + Send {
        let text = self.text.unwrap_or_else(|| "from a future".to_owned());
        async move { Ok(text) }
    }
}

/// Fails with a boxed error.
#[derive(toolloop::Tool)]
struct BoxedError {}

impl BoxedError {
    async fn run(self) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        Err("the disk is full".into())
    }
}

/// Returns a structured value.
#[derive(toolloop::Tool)]
struct Structured {}

#[derive(serde::Serialize)]
struct Report {
    rows: u32,
}

impl Structured {
    async fn run(self) -> Result<Report, String> {
        Ok(Report { rows: 3 })
    }
}

struct Db {
    name: &'static str,
}

/// Uses shared state.
#[derive(toolloop::Tool)]
#[tool(state = Arc<Db>)]
struct SharedState {}

impl SharedState {
    async fn run(self, db: &Arc<Db>) -> Result<String, Infallible> {
        Ok(format!("{} (shared by {})", db.name, Arc::strong_count(db)))
    }
}

/// Uses state by reference.
#[derive(toolloop::Tool)]
#[tool(state = Db)]
struct PlainState {}

impl PlainState {
    pub(crate) async fn run(self, db: &Db) -> Result<&'static str, Infallible> {
        Ok(db.name)
    }
}

#[tokio::test]
async fn every_accepted_shape_of_run_is_called() {
    let db = Arc::new(Db { name: "main" });
    let mut tools = ToolSet::new();
    tools.add::<ReturnsFuture>().unwrap().add::<BoxedError>().unwrap().add::<Structured>().unwrap();
    tools.add_with_state::<SharedState>(Arc::new(Arc::clone(&db))).unwrap();
    tools.add_with_state::<PlainState>(Db { name: "own" }).unwrap();

    assert_eq!(content(&tools, "returns_future").await, "from a future");
    assert_eq!(content(&tools, "boxed_error").await, "the disk is full");
    assert_eq!(content(&tools, "structured").await, r#"{"rows":3}"#);
    assert_eq!(content(&tools, "shared_state").await, "main (shared by 2)");
    assert_eq!(content(&tools, "plain_state").await, "own");
}

/// The same state shared by two tools through one `Arc`.
#[derive(toolloop::Tool)]
#[tool(state = Db)]
struct AlsoPlainState {}

impl AlsoPlainState {
    async fn run(self, db: &Db) -> Result<&'static str, Infallible> {
        Ok(db.name)
    }
}

#[tokio::test]
async fn one_arc_of_state_is_shared_between_tools() {
    let db = Arc::new(Db { name: "shared" });
    let mut tools = ToolSet::new();
    tools.add_with_state::<PlainState>(Arc::clone(&db)).unwrap();
    tools.add_with_state::<AlsoPlainState>(Arc::clone(&db)).unwrap();
    assert_eq!(Arc::strong_count(&db), 3);
    assert_eq!(content(&tools, "also_plain_state").await, "shared");
}
