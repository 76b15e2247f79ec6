/// Look up the weather.
#[derive(toolloop::Tool)]
struct Weather {
    city: String,
}
async fn pause() {}
impl Weather {
    async fn run(self) -> Result<String, std::convert::Infallible> {
        let shared = std::rc::Rc::new(self.city);
        pause().await;
        Ok((*shared).clone())
    }
}

fn main() {}
