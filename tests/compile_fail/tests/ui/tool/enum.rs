/// Pick a colour.
#[derive(toolloop::Tool)]
enum Colour {
    Red,
    Green,
}

fn main() {}
