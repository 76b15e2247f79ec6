/// Add two numbers.
#[derive(toolloop::Tool)]
struct Add {
    a: i64,
    b: i64,
}

impl Add {
    async fn run(self) -> i64 {
        self.a + self.b
    }
}

fn main() {}
