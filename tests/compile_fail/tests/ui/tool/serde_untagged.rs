/// Look up the weather.
#[derive(toolloop::Tool)]
#[serde(untagged)]
struct Weather {
    city: String,
}

impl Weather {
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok(String::new())
    }
}

fn main() {}
