/// Look up the weather.
#[derive(toolloop::Tool)]
struct Weather {
    city: String,
}

impl Weather {
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok(String::new())
    }
}

fn main() {
    let mut tools = toolloop::ToolSet::new();
    tools.add(Weather { city: String::new() }).unwrap();
}
