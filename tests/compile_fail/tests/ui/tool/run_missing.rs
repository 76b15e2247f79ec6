/// Look up the weather.
#[derive(toolloop::Tool)]
struct Weather {
    city: String,
}

fn main() {}
