/// Look up the weather.
#[derive(toolloop::Tool)]
#[tool(timeout = std::time::Duration::from_secs(5))]
struct Weather {
    city: String,
}

impl Weather {
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok(String::new())
    }
}

fn main() {}
