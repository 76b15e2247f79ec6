use std::rc::Rc;

/// Look up the weather.
#[derive(toolloop::Tool)]
struct Weather {
    place: Place,
}

impl Weather {
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok(self.place.name)
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Place {
    name: String,
    #[serde(skip)]
    #[schemars(skip)]
    cache: Option<Rc<String>>,
}

fn main() {}
