/// Ping the server.
#[derive(toolloop::Tool)]
struct Ping;

fn main() {}
