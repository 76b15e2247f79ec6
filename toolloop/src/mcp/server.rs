//! A [`ToolSet`] served as an MCP server.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorCode, ErrorData, Implementation, JsonObject, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool as McpToolInfo,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{Peer, RoleServer, ServerHandler, ServiceExt as _};
use serde_json::Value;

use super::{McpError, McpStream, content};
use crate::message::ToolCall;
use crate::tool::{ToolDefinition, ToolSet};

/// A [`ToolSet`] served over MCP, so that an MCP host (Claude Desktop, an
/// IDE, another agent) can call toolloop tools.
///
/// Calls run through [`ToolSet::execute`], so argument errors, tool errors,
/// panics and timeouts come back as `isError` results with exactly the text
/// the loop would show a model; a client's `notifications/cancelled` cancels
/// the running tool. A call to a tool the set does not have is a protocol
/// error (`-32602`), as MCP specifies.
///
/// Serve it over stdio ([`serve_stdio`](Self::serve_stdio)), Streamable
/// HTTP ([`serve_http`](Self::serve_http)), or any byte stream
/// ([`serve_stream`](Self::serve_stream)). It is also an
/// [`rmcp::ServerHandler`], for rmcp's other transports. Clones share the
/// tools: [`set_tools`](Self::set_tools) on one changes them for every
/// connection and tells the clients (`notifications/tools/list_changed`).
///
/// ```no_run
/// use toolloop::ToolSet;
/// use toolloop::mcp::McpServer;
///
/// # async fn demo(tools: ToolSet) -> Result<(), toolloop::mcp::McpError> {
/// // In a binary that an MCP host starts: serve until the host hangs up.
/// McpServer::new(tools).name("my-tools", "1.0.0").serve_stdio().await
/// # }
/// ```
#[derive(Clone)]
pub struct McpServer {
    info: Implementation,
    instructions: Option<String>,
    shared: Arc<Shared>,
}

struct Shared {
    tools: RwLock<Arc<ToolSet>>,
    /// The clients to tell about tool list changes.
    peers: Mutex<Vec<Peer<RoleServer>>>,
}

impl fmt::Debug for McpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServer").field("name", &self.info.name).field("tools", &self.tools()).finish_non_exhaustive()
    }
}

impl McpServer {
    /// Serves `tools`, as server `toolloop`.
    pub fn new(tools: ToolSet) -> Self {
        Self {
            info: Implementation::new("toolloop", env!("CARGO_PKG_VERSION")),
            instructions: None,
            shared: Arc::new(Shared { tools: RwLock::new(Arc::new(tools)), peers: Mutex::new(Vec::new()) }),
        }
    }

    /// The name and version the server announces.
    pub fn name(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.info = Implementation::new(name, version);
        self
    }

    /// Tells clients how to use the tools (MCP's `instructions`).
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// The tools being served.
    pub fn tools(&self) -> Arc<ToolSet> {
        Arc::clone(&self.shared.tools.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Replaces the tools and sends `notifications/tools/list_changed` to
    /// every connected client. Calls already running finish on the old set.
    pub async fn set_tools(&self, tools: ToolSet) {
        *self.shared.tools.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(tools);
        let peers: Vec<Peer<RoleServer>> = {
            let mut peers = self.shared.peers.lock().unwrap_or_else(PoisonError::into_inner);
            peers.retain(|peer| !peer.is_transport_closed());
            peers.clone()
        };
        for peer in peers {
            if let Err(error) = peer.notify_tool_list_changed().await {
                tracing::debug!(%error, "could not tell an MCP client that the tools changed");
            }
        }
    }

    /// Serves one client over this process's stdin and stdout until it
    /// disconnects. Nothing else may write to stdout meanwhile (log to
    /// stderr).
    pub async fn serve_stdio(&self) -> Result<(), McpError> {
        self.serve_transport(rmcp::transport::stdio()).await
    }

    /// Serves one client over `stream` until it disconnects.
    pub async fn serve_stream(&self, stream: impl McpStream) -> Result<(), McpError> {
        self.serve_transport(stream).await
    }

    async fn serve_transport<T, E, A>(&self, transport: T) -> Result<(), McpError>
    where
        T: rmcp::transport::IntoTransport<RoleServer, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let running = self
            .clone()
            .serve(transport)
            .await
            .map_err(|error| McpError::Serve(format!("handshake failed: {error}")))?;
        running.waiting().await.map_err(|error| McpError::Serve(error.to_string()))?;
        Ok(())
    }

    fn register(&self, peer: Peer<RoleServer>) {
        let mut peers = self.shared.peers.lock().unwrap_or_else(PoisonError::into_inner);
        peers.retain(|peer| !peer.is_transport_closed());
        peers.push(peer);
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder().enable_tools().enable_tool_list_changed().build();
        let mut config = ServerConfig::new(capabilities);
        config.server_info = self.info.clone();
        config.instructions.clone_from(&self.instructions);
        config
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.register(context.peer);
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self.tools();
        Ok(ListToolsResult::with_all_items(tools.definitions().iter().map(mcp_tool).collect()))
    }

    fn get_tool(&self, name: &str) -> Option<McpToolInfo> {
        self.tools().get(name).map(|tool| mcp_tool(tool.definition()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let tools = self.tools();
        if tools.get(&request.name).is_none() {
            let names: Vec<&str> = tools.names().collect();
            let message = format!("unknown tool `{}`; the tools are: {}", request.name, names.join(", "));
            return Err(ErrorData::invalid_params(message, None));
        }
        let input = request.arguments.map_or_else(|| Value::Object(serde_json::Map::new()), Value::Object);
        let call = ToolCall::new(context.id.to_string(), request.name.to_string(), input);
        match tools.execute(&call, &context.ct).await {
            Ok(execution) => Ok(content::call_tool_result(&execution.result, execution.output.as_ref()).into()),
            // The client gave up; it ignores whatever is answered now.
            Err(_cancelled) => Err(ErrorData::new(ErrorCode::INTERNAL_ERROR, "the call was cancelled", None)),
        }
    }
}

/// A tool definition as MCP lists it.
fn mcp_tool(definition: &ToolDefinition) -> McpToolInfo {
    let schema = match &definition.input_schema {
        Value::Object(schema) => schema.clone(),
        // Definitions describe objects; anything else is sent as "any object".
        _ => JsonObject::from_iter([("type".to_owned(), Value::from("object"))]),
    };
    McpToolInfo::new(definition.name.clone(), definition.description.clone(), Arc::new(schema))
}
