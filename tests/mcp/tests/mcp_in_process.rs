//! MCP with both ends in this process, over in-memory pipes:
//! - toolloop's `McpServer` against a plain rmcp client (what an MCP host sees);
//! - toolloop's `McpClient` against a plain rmcp server (a server toolloop did not build);
//! - an agent using MCP tools beside derived ones, with governance, hooks and cancellation.

use toolloop_mcp_tests as tools;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::timeout;
use toolloop::mcp::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode, ErrorData, JsonObject,
    ListToolsResult, PaginatedRequestParams, Resource, ServerCapabilities, ServerConfig, Tool as McpTool,
};
use toolloop::mcp::rmcp::service::{NotificationContext, RequestContext};
use toolloop::mcp::rmcp::{ClientHandler, Peer, RoleClient, RoleServer, ServerHandler, ServiceError, ServiceExt as _};
use toolloop::mcp::{McpClient, McpServer, McpTransport, ToolSelection};
use toolloop::run::{Decision, Governance};
use toolloop::testing::ScriptedModel;
use toolloop::{Agent, CancellationToken, Conversation, FailureKind, ModelResponse, ToolCall, ToolSet};

const PATIENCE: Duration = Duration::from_secs(30);

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        other => panic!("not an object: {other}"),
    }
}

fn text_of(result: &CallToolResult) -> &str {
    &result.content[0].as_text().expect("text content").text
}

/// A transport to a fresh in-process connection of `server` per connect.
fn in_process(server: &McpServer) -> McpTransport {
    let server = server.clone();
    McpTransport::from_stream_fn("in-process", move || {
        let server = server.clone();
        async move {
            let (client_end, server_end) = tokio::io::duplex(64 * 1024);
            tokio::spawn(async move { server.serve_stream(server_end).await });
            Ok(client_end)
        }
    })
}

// ---------------------------------------------------------------------------
// toolloop's server, seen by a plain rmcp client.
// ---------------------------------------------------------------------------

/// A plain client that reports `tools/list_changed`.
struct Host {
    list_changed: mpsc::UnboundedSender<()>,
}

impl ClientHandler for Host {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.list_changed.send(());
    }
}

#[tokio::test]
async fn the_server_answers_like_the_loop_shows_results_to_a_model() {
    let (server, lab) = tools::server(false);
    let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    tokio::spawn({
        let server = server.clone();
        async move { server.serve_stream(server_end).await }
    });
    let (list_changed, mut changes) = mpsc::unbounded_channel();
    let host = Host { list_changed }.serve(client_end).await.unwrap();

    let info = host.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "toolloop-test-server");
    assert_eq!(info.capabilities.tools.as_ref().unwrap().list_changed, Some(true));

    // Listed as defined: names, descriptions, input schemas.
    let listed = host.list_all_tools().await.unwrap();
    let local: Arc<ToolSet> = server.tools();
    assert_eq!(listed.len(), local.len());
    for (tool, definition) in listed.iter().zip(local.definitions()) {
        assert_eq!(tool.name, definition.name);
        assert_eq!(tool.description.as_deref(), Some(&*definition.description));
        assert_eq!(Value::Object((*tool.input_schema).clone()), definition.input_schema);
    }

    // Every outcome carries exactly the text the loop would give a model.
    let cases = [
        ("add", json!({"a": 2, "b": 3}), false),
        ("echo", json!({"text": "hey"}), false),
        ("add", json!({"a": "two", "b": 3}), true),
        ("fail", json!({"message": "no route to host"}), true),
        ("boom", json!({}), true),
        ("sleepy", json!({}), true),
    ];
    for (name, arguments, is_error) in cases {
        let local_call = ToolCall::new("local", name, arguments.clone());
        let expected = local.execute(&local_call, &CancellationToken::new()).await.unwrap();
        let answer = host.call_tool(CallToolRequestParams::new(name).with_arguments(object(arguments))).await.unwrap();
        assert_eq!(text_of(&answer), expected.result.content, "{name}");
        assert_eq!(answer.is_error, Some(is_error), "{name}");
    }
    let echoed = host.call_tool(CallToolRequestParams::new("echo").with_arguments(object(json!({"text": "a"})))).await;
    assert_eq!(echoed.unwrap().structured_content, Some(json!({"echo": "a"})));

    // An unknown tool is a protocol error, as MCP says.
    let unknown = host.call_tool(CallToolRequestParams::new("nope")).await;
    match unknown {
        Err(ServiceError::McpError(error)) => {
            assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
            assert!(error.message.starts_with("unknown tool `nope`; the tools are: add, echo"), "{}", error.message);
        }
        other => panic!("expected a protocol error, got {other:?}"),
    }

    // A host that stops waiting cancels the tool.
    let hang = host.call_tool(CallToolRequestParams::new("hang"));
    tokio::select! {
        _ = hang => panic!("hang returned"),
        () = lab.started(1) => {}
    }
    timeout(PATIENCE, lab.cancelled(1)).await.expect("the tool was cancelled");

    // Changing the tools tells the host.
    let unlocked = host.call_tool(CallToolRequestParams::new("unlock")).await.unwrap();
    assert_eq!(text_of(&unlocked), "unlocked");
    timeout(PATIENCE, changes.recv()).await.expect("list_changed arrives").unwrap();
    assert!(host.list_all_tools().await.unwrap().iter().any(|tool| tool.name == "secret"));
    host.cancel().await.unwrap();
}

