/// Look something up.
#[derive(toolloop::Tool)]
struct Lookup<T> {
    key: T,
}

fn main() {}
