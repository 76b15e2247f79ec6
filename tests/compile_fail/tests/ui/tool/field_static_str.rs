/// Look up the weather.
#[derive(toolloop::Tool)]
struct Weather {
    city: &'static str,
}

impl Weather {
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok(String::new())
    }
}

fn main() {}