// ---------------------------------------------------------------------------
// toolloop's client, against a plain rmcp server.
// ---------------------------------------------------------------------------

/// A server toolloop did not build, returning every kind of content.
#[derive(Clone)]
struct Foreign {
    /// The longest `path` `files.read` accepts; changed by `rotate`.
    max_path: Arc<Mutex<u64>>,
    peer: Arc<Mutex<Option<Peer<RoleServer>>>>,
}

impl Foreign {
    fn new() -> Self {
        Self { max_path: Arc::new(Mutex::new(64)), peer: Arc::new(Mutex::new(None)) }
    }

    fn tools(&self) -> Vec<McpTool> {
        let max_path = *self.max_path.lock().unwrap();
        let read_schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "path": {"type": "string", "maxLength": max_path},
                "range": {"$ref": "#/$defs/Range"}
            },
            "required": ["path"],
            "additionalProperties": false,
            "$defs": {"Range": {"type": "object", "properties": {"start": {"type": "integer", "minimum": 0}}}}
        });
        let empty = json!({"type": "object"});
        let free = json!({"type": "object", "additionalProperties": true});
        vec![
            McpTool::new("files.read", "Read a file.", Arc::new(object(read_schema))),
            McpTool::new("picture", "Draw a picture.", Arc::new(object(empty.clone()))),
            McpTool::new("doc", "Fetch a document.", Arc::new(object(empty.clone()))),
            McpTool::new("weather", "Get the weather.", Arc::new(object(empty.clone()))),
            McpTool::new("broken", "Always fails.", Arc::new(object(empty.clone()))),
            McpTool::new("picky", "Rejects its arguments.", Arc::new(object(free))),
            McpTool::new("rotate", "Tighten files.read.", Arc::new(object(empty))),
        ]
    }
}

impl ServerHandler for Foreign {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_tool_list_changed().build())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        *self.peer.lock().unwrap() = Some(context.peer);
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let result = match &*request.name {
            "files.read" => CallToolResult::success(vec![ContentBlock::text(format!("read {arguments}"))]),
            "picture" => CallToolResult::success(vec![
                ContentBlock::text("a red square:"),
                ContentBlock::image("iVBORw0KGgoAAAANSUhEUg==", "image/png"),
            ]),
            "doc" => CallToolResult::success(vec![
                ContentBlock::embedded_text("memo://1", "Meet at noon."),
                ContentBlock::resource_link(Resource::new("memo://2", "agenda")),
            ]),
            "weather" => CallToolResult::structured(json!({"celsius": 21, "sky": "clear"})),
            "broken" => CallToolResult::error(vec![ContentBlock::text("the sensor is offline")]),
            "picky" => return Err(ErrorData::invalid_params("`mode` must be `fast` or `slow`", None)),
            "rotate" => {
                *self.max_path.lock().unwrap() = 3;
                let peer = self.peer.lock().unwrap().clone().expect("initialized");
                peer.notify_tool_list_changed().await.unwrap();
                CallToolResult::success(vec![ContentBlock::text("rotated")])
            }
            other => return Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        };
        Ok(result.into())
    }
}

