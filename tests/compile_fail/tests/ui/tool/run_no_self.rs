/// Look up the weather.
#[derive(toolloop::Tool)]
struct Weather {
    city: String,
}
impl Weather {
    async fn run() -> Result<String, std::convert::Infallible> {
        Ok(String::new())
    }
}

fn main() {}
