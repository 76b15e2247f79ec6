/// Look up the weather.
#[derive(toolloop::Tool)]
struct Weather {
    city: String,
}

impl Weather {
    async fn run<S>(self, _state: S) -> Result<String, std::convert::Infallible> {
        Ok(self.city)
    }
}

fn main() {}
