//! A connection to one MCP server, and its tools as toolloop tools.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock, Weak};
use std::time::Duration;

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, JsonObject, Tool as McpToolInfo};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, Peer, RoleClient, ServiceError};
use tokio::sync::{Mutex, watch};

use super::remote_tool::RemoteTool;
use super::{McpError, McpTransport, ToolSelection};
use crate::tool::{DynTool, ToolSet};

/// How long connecting and listing tools may take by default.
pub const DEFAULT_MCP_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

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
/// Cloning is cheap: clones share the connection.
///
/// ```no_run
/// use toolloop::ToolSet;
/// use toolloop::mcp::{ChildProcess, McpClient, ToolSelection};
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let time = McpClient::connect(ChildProcess::new("uvx").arg("mcp-server-time")).await?;
/// let mut tools = ToolSet::new();
/// time.add_tools(&mut tools, &ToolSelection::all().prefix("time_"))?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct McpClient {
    shared: Arc<Shared>,
}

pub(crate) struct Shared {
    transport: McpTransport,
    request_timeout: Duration,
    auto_reconnect: bool,
    connection: RwLock<Option<Arc<Connection>>>,
    /// Held while connecting, so that concurrent reconnects start one server.
    connecting: Mutex<()>,
    /// Held while listing, so that overlapping refreshes apply in order.
    listing: Mutex<()>,
    tools: watch::Sender<Arc<[McpToolInfo]>>,
}

pub(crate) struct Connection {
    pub(crate) peer: Peer<RoleClient>,
    service: Mutex<Option<RunningService<RoleClient, Handler>>>,
    /// Set when a request found the connection closed: rmcp answers the
    /// requests in flight a moment before it marks its channel closed.
    lost: AtomicBool,
}

impl fmt::Debug for McpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tools = self.shared.tools.borrow();
        let names: Vec<&str> = tools.iter().map(|tool| &*tool.name).collect();
        f.debug_struct("McpClient")
            .field("server", &self.shared.transport.name())
            .field("connected", &self.is_connected())
            .field("tools", &names)
            .finish_non_exhaustive()
    }
}

/// Options for [`McpClient`]; start with [`McpClient::builder`].
#[derive(Debug)]
pub struct McpClientBuilder {
    transport: McpTransport,
    request_timeout: Duration,
    auto_reconnect: bool,
}

impl McpClientBuilder {
    /// How long the handshake and `tools/list` may take (30 s by default).
    /// Tool calls have their own timeout (see [`ToolSelection::timeout`]).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Reconnects once, before a tool call, when the connection is found
    /// closed (the server exited): the call that was in flight when it
    /// died still fails, later ones start the server again.
    pub fn auto_reconnect(mut self) -> Self {
        self.auto_reconnect = true;
        self
    }

    /// Connects and lists the server's tools.
    pub async fn connect(self) -> Result<McpClient, McpError> {
        let (tools, _) = watch::channel(Arc::from(Vec::new()));
        let shared = Arc::new(Shared {
            transport: self.transport,
            request_timeout: self.request_timeout,
            auto_reconnect: self.auto_reconnect,
            connection: RwLock::new(None),
            connecting: Mutex::new(()),
            listing: Mutex::new(()),
            tools,
        });
        shared.reconnect().await?;
        Ok(McpClient { shared })
    }
}

impl McpClient {
    /// Connects to the server with the default options and lists its tools.
    pub async fn connect(transport: impl Into<McpTransport>) -> Result<Self, McpError> {
        Self::builder(transport).connect().await
    }

    /// Options for a connection.
    pub fn builder(transport: impl Into<McpTransport>) -> McpClientBuilder {
        McpClientBuilder {
            transport: transport.into(),
            request_timeout: DEFAULT_MCP_REQUEST_TIMEOUT,
            auto_reconnect: false,
        }
    }

    /// The server's label (from its transport), as errors name it.
    pub fn name(&self) -> &str {
        self.shared.transport.name()
    }

    /// The name and version the server announced, once connected.
    pub fn server_info(&self) -> Option<Implementation> {
        let connection = self.shared.current()?;
        connection.peer.peer_info().and_then(|info| info.server_info.clone())
    }

    /// Whether the connection is open.
    pub fn is_connected(&self) -> bool {
        self.shared.current().is_some_and(|c| c.is_open())
    }

    /// The server's tools as last listed, with their MCP metadata.
    pub fn remote_tools(&self) -> Arc<[McpToolInfo]> {
        self.shared.tools.borrow().clone()
    }

    /// A receiver that sees every new tool list: after the server sent
    /// `tools/list_changed` and the client listed again, or after a
    /// reconnect. Rebuild an agent's tools from [`tools`](Self::tools) when
    /// it changes.
    pub fn watch_tools(&self) -> watch::Receiver<Arc<[McpToolInfo]>> {
        self.shared.tools.subscribe()
    }

