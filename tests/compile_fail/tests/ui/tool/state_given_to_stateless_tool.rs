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

struct Db;

fn main() {
    let mut tools = toolloop::ToolSet::new();
    tools.add_with_state::<Weather>(Db).unwrap();
}
