/// Look up the weather.
#[derive(toolloop::Tool)]
struct Weather {
    #[serde(renam = "town")]
    city: String,
}

impl Weather {
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok(String::new())
    }
}

fn main() {}