    /// Lists the server's tools again.
    pub async fn refresh_tools(&self) -> Result<(), McpError> {
        let connection = self.shared.current().ok_or_else(|| self.shared.disconnected())?;
        self.shared.refresh(&connection.peer).await
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
            tools.push(Arc::new(RemoteTool::new(Arc::clone(&self.shared), info, local, selection.tool_timeout())));
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
        self.shared.reconnect().await
    }

    /// Closes the connection (stopping a child process). Calls fail with an
    /// error result until [`reconnect`](Self::reconnect).
    pub async fn close(&self) {
        let connection = self.shared.connection.write().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        if let Some(connection) = connection {
            connection.close().await;
        }
    }
}

impl Shared {
    pub(crate) fn name(&self) -> &str {
        self.transport.name()
    }

    fn current(&self) -> Option<Arc<Connection>> {
        self.connection.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    pub(crate) fn disconnected(&self) -> McpError {
        McpError::Disconnected { server: self.name().to_owned() }
    }

    /// The input schema of the server's tool `name` as last listed; `None`
    /// when the server no longer offers it.
    pub(crate) fn listed_schema(&self, name: &str) -> Option<Arc<JsonObject>> {
        self.tools.borrow().iter().find(|tool| tool.name == name).map(|tool| Arc::clone(&tool.input_schema))
    }

    /// The open connection for a tool call, reconnecting first if the
    /// connection closed and the client was built with `auto_reconnect`.
    pub(crate) async fn connection_for_call(self: &Arc<Self>) -> Result<Arc<Connection>, McpError> {
        match self.current() {
            Some(connection) if connection.is_open() => Ok(connection),
            Some(_) if self.auto_reconnect => {
                self.reconnect_if_lost().await?;
                self.current().ok_or_else(|| self.disconnected())
            }
            _ => Err(self.disconnected()),
        }
    }

    /// Reconnects unless another call already did.
    async fn reconnect_if_lost(self: &Arc<Self>) -> Result<(), McpError> {
        let lost = self.current().is_none_or(|connection| !connection.is_open());
        if lost { self.reconnect().await } else { Ok(()) }
    }

    async fn reconnect(self: &Arc<Self>) -> Result<(), McpError> {
        let _connecting = self.connecting.lock().await;
        let old = self.connection.write().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        if let Some(old) = old {
            old.close().await;
        }
        let handler = Handler { shared: Arc::downgrade(self) };
        let service = tokio::time::timeout(self.request_timeout, self.transport.connect(handler))
            .await
            .map_err(|_| McpError::Timeout {
                server: self.name().to_owned(),
                operation: "initialize",
                after: self.request_timeout,
            })??;
        let peer = service.peer().clone();
        let connection =
            Arc::new(Connection { peer: peer.clone(), service: Mutex::new(Some(service)), lost: AtomicBool::new(false) });
        *self.connection.write().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(connection);
        self.refresh(&peer).await
    }

    async fn refresh(&self, peer: &Peer<RoleClient>) -> Result<(), McpError> {
        let _listing = self.listing.lock().await;
        let listed = tokio::time::timeout(self.request_timeout, peer.list_all_tools())
            .await
            .map_err(|_| McpError::Timeout {
                server: self.name().to_owned(),
                operation: "tools/list",
                after: self.request_timeout,
            })?
            .map_err(|error| match error {
                ServiceError::TransportClosed | ServiceError::TransportSend(_) => self.disconnected(),
                other => McpError::Request {
                    server: self.name().to_owned(),
                    operation: "tools/list",
                    message: other.to_string(),
                },
            })?;
        tracing::debug!(server = self.name(), tools = listed.len(), "listed MCP tools");
        self.tools.send_replace(Arc::from(listed));
        Ok(())
    }
}

impl Connection {
    fn is_open(&self) -> bool {
        !self.lost.load(Ordering::Relaxed) && !self.peer.is_transport_closed()
    }

    /// Records that a request found the connection closed.
    pub(crate) fn mark_lost(&self) {
        self.lost.store(true, Ordering::Relaxed);
    }

    async fn close(&self) {
        let service = self.service.lock().await.take();
        if let Some(mut service) = service {
            // Bounded: a server that ignores the close is killed when dropped.
            let _ = service.close_with_timeout(Duration::from_secs(5)).await;
        }
    }
}

/// Receives the server's notifications for one connection.
struct Handler {
    /// Weak: the connection lives inside `Shared`, which must not be kept
    /// alive by its own connection.
    shared: Weak<Shared>,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("toolloop", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        let Some(shared) = self.shared.upgrade() else { return };
        // Listing is a request on this very connection: run it beside the
        // notification handler rather than inside it.
        tokio::spawn(async move {
            if let Err(error) = shared.refresh(&context.peer).await {
                tracing::warn!(server = shared.name(), %error, "could not list the MCP server's tools after a change");
            }
        });
    }
}
