//! The link to one MCP server: how to reach it, the open connection, and
//! the tool list as last listed (kept current on `tools/list_changed`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError, RwLock, Weak};
use std::time::Duration;

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, JsonObject, Tool as McpToolInfo};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, Peer, RoleClient, ServiceError};
use tokio::sync::{Mutex, watch};

use super::{McpError, McpTransport};

/// Shared by a client, its clones and every tool built from it.
pub(crate) struct ServerLink {
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

/// One open connection; replaced as a whole on reconnect.
pub(crate) struct Connection {
    pub(crate) peer: Peer<RoleClient>,
    service: Mutex<Option<RunningService<RoleClient, Handler>>>,
    /// Set when a request found the connection closed: rmcp answers the
    /// requests in flight a moment before it marks its channel closed.
    lost: AtomicBool,
}

impl ServerLink {
    /// Connects and lists the server's tools.
    pub(crate) async fn connect(transport: McpTransport) -> Result<Arc<Self>, McpError> {
        let link = Arc::new(Self {
            request_timeout: transport.request_timeout,
            auto_reconnect: transport.auto_reconnect,
            transport,
            connection: RwLock::new(None),
            connecting: Mutex::new(()),
            listing: Mutex::new(()),
            tools: watch::Sender::new(Arc::from(Vec::new())),
        });
        link.reconnect().await?;
        Ok(link)
    }

    pub(crate) fn name(&self) -> &str {
        self.transport.name()
    }

    /// The name and version the server announced.
    pub(crate) fn server_info(&self) -> Option<Implementation> {
        let connection = self.current()?;
        connection.peer.peer_info().and_then(|info| info.server_info.clone())
    }

    pub(crate) fn is_connected(&self) -> bool {
        self.current().is_some_and(|c| c.is_open())
    }

    pub(crate) fn tools(&self) -> &watch::Sender<Arc<[McpToolInfo]>> {
        &self.tools
    }

    pub(crate) async fn refresh_current(&self) -> Result<(), McpError> {
        let connection = self.current().ok_or_else(|| self.disconnected())?;
        self.refresh(&connection.peer).await
    }

    /// Closes the connection, if one is open.
    pub(crate) async fn close(&self) {
        let connection = self.connection.write().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(connection) = connection {
            connection.close().await;
        }
    }

    fn current(&self) -> Option<Arc<Connection>> {
        self.connection.read().unwrap_or_else(PoisonError::into_inner).clone()
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
    /// connection closed and the transport says `auto_reconnect`.
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
        let _connecting = self.connecting.lock().await;
        if self.current().is_some_and(|connection| connection.is_open()) {
            return Ok(());
        }
        self.connect_locked().await
    }

    pub(crate) async fn reconnect(self: &Arc<Self>) -> Result<(), McpError> {
        let _connecting = self.connecting.lock().await;
        self.connect_locked().await
    }

    /// Replaces the connection; the caller holds `connecting`.
    async fn connect_locked(self: &Arc<Self>) -> Result<(), McpError> {
        let old = self.connection.write().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(old) = old {
            old.close().await;
        }
        let handler = Handler { link: Arc::downgrade(self) };
        let service =
            tokio::time::timeout(self.request_timeout, self.transport.connect(handler)).await.map_err(|_| {
                McpError::Timeout {
                    server: self.name().to_owned(),
                    operation: "initialize",
                    after: self.request_timeout,
                }
            })??;
        let peer = service.peer().clone();
        let connection = Arc::new(Connection {
            peer: peer.clone(),
            service: Mutex::new(Some(service)),
            lost: AtomicBool::new(false),
        });
        *self.connection.write().unwrap_or_else(PoisonError::into_inner) = Some(connection);
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
    /// Weak: the connection lives inside the link, which must not be kept
    /// alive by its own connection.
    link: Weak<ServerLink>,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(ClientCapabilities::default(), Implementation::new("toolloop", env!("CARGO_PKG_VERSION")))
    }

    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        let Some(link) = self.link.upgrade() else { return };
        // Listing is a request on this very connection: run it beside the
        // notification handler rather than inside it.
        tokio::spawn(async move {
            if let Err(error) = link.refresh(&context.peer).await {
                tracing::warn!(server = link.name(), %error, "could not list the MCP server's tools after a change");
            }
        });
    }
}
