/// Look up the weather.
#[derive(toolloop::Tool)]
#[tool(state = std::cell::RefCell<u32>)]
struct Weather {
    city: String,
}
impl Weather {
    async fn run(self, _n: &std::cell::RefCell<u32>) -> Result<String, std::convert::Infallible> {
        Ok(String::new())
    }
}

fn main() {}
