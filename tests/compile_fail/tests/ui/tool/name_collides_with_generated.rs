/// Look up the weather.
#[derive(toolloop::Tool)]
struct Weather {
    place: __ToolArguments,
}

impl Weather {
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok(self.place.name)
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct __ToolArguments {
    name: String,
}

fn main() {}
