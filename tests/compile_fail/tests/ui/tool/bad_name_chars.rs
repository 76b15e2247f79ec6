/// Look up the weather.
#[derive(toolloop::Tool)]
#[tool(name = "get weather!")]
struct Weather {
    city: String,
}

fn main() {}
