/// Add two numbers.
#[derive(toolloop::Tool)]
#[tool(name = "add", name = "plus")]
struct Add {
    a: i64,
    b: i64,
}

fn main() {}
