/// Look up the weather.
#[derive(toolloop::Tool)]
struct Weather {
    city: String,
}
impl Weather {
    async fn run(&self) -> Result<String, std::convert::Infallible> {
        Ok(self.city.clone())
    }
}

fn main() {}
