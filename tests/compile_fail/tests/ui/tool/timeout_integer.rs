/// Look up the weather.
#[derive(toolloop::Tool)]
#[tool(timeout = 30)]
struct Weather {
    city: String,
}

impl Weather {
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok(String::new())
    }
}

fn main() {}
