//! A client of one MCP server, and its tools as toolloop tools.

use std::fmt;
use std::sync::Arc;

use rmcp::model::{Implementation, Tool as McpToolInfo};
use tokio::sync::watch;

use super::connection::ServerLink;
use super::remote_tool::RemoteTool;
use super::{McpError, McpTransport, ToolSelection};
use crate::tool::{DynTool, ToolSet};

/// A client of one MCP server: its tools become toolloop tools.
///
/// Each MCP tool becomes a [`DynTool`], so it runs through the same path as
/// a derived tool: arguments checked against the server's input schema
/// (with field paths in the error), the tool set's timeout, governance,
/// hooks and cancellation (a cancelled or timed-out call is cancelled on
/// the server with `notifications/cancelled`). `isError` results become
/// error results; text, structured, image and resource content become the
/// text the model reads.
///
/// The client follows the server's `notifications/tools/list_changed`: a
/// call to a tool the server removed fails with an error result that says
/// so, a changed schema is checked at the next call, and
/// [`tools`](Self::tools) / [`tool_set`](Self::tool_set) build tools from
/// the current list (see [`watch_tools`](Self::watch_tools) to know when).
/// A server that exits makes its calls fail with error results, never a
/// hang; [`reconnect`](Self::reconnect) starts it again, and existing tool
/// sets use the new connection.
///
/// Cloning is cheap: clones share the connection. It stays open while a
/// clone or a tool built from it lives, and closes when the last is
/// dropped (inside the Tokio runtime: a child process is stopped by a
/// task) or at [`close`](Self::close).
///
/// ```no_run
/// use toolloop::ToolSet;
/// use toolloop::mcp::{McpClient, McpTransport, ToolSelection};
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let time = McpClient::connect(McpTransport::child_process("uvx").arg("mcp-server-time")).await?;
/// let mut tools = ToolSet::new();
/// time.add_tools(&mut tools, &ToolSelection::all().prefix("time_"))?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct McpClient {
    link: Arc<ServerLink>,
}

impl fmt::Debug for McpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tools = self.link.tools().borrow();
        let names: Vec<&str> = tools.iter().map(|tool| &*tool.name).collect();
        f.debug_struct("McpClient")
            .field("server", &self.link.name())
            .field("connected", &self.is_connected())
            .field("tools", &names)
            .finish_non_exhaustive()
    }
}

impl McpClient {
    /// Connects to the server and lists its tools, within the transport's
    /// [`request_timeout`](McpTransport::request_timeout).
    pub async fn connect(transport: McpTransport) -> Result<Self, McpError> {
        let link = ServerLink::connect(transport).await?;
        Ok(McpClient { link })
    }

    /// The server's label (from its transport), as errors name it.
    pub fn name(&self) -> &str {
        self.link.name()
    }

    /// The name and version the server announced, once connected.
    pub fn server_info(&self) -> Option<Implementation> {
        self.link.server_info()
    }

    /// Whether the connection is open.
    pub fn is_connected(&self) -> bool {
        self.link.is_connected()
    }

    /// The server's tools as last listed, with their MCP metadata.
    pub fn remote_tools(&self) -> Arc<[McpToolInfo]> {
        self.link.tools().borrow().clone()
    }

    /// A receiver that sees every new tool list: after the server sent
    /// `tools/list_changed` and the client listed again, or after a
    /// reconnect. Rebuild an agent's tools from [`tools`](Self::tools) when
    /// it changes.
    pub fn watch_tools(&self) -> watch::Receiver<Arc<[McpToolInfo]>> {
        self.link.tools().subscribe()
    }

    /// Lists the server's tools again.
    pub async fn refresh_tools(&self) -> Result<(), McpError> {
        self.link.refresh_current().await
    }

    /// The selected tools, as tools to add to a [`ToolSet`] or an agent
    /// (`AgentBuilder::tool_dyn`).
    pub fn tools(&self, selection: &ToolSelection) -> Result<Vec<Arc<dyn DynTool>>, McpError> {
        let listed = self.remote_tools();
        let mut tools: Vec<Arc<dyn DynTool>> = Vec::new();
        for info in listed.iter().filter(|info| selection.includes(&info.name)) {
            let local = selection.local_name(&info.name).map_err(|reason| McpError::ToolName {
                server: self.name().to_owned(),
                name: info.name.to_string(),
                reason,
            })?;
            tools.push(Arc::new(RemoteTool::new(Arc::clone(&self.link), info, local, selection.tool_timeout())));
        }
        Ok(tools)
    }

    /// Adds the selected tools to `set`; returns how many. Nothing is
    /// added when a name is taken (by a tool already in the set or by two
    /// tools of the server that map to one name).
    pub fn add_tools(&self, set: &mut ToolSet, selection: &ToolSelection) -> Result<usize, McpError> {
        let tools = self.tools(selection)?;
        let mut staged = set.clone();
        for tool in &tools {
            staged.add_dyn(Arc::clone(tool))?;
        }
        *set = staged;
        Ok(tools.len())
    }

    /// The selected tools as a new [`ToolSet`].
    pub fn tool_set(&self, selection: &ToolSelection) -> Result<ToolSet, McpError> {
        let mut set = ToolSet::new();
        self.add_tools(&mut set, selection)?;
        Ok(set)
    }

    /// Closes the connection (if any) and connects again, starting a child
    /// process anew; lists the tools again. Tools built before keep working
    /// and use the new connection.
    pub async fn reconnect(&self) -> Result<(), McpError> {
        self.link.reconnect().await
    }

    /// Closes the connection (stopping a child process). Calls fail with an
    /// error result until [`reconnect`](Self::reconnect).
    pub async fn close(&self) {
        self.link.close().await;
    }
}
