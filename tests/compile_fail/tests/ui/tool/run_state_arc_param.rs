/// Look up the weather.
#[derive(toolloop::Tool)]
#[tool(state = Db)]
struct Weather {
    city: String,
}
struct Db;
impl Weather {
    async fn run(self, _db: std::sync::Arc<Db>) -> Result<String, std::convert::Infallible> {
        Ok(self.city)
    }
}

fn main() {}
