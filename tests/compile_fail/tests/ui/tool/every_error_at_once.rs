#[derive(toolloop::Tool)]
#[tool(name = "bad name", colour = "red")]
struct Weather {
    city: String,
}

fn main() {}
