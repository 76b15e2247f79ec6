/// Look up the weather.
#[derive(toolloop::Tool)]
struct Weather {
    city: String,
}
#[derive(Debug)]
struct NoStation;
impl Weather {
    async fn run(self) -> Result<String, NoStation> {
        Err(NoStation)
    }
}

fn main() {}
