/// Look up the weather.
#[derive(toolloop::Tool)]
struct Weather {
    place: Place,
}

impl Weather {
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok(String::new())
    }
}
#[derive(serde::Deserialize)]
struct Place {
    name: String,
}

fn main() {}
