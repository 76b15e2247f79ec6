#[derive(toolloop::Tool)]
struct Add {
    a: i64,
    b: i64,
}

fn main() {}
