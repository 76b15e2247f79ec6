//! MCP over stdio against a child process: the workspace's test server
//! (`tests/mcp`, toolloop tools served by `McpServer`), started by
//! `McpClient` like any stdio MCP server.

use toolloop_mcp_tests as tools;

use std::time::Duration;

use serde_json::json;
use tokio::time::timeout;
use toolloop::mcp::{McpClient, McpError, McpTransport, ToolSelection};
use toolloop::tool::ToolExecution;
use toolloop::{BuildError, CancellationToken, FailureKind, Tool as _, ToolCall, ToolSet};

/// A guard against hangs, far above what any step takes; not a measurement.
const PATIENCE: Duration = Duration::from_secs(30);

fn test_server() -> McpTransport {
    McpTransport::child_process(env!("CARGO_BIN_EXE_toolloop-mcp-test-server")).quiet()
}

async fn connect() -> McpClient {
    McpClient::connect(test_server()).await.expect("the test server starts")
}

async fn execute(tools: &ToolSet, name: &str, input: serde_json::Value) -> ToolExecution {
    let call = ToolCall::new(format!("call_{name}"), name, input);
    timeout(PATIENCE, tools.execute(&call, &CancellationToken::new()))
        .await
        .expect("the call never hangs")
        .expect("not cancelled")
}

#[tokio::test]
async fn lists_the_servers_tools_with_the_schemas_derived_tools_have() {
    let client = connect().await;
    assert_eq!(client.name(), "toolloop-mcp-test-server");
    assert_eq!(client.server_info().unwrap().name, "toolloop-test-server");
    assert!(client.is_connected());

    let tools = client.tool_set(&ToolSelection::all()).unwrap();
    let names: Vec<&str> = tools.names().collect();
    assert_eq!(
        names,
        ["add", "echo", "fail", "boom", "sleepy", "hang", "hang_started", "cancelled_calls", "unlock", "lock", "exit"]
    );
    // The same tool, derived locally and listed over MCP, is described to
    // models identically: plain schema, OpenAI strict schema, description.
    let over_mcp = tools.get("echo").unwrap().definition();
    let derived = tools::Echo::definition();
    assert_eq!(over_mcp.description, derived.description);
    assert_eq!(over_mcp.input_schema, derived.input_schema);
    assert_eq!(over_mcp.strict_input_schema, derived.strict_input_schema);
    assert!(over_mcp.strict_input_schema.is_some());
    client.close().await;
}

