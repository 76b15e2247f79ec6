//! Serving an [`McpServer`] over Streamable HTTP: rmcp's tower service on
//! a plain hyper HTTP/1.1 accept loop (no web framework needed).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::TokioIo;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::{McpError, McpServer};

impl McpServer {
    /// Serves the tools over Streamable HTTP on `listener` (every path)
    /// until `shutdown` is cancelled.
    ///
    /// rmcp's defaults apply: sessions, and only loopback `Host` headers
    /// accepted (against DNS rebinding). Behind a real host name, use
    /// [`http_service`](Self::http_service) with your own configuration.
    pub async fn serve_http(&self, listener: TcpListener, shutdown: CancellationToken) -> Result<(), McpError> {
        let config = StreamableHttpServerConfig::default().with_cancellation_token(shutdown.child_token());
        let service = self.http_service(config);
        loop {
            let accepted = tokio::select! {
                () = shutdown.cancelled() => return Ok(()),
                accepted = listener.accept() => accepted,
            };
            let stream = match accepted {
                Ok((stream, _peer)) => stream,
                Err(error) => {
                    // Running out of file descriptors and the like pass;
                    // do not spin on them.
                    tracing::warn!(%error, "MCP HTTP server could not accept a connection");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            let service = service.clone();
            let shutdown = shutdown.clone();
            tokio::spawn(async move {
                let handler = hyper::service::service_fn(move |request| {
                    let service = service.clone();
                    async move { Ok::<_, Infallible>(service.handle(request).await) }
                });
                let connection =
                    hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), handler);
                tokio::pin!(connection);
                tokio::select! {
                    _ = connection.as_mut() => {}
                    () = shutdown.cancelled() => {
                        connection.as_mut().graceful_shutdown();
                        let _ = connection.await;
                    }
                }
            });
        }
    }

    /// The Streamable HTTP endpoint as a tower service, to mount in your
    /// own HTTP server (axum's `Router::nest_service("/mcp", ...)`).
    pub fn http_service(
        &self,
        config: StreamableHttpServerConfig,
    ) -> StreamableHttpService<McpServer, LocalSessionManager> {
        let server = self.clone();
        StreamableHttpService::new(move || Ok(server.clone()), Arc::new(LocalSessionManager::default()), config)
    }
}
