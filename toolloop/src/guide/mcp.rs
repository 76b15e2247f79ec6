//! # Tools over MCP
//!
//! With the `mcp` feature (off by default), toolloop speaks the Model
//! Context Protocol, built on [rmcp](https://crates.io/crates/rmcp), the
//! official Rust SDK, both ways. The server below is the reference
//! `mcp-server-time` (`pip install mcp-server-time` installs a program of
//! that name; `uvx mcp-server-time` runs the same server if you use uv):
//!
//! ```no_run
//! # #[cfg(feature = "mcp")]
//! # async fn demo(model: impl toolloop::Model + 'static, my_tools: toolloop::ToolSet) -> Result<(), Box<dyn std::error::Error>> {
//! use toolloop::Agent;
//! use toolloop::mcp::{McpClient, McpServer, McpTransport, ToolSelection};
//!
//! // Use a server's tools beside your own: a child process over stdio...
//! let time = McpClient::connect(McpTransport::child_process("mcp-server-time")).await?;
//! // ...or a Streamable HTTP endpoint.
//! let docs = McpClient::connect(McpTransport::streamable_http("https://mcp.example.com/mcp").bearer_token("...")).await?;
//!
//! let mut builder = Agent::builder().model(model);
//! for tool in time.tools(&ToolSelection::all().prefix("time_"))? {
//!     builder = builder.tool_dyn(tool);
//! }
//! for tool in docs.tools(&ToolSelection::all().only(["search"]))? {
//!     builder = builder.tool_dyn(tool);
//! }
//! let agent = builder.build()?;
//!
//! // Serve your tools to MCP hosts (Claude Desktop, IDEs, other agents).
//! McpServer::new(my_tools).name("my-tools", "1.0.0").serve_stdio().await?;
//! # Ok(()) }
//! ```
//!
//! - **MCP tools are tools like any other.** Each becomes a `DynTool`: the
//!   arguments are checked against the server's input schema before
//!   sending (with the field path in the error), the tool set's timeout,
//!   governance and hooks apply, and a timed-out or cancelled call is
//!   cancelled on the server (`notifications/cancelled`). `isError` results
//!   become error results; text, structured, image, audio and resource
//!   content become text the model reads (binary content as a short
//!   placeholder naming its type and size). Plain and OpenAI-strict schemas
//!   are derived from the server's schema as for derived tools (strict only
//!   where expressible). `ToolSelection` prefixes and filters names; names
//!   providers reject (`fs.read`) are rewritten (`fs_read`); duplicates are
//!   rejected as for any tool.
//! - **Changes and failures.** The client follows `tools/list_changed`: a
//!   call to a removed tool is an error result that says so, a changed
//!   schema is checked at the next call, `McpClient::watch_tools` tells when
//!   to rebuild an agent's tools. A server that exits or goes away turns its
//!   calls into error results, never a hang; `McpClient::reconnect` (or
//!   `McpTransport::auto_reconnect`) starts it again, and tools built
//!   before use the new connection. Connecting and listing fail with a
//!   typed `McpError`.
//! - **Serving.** `McpServer` serves a `ToolSet` over stdio, Streamable
//!   HTTP (`serve_http` on a `TcpListener`, or `http_service` to mount in
//!   your own server) or any byte stream. Calls go through
//!   `ToolSet::execute`, so argument errors, tool errors, panics and
//!   timeouts come back as `isError` results with exactly the text the loop
//!   shows a model; `set_tools` changes the tools and notifies connected
//!   clients.
//!
//! `cargo run --features mcp --example mcp` runs an agent on the tools of
//! an MCP server (the example itself, started with `serve` over stdio).
//! The MCP tests live in their own package, `tests/mcp`, with a stdio test
//! server binary. Its interoperability tests, against the reference
//! `mcp-server-time` server and Python's MCP client, are ignored by
//! default; run them with
//!
//! ```text
//! pip install mcp-server-time
//! cargo test -p toolloop-mcp-tests --test mcp_interop -- --ignored
//! ```
//!
//! The feature adds 31 crates (139 instead of 108 for the default
//! features; `BENCHMARKS.md` section 6).
