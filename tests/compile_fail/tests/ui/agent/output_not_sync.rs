use std::cell::Cell;

use toolloop::testing::ScriptedModel;
use toolloop::Agent;

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Report {
    title: String,
    views: Cell<u32>,
}

fn main() {
    let _agent = Agent::builder().model(ScriptedModel::new()).output::<Report>().build();
}