#[tokio::test]
async fn results_and_failures_come_back_as_tool_results() {
    let client = connect().await;
    let tools = client.tool_set(&ToolSelection::all()).unwrap();

    let added = execute(&tools, "add", json!({"a": 2, "b": 3})).await;
    assert_eq!(added.result.content, "5");
    assert!(!added.result.is_error());

    // Structured content is the output value; the model reads it as JSON.
    let echoed = execute(&tools, "echo", json!({"text": "hi", "times": 2})).await;
    assert_eq!(echoed.output.unwrap().value(), &json!({"echo": "hihi"}));
    assert_eq!(echoed.result.content, r#"{"echo":"hihi"}"#);

    // Strict mode's nulls for left-out optional fields are dropped before sending.
    let strict_style = execute(&tools, "echo", json!({"text": "hi", "times": null})).await;
    assert_eq!(strict_style.result.content, r#"{"echo":"hi"}"#);

    // The server's errors, panics and timeouts arrive with the text its loop would show.
    let failed = execute(&tools, "fail", json!({"message": "the disk is full"})).await;
    assert_eq!(failed.result.failure, Some(FailureKind::ToolFailed));
    assert_eq!(failed.result.content, "the disk is full");
    let panicked = execute(&tools, "boom", json!({})).await;
    assert_eq!(panicked.result.failure, Some(FailureKind::ToolFailed));
    assert_eq!(panicked.result.content, "tool `boom` panicked: kaboom");
    let slept = execute(&tools, "sleepy", json!({})).await;
    assert_eq!(slept.result.failure, Some(FailureKind::ToolFailed));
    assert_eq!(slept.result.content, "tool `sleepy` did not finish within 100ms");
    client.close().await;
}

#[tokio::test]
async fn arguments_are_checked_against_the_servers_schema_before_sending() {
    let client = connect().await;
    let tools = client.tool_set(&ToolSelection::all()).unwrap();

    let too_long = execute(&tools, "echo", json!({"text": "x".repeat(25)})).await;
    assert_eq!(too_long.result.failure, Some(FailureKind::InvalidArguments));
    assert_eq!(too_long.result.content, "invalid arguments at `text`: has 25 characters, at most 20 allowed");

    let wrong_type = execute(&tools, "add", json!({"a": "two", "b": 3})).await;
    assert_eq!(wrong_type.result.failure, Some(FailureKind::InvalidArguments));
    assert_eq!(wrong_type.result.content, "invalid arguments at `a`: expected an integer, got the string \"two\"");

    let missing = execute(&tools, "add", json!({"a": 1})).await;
    assert_eq!(missing.result.content, "invalid arguments at `b`: missing required field");

    let not_json = execute(&tools, "add", json!("{not json")).await;
    assert_eq!(not_json.result.failure, Some(FailureKind::InvalidArguments));
    assert!(not_json.result.content.starts_with("invalid arguments: not valid JSON"), "{}", not_json.result.content);
    client.close().await;
}

#[tokio::test]
async fn a_timed_out_call_is_cancelled_on_the_server() {
    let client = connect().await;
    let selection = ToolSelection::all().prefix("lab_").only(["hang", "cancelled_calls"]);
    let mut tools = client.tool_set(&selection.clone().timeout(Duration::from_millis(300))).unwrap();
    assert_eq!(tools.names().collect::<Vec<_>>(), ["lab_hang", "lab_cancelled_calls"]);

    let timed_out = execute(&tools, "lab_hang", json!({})).await;
    assert_eq!(timed_out.result.failure, Some(FailureKind::TimedOut));
    assert_eq!(timed_out.result.content, "tool `lab_hang` did not finish within 300ms");

    // The server dropped the call: its handler saw the cancellation.
    tools = client.tool_set(&selection).unwrap();
    let cancelled = execute(&tools, "lab_cancelled_calls", json!({"at_least": 1})).await;
    assert_eq!(cancelled.result.content, "1");
    client.close().await;
}

#[tokio::test]
async fn cancelling_a_call_sends_the_cancellation_to_the_server() {
    let client = connect().await;
    let tools = client.tool_set(&ToolSelection::all()).unwrap();
    let cancel = CancellationToken::new();

    let hang = ToolCall::new("h1", "hang", json!({}));
    let hanging = tools.execute(&hang, &cancel);
    let started = async {
        let execution = execute(&tools, "hang_started", json!({"at_least": 1})).await;
        assert_eq!(execution.result.content, "started");
        cancel.cancel();
    };
    let (outcome, ()) = timeout(PATIENCE, async { tokio::join!(hanging, started) }).await.unwrap();
    assert!(outcome.is_err(), "a cancelled call is `Err(Cancelled)`");

    let cancelled = execute(&tools, "cancelled_calls", json!({"at_least": 1})).await;
    assert_eq!(cancelled.result.content, "1");
    client.close().await;
}

#[tokio::test]
async fn the_tool_list_follows_the_servers_changes() {
    let client = connect().await;
    let before = client.tool_set(&ToolSelection::all()).unwrap();
    assert!(before.get("secret").is_none());
    let mut changes = client.watch_tools();

    let unlocked = execute(&before, "unlock", json!({})).await;
    assert_eq!(unlocked.result.content, "unlocked");
    timeout(PATIENCE, changes.changed()).await.expect("list_changed arrives").unwrap();
    assert!(client.remote_tools().iter().any(|tool| tool.name == "secret"));

    let after = client.tool_set(&ToolSelection::all()).unwrap();
    assert_eq!(execute(&after, "secret", json!({})).await.result.content, "42");

    execute(&after, "lock", json!({})).await;
    timeout(PATIENCE, changes.changed()).await.expect("list_changed arrives").unwrap();
    let gone = execute(&after, "secret", json!({})).await;
    assert_eq!(gone.result.failure, Some(FailureKind::ToolFailed));
    assert_eq!(gone.result.content, "tool `secret` is no longer offered by MCP server `toolloop-mcp-test-server`");
    client.close().await;
}

#[tokio::test]
async fn a_server_that_exits_mid_call_gives_error_results_until_reconnected() {
    let client = connect().await;
    let tools = client.tool_set(&ToolSelection::all()).unwrap();

    let exited = execute(&tools, "exit", json!({})).await;
    assert_eq!(exited.result.failure, Some(FailureKind::ToolFailed));
    assert_eq!(
        exited.result.content,
        "MCP server `toolloop-mcp-test-server` closed the connection before answering (it may have exited)"
    );
    assert!(!client.is_connected());
    let after_exit = execute(&tools, "add", json!({"a": 1, "b": 1})).await;
    assert_eq!(after_exit.result.content, "MCP server `toolloop-mcp-test-server` is disconnected");
    assert!(matches!(client.refresh_tools().await, Err(McpError::Disconnected { .. })));

    // A new process; the tools built before use it.
    client.reconnect().await.unwrap();
    assert!(client.is_connected());
    assert_eq!(execute(&tools, "add", json!({"a": 1, "b": 1})).await.result.content, "2");
    client.close().await;
    assert_eq!(
        execute(&tools, "add", json!({"a": 1, "b": 1})).await.result.content,
        "MCP server `toolloop-mcp-test-server` is disconnected"
    );
}

#[tokio::test]
async fn auto_reconnect_starts_the_server_again_for_the_next_call() {
    let client = McpClient::connect(test_server().auto_reconnect()).await.unwrap();
    let tools = client.tool_set(&ToolSelection::all()).unwrap();
    let exited = execute(&tools, "exit", json!({})).await;
    assert!(exited.result.is_error());
    assert_eq!(execute(&tools, "add", json!({"a": 20, "b": 22})).await.result.content, "42");
    client.close().await;
}

#[tokio::test]
async fn names_are_prefixed_filtered_and_duplicates_rejected() {
    let client = connect().await;
    let mut tools = ToolSet::new();
    tools.add::<tools::Add>().unwrap();

    // The server's `add` collides with the local one: nothing is added.
    let clash = client.add_tools(&mut tools, &ToolSelection::all());
    assert!(
        matches!(clash, Err(McpError::Build(BuildError::DuplicateToolName(ref name))) if name == "add"),
        "{clash:?}"
    );
    assert_eq!(tools.len(), 1);

    let added = client.add_tools(&mut tools, &ToolSelection::all().prefix("remote_").filter(|n| n.starts_with('a')));
    assert_eq!(added.unwrap(), 1);
    assert_eq!(tools.names().collect::<Vec<_>>(), ["add", "remote_add"]);
    assert_eq!(execute(&tools, "remote_add", json!({"a": 1, "b": 2})).await.result.content, "3");

    let too_long = client.tools(&ToolSelection::all().prefix("p".repeat(62)));
    assert!(matches!(too_long, Err(McpError::ToolName { .. })), "{:?}", too_long.err());
    client.close().await;
}

#[tokio::test]
async fn a_server_that_cannot_start_is_a_typed_error() {
    let missing = McpClient::connect(McpTransport::child_process("/nonexistent/mcp-server")).await;
    assert!(matches!(missing, Err(McpError::Spawn { ref server, .. }) if server == "mcp-server"), "{missing:?}");

    // A process that exits at once never completes the handshake.
    let quits = McpClient::connect(McpTransport::child_process("true").label("quitter")).await;
    assert!(matches!(quits, Err(McpError::Connect { ref server, .. }) if server == "quitter"), "{quits:?}");
}

#[tokio::test]
async fn a_run_whose_server_dies_sees_error_results_or_stops_with_a_typed_error() {
    use toolloop::run::Termination;
    use toolloop::testing::ScriptedModel;
    use toolloop::{Agent, Conversation, ModelResponse};

    let script = || {
        ScriptedModel::from_responses([
            ModelResponse::from_tool_calls([ToolCall::new("1", "exit", json!({}))]),
            ModelResponse::from_tool_calls([ToolCall::new("2", "add", json!({"a": 1, "b": 2}))]),
            ModelResponse::from_text("the tool server is gone"),
        ])
    };
    let agent_for = |client: &McpClient, model: ScriptedModel, stop: bool| {
        let mut builder = Agent::builder().model(model);
        for tool in client.tools(&ToolSelection::all()).unwrap() {
            builder = builder.tool_dyn(tool);
        }
        if stop {
            builder = builder.stop_on_failed_tool();
        }
        builder.build().unwrap()
    };

    // By default the model reads what happened and carries on.
    let client = connect().await;
    let model = script();
    let mut conversation = Conversation::new();
    conversation.push_user("Quit, then add.");
    let done =
        timeout(PATIENCE, agent_for(&client, model.clone(), false).run(&mut conversation)).await.unwrap().unwrap();
    assert_eq!(done.output, "the tool server is gone");
    let results: Vec<_> = conversation.messages().iter().flat_map(toolloop::Message::tool_results).collect();
    assert_eq!(results.len(), 2);
    assert!(results[0].content.contains("closed the connection before answering"), "{}", results[0].content);
    assert_eq!(results[1].content, "MCP server `toolloop-mcp-test-server` is disconnected");

    // A run that must not go on without its tools stops with a typed error.
    client.reconnect().await.unwrap();
    let mut conversation = Conversation::new();
    conversation.push_user("Quit, then add.");
    let error =
        timeout(PATIENCE, agent_for(&client, script(), true).run(&mut conversation)).await.unwrap().unwrap_err();
    assert!(
        matches!(error.termination(), Termination::ToolPolicy { tool, kind: FailureKind::ToolFailed } if tool == "exit"),
        "{error}"
    );
    client.close().await;
}
