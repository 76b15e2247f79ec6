//! Why connecting to, listing or serving an MCP server failed.

use std::time::Duration;

use crate::build_error::BuildError;

/// An MCP connection, tool listing or server that cannot go on.
///
/// Failures of single tool *calls* are not errors of this type: they become
/// error results the model reads, like any tool's. `Display` names the
/// server by the label it was given (a program name or a URL without its
/// query), never by a token or header.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The server's process could not be started.
    #[error("could not start MCP server `{server}`: {source}")]
    Spawn {
        /// The server's label.
        server: String,
        /// Why the process did not start.
        #[source]
        source: std::io::Error,
    },
    /// The MCP handshake failed (the server exited, spoke something else,
    /// refused the protocol version, or the HTTP endpoint failed).
    #[error("could not connect to MCP server `{server}`: {message}")]
    Connect {
        /// The server's label.
        server: String,
        /// What went wrong.
        message: String,
    },
    /// The server did not answer in time.
    #[error("MCP server `{server}` did not answer `{operation}` within {after:?}")]
    Timeout {
        /// The server's label.
        server: String,
        /// The request that timed out (`initialize`, `tools/list`).
        operation: &'static str,
        /// How long the client waited.
        after: Duration,
    },
    /// The connection is closed: the server exited or the client was closed.
    /// [`McpClient::reconnect`](super::McpClient::reconnect) opens a new one.
    #[error("MCP server `{server}` is disconnected")]
    Disconnected {
        /// The server's label.
        server: String,
    },
    /// The server answered a request with an error.
    #[error("MCP server `{server}` failed `{operation}`: {message}")]
    Request {
        /// The server's label.
        server: String,
        /// The request (`tools/list`).
        operation: &'static str,
        /// The server's error message.
        message: String,
    },
    /// A tool's name cannot be given to a model, even after replacing the
    /// characters providers reject: filter the tool out or give a shorter
    /// prefix.
    #[error("MCP server `{server}` offers a tool named `{name}`, which cannot be used as a tool name: {reason}")]
    ToolName {
        /// The server's label.
        server: String,
        /// The name, with the prefix.
        name: String,
        /// Why it cannot be used.
        reason: &'static str,
    },
    /// A tool set refused a tool: its name is already taken
    /// ([`BuildError::DuplicateToolName`]).
    #[error(transparent)]
    Build(#[from] BuildError),
    /// Serving a tool set failed (the transport could not be set up).
    #[error("MCP server failed: {0}")]
    Serve(String),
}
