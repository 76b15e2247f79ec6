/// Look up the weather.
#[derive(toolloop::Tool)]
struct Weather {
    city: String,
}
struct Db;
impl Weather {
    async fn run(self, _db: &Db) -> Result<String, std::convert::Infallible> {
        Ok(self.city)
    }
}

fn main() {}