fn foreign_transport(server: &Foreign) -> McpTransport {
    let server = server.clone();
    McpTransport::from_stream_fn("foreign", move || {
        let server = server.clone();
        async move {
            let (client_end, server_end) = tokio::io::duplex(64 * 1024);
            tokio::spawn(async move {
                if let Ok(running) = server.serve(server_end).await {
                    let _ = running.waiting().await;
                }
            });
            Ok(client_end)
        }
    })
}

async fn run(tools: &ToolSet, name: &str, input: Value) -> toolloop::tool::ToolExecution {
    let call = ToolCall::new("c", name, input);
    timeout(PATIENCE, tools.execute(&call, &CancellationToken::new())).await.unwrap().unwrap()
}

#[tokio::test]
async fn a_foreign_servers_content_and_errors_become_what_the_model_reads() {
    let client = McpClient::connect(foreign_transport(&Foreign::new())).await.unwrap();
    let tools = client.tool_set(&ToolSelection::all()).unwrap();
    assert_eq!(
        tools.names().collect::<Vec<_>>(),
        ["files_read", "picture", "doc", "weather", "broken", "picky", "rotate"]
    );

    // The server's name is used on the wire; the model sees a valid one.
    let read = run(&tools, "files_read", json!({"path": "/etc/hosts"})).await;
    assert_eq!(read.result.content, r#"read {"path":"/etc/hosts"}"#);

    let picture = run(&tools, "picture", json!({})).await;
    assert_eq!(picture.result.content, "a red square:\n[image: image/png, 16 bytes]");
    let doc = run(&tools, "doc", json!({})).await;
    assert_eq!(doc.result.content, "[resource memo://1]\nMeet at noon.\n[resource link memo://2: agenda]");
    let weather = run(&tools, "weather", json!({})).await;
    assert_eq!(weather.output.unwrap().value(), &json!({"celsius": 21, "sky": "clear"}));

    let broken = run(&tools, "broken", json!({})).await;
    assert_eq!(broken.result.failure, Some(FailureKind::ToolFailed));
    assert_eq!(broken.result.content, "the sensor is offline");
    let picky = run(&tools, "picky", json!({"mode": "medium"})).await;
    assert_eq!(picky.result.failure, Some(FailureKind::InvalidArguments));
    assert_eq!(
        picky.result.content,
        "invalid arguments: MCP server `foreign` rejected them: `mode` must be `fast` or `slow`"
    );

    // The server's schema is enforced before the call, `$ref`s included.
    let unknown_field = run(&tools, "files_read", json!({"path": "a", "mode": "r"})).await;
    assert_eq!(unknown_field.result.content, "invalid arguments at `mode`: unknown field; the fields are: path, range");
    let negative = run(&tools, "files_read", json!({"path": "a", "range": {"start": -1}})).await;
    assert_eq!(negative.result.content, "invalid arguments at `range.start`: -1 is less than the minimum 0");

    // Strict schemas come from the server's schema as for derived tools.
    let definition = tools.get("files_read").unwrap().definition();
    assert!(definition.input_schema.get("$schema").is_none());
    let strict = definition.strict_input_schema.as_ref().expect("expressible in strict mode");
    assert_eq!(strict["required"], json!(["path", "range"]));
    assert_eq!(strict["properties"]["range"]["anyOf"][1], json!({"type": "null"}));
    // A free-form object cannot be strict.
    assert!(tools.get("picky").unwrap().definition().strict_input_schema.is_none());
    client.close().await;
}

#[tokio::test]
async fn a_changed_schema_is_enforced_on_tools_built_before_the_change() {
    let client = McpClient::connect(foreign_transport(&Foreign::new())).await.unwrap();
    let tools = client.tool_set(&ToolSelection::all()).unwrap();
    assert!(!run(&tools, "files_read", json!({"path": "/tmp/long"})).await.result.is_error());

    let mut changes = client.watch_tools();
    assert_eq!(run(&tools, "rotate", json!({})).await.result.content, "rotated");
    timeout(PATIENCE, changes.changed()).await.unwrap().unwrap();
    let rejected = run(&tools, "files_read", json!({"path": "/tmp/long"})).await;
    assert_eq!(rejected.result.content, "invalid arguments at `path`: has 9 characters, at most 3 allowed");
    client.close().await;
}

// ---------------------------------------------------------------------------
// An agent with MCP tools.
// ---------------------------------------------------------------------------

/// Say hello.
#[derive(toolloop::Tool)]
struct Greet {
    /// Whom to greet.
    name: String,
}

impl Greet {
    #[allow(clippy::unused_async)]
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok(format!("hello {}", self.name))
    }
}

