/// Look up the weather.
#[derive(toolloop::Tool)]
struct Weather {
    city: String,
}
struct Report;
impl Weather {
    async fn run(self) -> Result<Report, std::convert::Infallible> {
        Ok(Report)
    }
}

fn main() {}
