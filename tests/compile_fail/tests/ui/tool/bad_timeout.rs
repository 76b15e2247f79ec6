/// Look up the weather.
#[derive(toolloop::Tool)]
#[tool(timeout = "soon")]
struct Weather {
    city: String,
}

fn main() {}
