/// Look up the weather in a city.
#[derive(toolloop::Tool)]
#[tool(description = "Get the weather.")]
struct Weather {
    city: String,
}

impl Weather {
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok(self.city)
    }
}

fn main() {}
