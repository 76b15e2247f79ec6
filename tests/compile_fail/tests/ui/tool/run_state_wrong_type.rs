/// Look up the weather.
#[derive(toolloop::Tool)]
#[tool(state = Db)]
struct Weather {
    city: String,
}
struct Db;
struct Cache;
impl Weather {
    async fn run(self, _db: &Cache) -> Result<String, std::convert::Infallible> {
        Ok(self.city)
    }
}

fn main() {}
