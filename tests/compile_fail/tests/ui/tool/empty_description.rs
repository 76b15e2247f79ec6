#[derive(toolloop::Tool)]
#[tool(description = "  ")]
struct Add {
    a: i64,
    b: i64,
}

fn main() {}
