//! An MCP tool deferred for approval: the run pauses before the remote call,
//! the conversation goes through JSON, and the approved call runs on the MCP
//! server when the run resumes (a denied one never reaches it).

use toolloop_mcp_tests as tools;

use std::time::Duration;

use serde_json::json;
use tokio::net::TcpListener;
use tokio::time::timeout;
use toolloop::mcp::{McpClient, McpTransport, ToolSelection};
use toolloop::run::{Governance, LoopOutput, Resolution, ToolLoop};
use toolloop::testing::ScriptedModel;
use toolloop::{CancellationToken, Conversation, FailureKind, ModelResponse, ToolCall};

const PATIENCE: Duration = Duration::from_secs(30);

#[tokio::test]
async fn an_approved_mcp_call_runs_on_the_server_after_the_resume() {
    let shutdown = CancellationToken::new();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (server, _lab) = tools::server(false);
    let serving = shutdown.clone();
    tokio::spawn(async move { server.serve_http(listener, serving).await });
    let client = McpClient::connect(McpTransport::streamable_http(&url)).await.unwrap();
    let tools = client.tool_set(&ToolSelection::all()).unwrap();

    let model = ScriptedModel::new()
        .respond(ModelResponse::from_tool_calls([
            ToolCall::new("a1", "add", json!({"a": 2, "b": 3})),
            ToolCall::new("f1", "fail", json!({"message": "should never run"})),
        ]))
        .respond(ModelResponse::from_text("2 + 3 = 5"));
    let governance = Governance::new().needs_approval("add").needs_approval("fail");
    let mut tool_loop = ToolLoop::new(model.clone(), tools).governance(governance);
    let mut conversation = Conversation::new();
    conversation.push_user("Add 2 and 3.");
    let paused = timeout(PATIENCE, tool_loop.run(&mut conversation)).await.unwrap().unwrap_err();
    assert_eq!(paused.deferred_calls().len(), 2);
    assert_eq!(paused.metadata().tool_calls, 0, "nothing reached the server yet");

    let json = serde_json::to_string(&conversation).unwrap();
    let mut conversation: Conversation = serde_json::from_str(&json).unwrap();
    let resolutions = [("a1", Resolution::Approve), ("f1", Resolution::deny("not needed"))];
    let done = timeout(PATIENCE, tool_loop.resume(&mut conversation, resolutions)).await.unwrap().unwrap();
    assert_eq!(done.output, LoopOutput::Answer("2 + 3 = 5".into()));
    let results: Vec<_> = conversation.messages().iter().flat_map(|message| message.tool_results().cloned()).collect();
    assert_eq!((results[0].content.as_str(), results[0].failure), ("5", None));
    assert_eq!(results[1].failure, Some(FailureKind::ApprovalDenied));
    assert_eq!(done.metadata.tools_used.get("add"), Some(&1));
    assert_eq!(done.metadata.tool_calls, 1);

    client.close().await;
    shutdown.cancel();
}
