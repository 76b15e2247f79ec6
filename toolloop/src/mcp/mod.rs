//! The Model Context Protocol: use the tools of MCP servers beside your own,
//! and serve a [`ToolSet`](crate::ToolSet) to MCP hosts (feature `mcp`).
//!
//! Both sides are built on [`rmcp`], the official Rust SDK, re-exported
//! here for its transports and types.
//!
//! - **Client.** [`McpClient::connect`] reaches a server through an
//!   [`McpTransport`]: a child process (stdio), a Streamable HTTP endpoint,
//!   or any byte stream; [`McpClient::add_tools`]
//!   puts its tools in a tool set, selected and renamed by a
//!   [`ToolSelection`]. They run like any other tool: arguments checked
//!   against the server's schema, timeouts, governance, hooks,
//!   cancellation (sent on to the server), error results.
//! - **Server.** [`McpServer`] serves a tool set over stdio, Streamable HTTP
//!   or a byte stream; tool failures come back as `isError` results with
//!   the text the loop would show a model.
//!
//! ```no_run
//! use toolloop::{Agent, Conversation, Model};
//! use toolloop::mcp::{McpClient, McpTransport, ToolSelection};
//!
//! # async fn demo(model: impl Model + 'static) -> Result<(), Box<dyn std::error::Error>> {
//! let time = McpClient::connect(McpTransport::child_process("uvx").arg("mcp-server-time")).await?;
//! let mut builder = Agent::builder().model(model);
//! for tool in time.tools(&ToolSelection::all())? {
//!     builder = builder.tool_dyn(tool);
//! }
//! let agent = builder.build()?;
//! let mut conversation = Conversation::new();
//! conversation.push_user("What time is it in Tokyo?");
//! let answer = agent.run(&mut conversation).await?;
//! # Ok(()) }
//! ```

mod client;
mod connection;
mod content;
mod error;
mod http_server;
mod remote_tool;
mod selection;
mod server;
mod transport;
mod validate;

pub use client::McpClient;
pub use error::McpError;
#[doc(no_inline)]
pub use rmcp;
pub use selection::ToolSelection;
pub use server::McpServer;
pub use transport::{DEFAULT_MCP_REQUEST_TIMEOUT, McpStream, McpTransport};
