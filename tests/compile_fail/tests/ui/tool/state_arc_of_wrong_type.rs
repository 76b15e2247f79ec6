struct Db;
struct Cache;

/// Count the rows of a table.
#[derive(toolloop::Tool)]
#[tool(state = Db)]
struct CountRows {
    table: String,
}

impl CountRows {
    async fn run(self, _db: &Db) -> Result<u64, std::convert::Infallible> {
        Ok(0)
    }
}

fn main() {
    let mut tools = toolloop::ToolSet::new();
    tools.add_with_state::<CountRows>(std::sync::Arc::new(Cache)).unwrap();
}
