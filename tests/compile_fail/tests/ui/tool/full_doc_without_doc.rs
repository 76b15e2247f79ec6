#[derive(toolloop::Tool)]
#[tool(description = "Look up the weather.", full_doc)]
struct Weather {
    city: String,
}

impl Weather {
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok(self.city)
    }
}

fn main() {}
