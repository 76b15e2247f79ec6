/// Look up the weather.
#[derive(toolloop::Tool)]
#[tool(timeout = "0s")]
struct Weather {
    city: String,
}

fn main() {}
