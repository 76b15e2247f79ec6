/// Look up the weather.
#[derive(toolloop::Tool)]
struct Weather<'a> {
    city: &'a str,
}

fn main() {}
