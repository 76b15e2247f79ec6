use toolloop::testing::ScriptedModel;
use toolloop::Agent;

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Report {
    title: String,
}

fn main() {
    let writer = Agent::builder().model(ScriptedModel::new()).output::<Report>().build().unwrap();
    let _tool = writer.as_tool("write", "Write a report.");
}
