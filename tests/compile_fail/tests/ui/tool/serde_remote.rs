/// Look up the weather.
#[derive(toolloop::Tool)]
#[serde(remote = "Other")]
struct Weather {
    city: String,
}

impl Weather {
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok(String::new())
    }
}
struct Other {
    city: String,
}

fn main() {}
