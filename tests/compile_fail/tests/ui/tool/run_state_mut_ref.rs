struct Db;

/// Count the rows of a table.
#[derive(toolloop::Tool)]
#[tool(state = Db)]
struct CountRows {
    table: String,
}

impl CountRows {
    async fn run(self, _db: &mut Db) -> Result<u64, std::convert::Infallible> {
        Ok(0)
    }
}

fn main() {}
