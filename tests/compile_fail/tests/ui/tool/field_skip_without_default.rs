/// Look up the weather.
#[derive(toolloop::Tool)]
struct Weather {
    #[serde(skip)]
    place: Place,
}

impl Weather {
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok(String::new())
    }
}
struct Place;

fn main() {}
