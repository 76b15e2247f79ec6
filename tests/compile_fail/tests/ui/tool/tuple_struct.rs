/// Add two numbers.
#[derive(toolloop::Tool)]
struct Add(i64, i64);

fn main() {}
