use toolloop::testing::ScriptedModel;
use toolloop::Agent;

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
    let _agent = Agent::builder().model(ScriptedModel::new()).tool::<CountRows>().build();
}
