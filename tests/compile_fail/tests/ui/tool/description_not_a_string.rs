#[derive(toolloop::Tool)]
#[tool(description = 42)]
struct Weather {
    city: String,
}

fn main() {}
