/// Look up the weather.
#[derive(toolloop::Tool)]
#[tool(crate = "my_app::deps::toolloop")]
struct Weather {
    city: String,
}

impl Weather {
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok(self.city)
    }
}

fn main() {}
