/// Look up the weather.
#[derive(toolloop::Tool)]
struct Weather {
    #[tool(name = "town")]
    city: String,
}

fn main() {}
