/// Look up the weather.
#[derive(toolloop::Tool)]
struct Weather {
    #[serde(flatten)]
    place: Place,
}

#[derive(schemars::JsonSchema)]
struct Place {
    city: String,
}

impl Weather {
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok(self.place.city)
    }
}

fn main() {}
