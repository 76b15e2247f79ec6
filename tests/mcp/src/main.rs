//! A stdio MCP server of toolloop tools, that the tests of this package start as a
//! child process: `toolloop-mcp-test-server` speaks MCP on stdin/stdout
//! until the client hangs up.

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime");
    let (server, _lab) = toolloop_mcp_tests::server(true);
    if let Err(error) = runtime.block_on(server.serve_stdio()) {
        eprintln!("toolloop-mcp-test-server: {error}");
        std::process::exit(1);
    }
}
