//! Interoperability with MCP software toolloop did not write, from the Python package index:
//! the reference `mcp-server-time` server, and the Python SDK's client
//! against toolloop's server.
//!
//! Ignored by default (they need Python packages); run them with
//!
//! ```text
//! pip install mcp-server-time        # also installs the `mcp` SDK
//! cargo test -p toolloop-mcp-tests --test mcp_interop -- --ignored
//! ```
//!
//! Run that way without the packages, they fail and say what to install:
//! a missing server is never a pass.

use std::process::Command;
use std::time::Duration;

use serde_json::json;
use tokio::time::timeout;
use toolloop::mcp::{McpClient, McpTransport, ToolSelection};
use toolloop::tool::ToolExecution;
use toolloop::{CancellationToken, FailureKind, ToolCall, ToolSet};

const PATIENCE: Duration = Duration::from_secs(60);

/// `mcp-server-time`, or the program `TOOLLOOP_MCP_SERVER_TIME` names.
fn time_server() -> String {
    let program = std::env::var("TOOLLOOP_MCP_SERVER_TIME").unwrap_or_else(|_| "mcp-server-time".to_owned());
    let found = Command::new(&program).arg("--help").output().is_ok_and(|output| output.status.success());
    assert!(
        found,
        "`{program}` is not installed: `pip install mcp-server-time` (or set TOOLLOOP_MCP_SERVER_TIME), \
         then run `cargo test -p toolloop-mcp-tests --test mcp_interop -- --ignored`"
    );
    program
}

async fn execute(tools: &ToolSet, name: &str, input: serde_json::Value) -> ToolExecution {
    let call = ToolCall::new("c", name, input);
    timeout(PATIENCE, tools.execute(&call, &CancellationToken::new())).await.expect("never hangs").unwrap()
}

#[tokio::test]
#[ignore = "needs `pip install mcp-server-time`; see the top of tests/mcp/tests/mcp_interop.rs"]
async fn the_reference_time_server_works_as_toolloop_tools() {
    let server = McpTransport::child_process(time_server()).arg("--local-timezone").arg("UTC").quiet();
    let client = McpClient::connect(server.request_timeout(PATIENCE)).await.unwrap();
    assert_eq!(client.server_info().unwrap().name, "mcp-time");
    let tools = client.tool_set(&ToolSelection::all().prefix("time_")).unwrap();
    assert_eq!(tools.names().collect::<Vec<_>>(), ["time_get_current_time", "time_convert_time"]);
    let definition = tools.get("time_get_current_time").unwrap().definition();
    assert_eq!(definition.input_schema["required"], json!(["timezone"]));
    assert!(definition.strict_input_schema.is_some());

    // Structured content (with an output schema) becomes the output value.
    let now = execute(&tools, "time_get_current_time", json!({"timezone": "Asia/Tokyo"})).await;
    assert!(!now.result.is_error(), "{}", now.result.content);
    let value = now.output.unwrap().into_value();
    assert_eq!(value["timezone"], "Asia/Tokyo");
    assert!(value["datetime"].as_str().unwrap().ends_with("+09:00"), "{value}");

    let converted = execute(
        &tools,
        "time_convert_time",
        json!({"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Kolkata"}),
    )
    .await;
    assert!(converted.result.content.contains("17:30"), "{}", converted.result.content);

    // The server's own error, and toolloop's check of its schema.
    let bad_zone = execute(&tools, "time_get_current_time", json!({"timezone": "Mars/Olympus"})).await;
    assert_eq!(bad_zone.result.failure, Some(FailureKind::ToolFailed));
    assert!(bad_zone.result.content.contains("Invalid timezone"), "{}", bad_zone.result.content);
    let missing = execute(&tools, "time_get_current_time", json!({})).await;
    assert_eq!(missing.result.content, "invalid arguments at `timezone`: missing required field");
    client.close().await;
}

/// Python's MCP client calling toolloop's test server over stdio.
const PYTHON_CLIENT: &str = r#"
import asyncio, json, sys
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

def is_error(result):
    return getattr(result, "is_error", getattr(result, "isError", None))

def structured(result):
    return getattr(result, "structured_content", getattr(result, "structuredContent", None))

async def main():
    async with stdio_client(StdioServerParameters(command=sys.argv[1], args=[])) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            out = {"tools": [tool.name for tool in (await session.list_tools()).tools]}
            for key, name, arguments in [
                ("add", "add", {"a": 2, "b": 3}),
                ("echo", "echo", {"text": "hi", "times": 2}),
                ("fail", "fail", {"message": "no"}),
                ("bad", "add", {"a": "x", "b": 1}),
            ]:
                result = await session.call_tool(name, arguments)
                out[key] = [is_error(result), result.content[0].text, structured(result)]
            print(json.dumps(out))

asyncio.run(main())
"#;

#[test]
#[ignore = "needs `pip install mcp` (comes with mcp-server-time); see the top of tests/mcp/tests/mcp_interop.rs"]
fn pythons_mcp_client_calls_toolloop_tools() {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let has_sdk = Command::new(&python).args(["-c", "import mcp"]).output().is_ok_and(|o| o.status.success());
    assert!(has_sdk, "Python's MCP SDK is not installed for `{python}`: `pip install mcp`");

    let output = Command::new(&python)
        .args(["-c", PYTHON_CLIENT, env!("CARGO_BIN_EXE_toolloop-mcp-test-server")])
        .output()
        .expect("python runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let seen: serde_json::Value = serde_json::from_slice(&output.stdout).expect("the script prints JSON");
    assert_eq!(seen["tools"][0], "add");
    assert_eq!(seen["add"], json!([false, "5", null]));
    assert_eq!(seen["echo"], json!([false, r#"{"echo":"hihi"}"#, {"echo": "hihi"}]));
    assert_eq!(seen["fail"], json!([true, "no", null]));
    assert_eq!(seen["bad"], json!([true, "invalid arguments at `a`: invalid type: string \"x\", expected i64", null]));
}
