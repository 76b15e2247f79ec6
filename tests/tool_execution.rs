//! Executing tool calls: every failure becomes an error result with a
//! machine-readable kind and a useful message; cancellation propagates.
#![allow(clippy::unused_async)] // tool handlers are async by contract, even when they never wait

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolloop::model::BoxFuture;
use toolloop::tool::{DynTool, ToolDefinition, ToolExecution};
use toolloop::{BuildError, CancellationToken, Cancelled, FailureKind, Tool, ToolCall, ToolError, ToolOutput, ToolSet};

/// Divide two numbers.
#[derive(Tool)]
struct Divide {
    /// Dividend.
    numerator: f64,
    /// Divisor; must not be zero.
    denominator: f64,
}

#[derive(Debug, thiserror::Error)]
#[error("cannot divide {0} by zero")]
struct DivideByZero(f64);

impl Divide {
    async fn run(self) -> Result<f64, DivideByZero> {
        if self.denominator == 0.0 {
            return Err(DivideByZero(self.numerator));
        }
        Ok(self.numerator / self.denominator)
    }
}

/// Always panics.
#[derive(Tool)]
struct Explode {}

impl Explode {
    async fn run(self) -> Result<(), std::convert::Infallible> {
        panic!("the fuse was lit")
    }
}

/// Sleeps for the given time.
#[derive(Tool)]
#[tool(timeout = "2s")]
struct Sleep {
    millis: u64,
}

impl Sleep {
    async fn run(self) -> Result<&'static str, std::convert::Infallible> {
        tokio::time::sleep(Duration::from_millis(self.millis)).await;
        Ok("awake")
    }
}

fn tools() -> ToolSet {
    let mut tools = ToolSet::new();
    tools.add::<Divide>().unwrap().add::<Explode>().unwrap().add::<Sleep>().unwrap();
    tools
}

async fn execute(tools: &ToolSet, name: &str, input: Value) -> ToolExecution {
    tools.execute(&ToolCall::new("call_1", name, input), &CancellationToken::new()).await.unwrap()
}

fn assert_failure(execution: &ToolExecution, kind: FailureKind, message: &str) {
    assert_eq!(execution.result.call_id, "call_1");
    assert_eq!(execution.result.failure, Some(kind), "{}", execution.result.content);
    assert!(execution.result.is_error());
    assert_eq!(execution.result.content, message);
    assert!(execution.output.is_none());
}

#[tokio::test]
async fn success_carries_text_and_structured_output() {
    let execution = execute(&tools(), "divide", json!({"numerator": 1, "denominator": 4})).await;
    assert_eq!(execution.result.failure, None);
    assert_eq!(execution.result.content, "0.25");
    assert_eq!(execution.output, Some(ToolOutput::new(json!(0.25))));
}

#[tokio::test]
async fn wrong_argument_type_names_the_field_and_what_was_expected() {
    let execution = execute(&tools(), "divide", json!({"numerator": "one", "denominator": 4})).await;
    assert_failure(
        &execution,
        FailureKind::InvalidArguments,
        "invalid arguments at `numerator`: invalid type: string \"one\", expected f64",
    );
}

#[tokio::test]
async fn missing_argument_is_named() {
    let execution = execute(&tools(), "divide", json!({"numerator": 1})).await;
    assert_failure(&execution, FailureKind::InvalidArguments, "invalid arguments: missing field `denominator`");
}

#[tokio::test]
async fn arguments_that_are_not_json_are_reported_with_what_the_model_wrote() {
    // Providers keep unparsable argument text as a JSON string.
    let execution = execute(&tools(), "divide", Value::String("{\"numerator\": 1,".into())).await;
    assert_failure(
        &execution,
        FailureKind::InvalidArguments,
        "invalid arguments: not valid JSON (EOF while parsing a value at line 1 column 16): {\"numerator\": 1,",
    );
}

#[tokio::test]
async fn double_encoded_arguments_are_accepted() {
    let execution = execute(&tools(), "divide", Value::String("{\"numerator\": 3, \"denominator\": 2}".into())).await;
    assert_eq!(execution.result.content, "1.5");
}

#[tokio::test]
async fn arguments_that_are_not_an_object_are_rejected() {
    let execution = execute(&tools(), "divide", json!([1, 2])).await;
    assert_failure(
        &execution,
        FailureKind::InvalidArguments,
        "invalid arguments: expected a JSON object, got an array",
    );
}

#[tokio::test]
async fn unknown_tool_lists_the_tools_that_exist() {
    let execution = execute(&tools(), "multiply", json!({})).await;
    assert_failure(
        &execution,
        FailureKind::UnknownTool,
        "unknown tool `multiply`; the tools are: divide, explode, sleep",
    );
}

