//! MCP over Streamable HTTP on 127.0.0.1: toolloop's server on a port the
//! test opens, toolloop's client connecting to it.

use toolloop_mcp_tests as tools;

use std::time::Duration;

use serde_json::json;
use tokio::net::TcpListener;
use tokio::time::timeout;
use toolloop::mcp::{McpClient, McpError, McpTransport, ToolSelection};
use toolloop::tool::ToolExecution;
use toolloop::{CancellationToken, FailureKind, ToolCall, ToolSet};

const PATIENCE: Duration = Duration::from_secs(30);

async fn execute(tools: &ToolSet, name: &str, input: serde_json::Value) -> ToolExecution {
    let call = ToolCall::new("c", name, input);
    timeout(PATIENCE, tools.execute(&call, &CancellationToken::new())).await.expect("never hangs").unwrap()
}

/// Serves the test tools on a free port until `shutdown`; returns the URL.
async fn serve(shutdown: &CancellationToken) -> (String, std::sync::Arc<tools::Lab>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (server, lab) = tools::server(false);
    let shutdown = shutdown.clone();
    tokio::spawn(async move { server.serve_http(listener, shutdown).await });
    (url, lab)
}

#[tokio::test]
async fn tools_are_listed_called_and_changed_over_http() {
    let shutdown = CancellationToken::new();
    let (url, lab) = serve(&shutdown).await;
    let client =
        McpClient::connect(McpTransport::streamable_http(&url).bearer_token("not-checked-here")).await.unwrap();
    assert_eq!(client.name(), url);
    let tools = client.tool_set(&ToolSelection::all()).unwrap();

    assert_eq!(execute(&tools, "add", json!({"a": 2, "b": 2})).await.result.content, "4");
    let failed = execute(&tools, "fail", json!({"message": "nope"})).await;
    assert_eq!((failed.result.failure, failed.result.content.as_str()), (Some(FailureKind::ToolFailed), "nope"));
    let panicked = execute(&tools, "boom", json!({})).await;
    assert_eq!(panicked.result.content, "tool `boom` panicked: kaboom");

    // A timeout cancels the call on the server, over HTTP too.
    let short = client.tool_set(&ToolSelection::all().only(["hang"]).timeout(Duration::from_millis(300))).unwrap();
    assert_eq!(execute(&short, "hang", json!({})).await.result.failure, Some(FailureKind::TimedOut));
    timeout(PATIENCE, lab.cancelled(1)).await.expect("the server saw the cancellation");

    // `tools/list_changed` arrives on the session's event stream.
    let mut changes = client.watch_tools();
    execute(&tools, "unlock", json!({})).await;
    timeout(PATIENCE, changes.changed()).await.expect("list_changed arrives").unwrap();
    assert!(client.remote_tools().iter().any(|tool| tool.name == "secret"));

    client.close().await;
    shutdown.cancel();
}

#[tokio::test]
async fn a_server_that_shuts_down_mid_call_gives_an_error_result() {
    let shutdown = CancellationToken::new();
    let (url, lab) = serve(&shutdown).await;
    let client = McpClient::connect(McpTransport::streamable_http(&url)).await.unwrap();
    let tools = client.tool_set(&ToolSelection::all()).unwrap();

    let hang = ToolCall::new("h", "hang", json!({}));
    let never = CancellationToken::new();
    let hanging = tools.execute(&hang, &never);
    let stop_server = async {
        lab.started(1).await;
        shutdown.cancel();
    };
    let (outcome, ()) = timeout(PATIENCE, async { tokio::join!(hanging, stop_server) }).await.expect("never hangs");
    let execution = outcome.unwrap();
    assert_eq!(execution.result.failure, Some(FailureKind::ToolFailed));
    assert_eq!(
        execution.result.content,
        format!("MCP server `{url}` closed the connection before answering (it may have exited)")
    );
    assert!(!client.is_connected());
    client.close().await;
}

#[tokio::test]
async fn nothing_listening_is_a_typed_connect_error() {
    // Bind and drop, so the port is (almost surely) closed.
    let port = TcpListener::bind("127.0.0.1:0").await.unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let error = McpClient::connect(McpTransport::streamable_http(&url).request_timeout(PATIENCE)).await.unwrap_err();
    assert!(matches!(error, McpError::Connect { ref server, .. } if *server == url), "{error:?}");
    assert!(matches!(
        McpClient::connect(McpTransport::streamable_http("ftp://x/mcp")).await,
        Err(McpError::Connect { .. })
    ));
}

#[tokio::test]
async fn a_setting_for_another_kind_of_transport_fails_the_connect_and_names_it() {
    // Never silently dropped: a child process argument on an HTTP endpoint,
    // an HTTP header on a child process.
    let http = McpTransport::streamable_http("http://127.0.0.1:9/mcp").arg("--verbose");
    let error = McpClient::connect(http).await.unwrap_err();
    assert!(
        matches!(&error, McpError::Connect { message, .. }
            if message == "the transport setting `arg` does not apply to a Streamable HTTP endpoint"),
        "{error:?}"
    );
    let child = McpTransport::child_process("/nonexistent/mcp-server").header("X-Key", "k").quiet();
    let error = McpClient::connect(child).await.unwrap_err();
    assert!(
        matches!(&error, McpError::Connect { message, .. }
            if message == "the transport setting `header` does not apply to a child process"),
        "{error:?}"
    );
}
