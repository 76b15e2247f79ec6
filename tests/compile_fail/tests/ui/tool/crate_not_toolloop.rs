/// Look up the weather.
#[derive(toolloop::Tool)]
#[tool(crate = "serde")]
struct Weather {
    city: String,
}

impl Weather {
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok(self.city)
    }
}

fn main() {}
