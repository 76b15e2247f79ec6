/// Look up the weather.
#[derive(toolloop::Tool)]
struct Weather {
    city: String,
}
impl Weather {
    async fn run(self) -> Option<String> {
        Some(self.city)
    }
}

fn main() {}