#[tokio::test]
async fn an_agent_runs_mcp_tools_through_governance_and_hooks_beside_derived_tools() {
    let (server, _lab) = tools::server(false);
    let client = McpClient::connect(in_process(&server)).await.unwrap();

    let model = ScriptedModel::from_responses([
        ModelResponse::from_tool_calls([
            ToolCall::new("1", "greet", json!({"name": "Ada"})),
            ToolCall::new("2", "lab_add", json!({"a": 40, "b": 2})),
            ToolCall::new("3", "lab_fail", json!({"message": "out of paper"})),
            ToolCall::new("4", "lab_boom", json!({})),
        ]),
        ModelResponse::from_text("done"),
    ]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut builder = Agent::builder()
        .model(model.clone())
        .tool::<Greet>()
        .governance(Governance::new().policy(|call| match call.name.as_str() {
            "lab_boom" => Decision::Deny("no explosions".to_owned()),
            _ => Decision::Allow,
        }))
        .on_tool_execution_finished({
            let seen = Arc::clone(&seen);
            move |call, result| seen.lock().unwrap().push((call.name.clone(), result.failure, result.content.clone()))
        });
    for tool in client.tools(&ToolSelection::all().prefix("lab_").only(["add", "fail", "boom"])).unwrap() {
        builder = builder.tool_dyn(tool);
    }
    let agent = builder.build().unwrap();

    let mut conversation = Conversation::new();
    conversation.push_user("Greet Ada, add 40 and 2, print, and blow something up.");
    let done = agent.run(&mut conversation).await.unwrap();
    assert_eq!(done.output, "done");

    assert_eq!(model.requests()[0].tool_names(), ["greet", "lab_add", "lab_fail", "lab_boom"]);
    let mut seen = seen.lock().unwrap().clone();
    let (denied, kind, reason) = seen.pop().unwrap();
    assert_eq!((denied.as_str(), kind), ("lab_boom", Some(FailureKind::Denied)));
    assert!(reason.contains("no explosions"), "{reason}");
    assert_eq!(
        seen,
        [
            ("greet".to_owned(), None, "hello Ada".to_owned()),
            ("lab_add".to_owned(), None, "42".to_owned()),
            ("lab_fail".to_owned(), Some(FailureKind::ToolFailed), "out of paper".to_owned()),
        ]
    );
    client.close().await;
}

#[tokio::test]
async fn cancelling_a_run_cancels_the_mcp_call_on_the_server() {
    let (server, lab) = tools::server(false);
    let client = McpClient::connect(in_process(&server)).await.unwrap();
    let model =
        ScriptedModel::from_responses([ModelResponse::from_tool_calls([ToolCall::new("1", "hang", json!({}))])]);
    let mut builder = Agent::builder().model(model);
    for tool in client.tools(&ToolSelection::all().only(["hang"])).unwrap() {
        builder = builder.tool_dyn(tool);
    }
    let agent = builder.build().unwrap();

    let cancel = CancellationToken::new();
    let mut conversation = Conversation::new();
    conversation.push_user("Wait.");
    let run = agent.run_with_cancel(&mut conversation, &cancel);
    let cancel_once_started = async {
        lab.started(1).await;
        cancel.cancel();
    };
    let (outcome, ()) = timeout(PATIENCE, async { tokio::join!(run, cancel_once_started) }).await.unwrap();
    let error = outcome.unwrap_err();
    assert!(matches!(error.termination(), toolloop::run::Termination::Cancelled { .. }), "{error}");
    timeout(PATIENCE, lab.cancelled(1)).await.expect("the server saw the cancellation");
    // The conversation stays valid: the call has a (synthetic) result.
    let last = conversation.messages().last().unwrap();
    assert_eq!(last.tool_results().next().unwrap().failure, Some(FailureKind::NotExecuted));
    client.close().await;
}
