/// Add two numbers.
#[derive(toolloop::Tool)]
#[tool(nmae = "add")]
struct Add {
    a: i64,
    b: i64,
}

fn main() {}