#[tokio::test]
async fn handler_error_is_its_message() {
    let execution = execute(&tools(), "divide", json!({"numerator": 1, "denominator": 0})).await;
    assert_failure(&execution, FailureKind::ToolFailed, "cannot divide 1 by zero");
}

#[tokio::test]
async fn panic_is_caught_and_reported() {
    let execution = execute(&tools(), "explode", json!({})).await;
    assert_failure(&execution, FailureKind::Panicked, "tool `explode` panicked: the fuse was lit");
}

#[tokio::test(start_paused = true)]
async fn per_tool_timeout_expires() {
    let execution = execute(&tools(), "sleep", json!({"millis": 5_000})).await;
    assert_failure(&execution, FailureKind::TimedOut, "tool `sleep` did not finish within 2s");
}

#[tokio::test(start_paused = true)]
async fn set_default_timeout_applies_to_tools_without_their_own() {
    let mut tools = ToolSet::new();
    tools.add::<Divide>().unwrap().add_dyn(Arc::new(Slow)).unwrap().set_default_timeout(Duration::from_millis(100));
    let execution = execute(&tools, "slow", json!({})).await;
    assert_failure(&execution, FailureKind::TimedOut, "tool `slow` did not finish within 100ms");
}

#[tokio::test(start_paused = true)]
async fn cancellation_while_a_tool_runs_is_not_a_tool_error() {
    let tools = tools();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        trigger.cancel();
    });
    let call = ToolCall::new("call_1", "sleep", json!({"millis": 1_000}));
    let started = tokio::time::Instant::now();
    assert_eq!(tools.execute(&call, &cancel).await, Err(Cancelled));
    assert_eq!(started.elapsed(), Duration::from_millis(50), "cancelled promptly, not after the tool");
}

#[tokio::test]
async fn cancelled_token_runs_nothing() {
    let cancel = CancellationToken::new();
    cancel.cancel();
    let call = ToolCall::new("call_1", "explode", json!({}));
    assert_eq!(tools().execute(&call, &cancel).await, Err(Cancelled));
}

#[test]
fn duplicate_names_are_rejected() {
    let mut tools = tools();
    let error = tools.add::<Divide>().unwrap_err();
    assert_eq!(error, BuildError::DuplicateToolName("divide".into()));
    assert_eq!(error.to_string(), "two tools are named `divide`: tool names must be unique within an agent");
    assert_eq!(tools.len(), 3);
}

/// A tool defined at run time, as one bridged from another system would be.
struct Slow;

impl DynTool for Slow {
    fn definition(&self) -> &ToolDefinition {
        static DEFINITION: std::sync::OnceLock<ToolDefinition> = std::sync::OnceLock::new();
        DEFINITION.get_or_init(|| {
            ToolDefinition::from_schema("slow", "Takes its time.", json!({"type": "object", "properties": {}}))
        })
    }

    fn call<'a>(&'a self, _input: &'a Value) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async {
            tokio::time::sleep(Duration::from_secs(10)).await;
            Ok(ToolOutput::from("done"))
        })
    }
}

#[tokio::test]
async fn run_time_tools_sit_beside_derived_ones() {
    let mut tools = tools();
    tools.add_dyn(Arc::new(Slow)).unwrap();
    assert_eq!(tools.names().collect::<Vec<_>>(), ["divide", "explode", "sleep", "slow"]);
    assert_eq!(
        tools.definitions()[3].strict_input_schema,
        Some(json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false}))
    );
}

/// Blocks its thread.
#[derive(toolloop::Tool)]
// Wide margins: a loaded CI machine must not time out the 1 ms call.
#[tool(timeout = "1s")]
struct Stuck {
    /// Milliseconds to block.
    millis: u64,
}

impl Stuck {
    async fn run(self) -> Result<String, String> {
        toolloop::tool::run_blocking(move || std::thread::sleep(std::time::Duration::from_millis(self.millis))).await;
        Ok("finished".into())
    }
}

#[tokio::test]
async fn blocking_work_through_run_blocking_is_covered_by_the_timeout() {
    let mut tools = ToolSet::new();
    tools.add::<Stuck>().unwrap();
    let result = execute(&tools, "stuck", serde_json::json!({"millis": 2500})).await.result;
    assert_eq!(result.failure, Some(toolloop::FailureKind::TimedOut), "{}", result.content);
    assert_eq!(execute(&tools, "stuck", serde_json::json!({"millis": 1})).await.result.content, "finished");
}
