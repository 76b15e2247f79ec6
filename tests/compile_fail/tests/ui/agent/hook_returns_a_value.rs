use toolloop::testing::ScriptedModel;
use toolloop::Agent;

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Report {
    title: String,
}

fn main() {
    let _agent = Agent::builder().model(ScriptedModel::new()).on_tool_execution_started(|call| call.name.len()).build();
}
