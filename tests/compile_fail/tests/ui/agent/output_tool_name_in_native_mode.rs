use toolloop::testing::ScriptedModel;
use toolloop::Agent;

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Report {
    title: String,
}

fn main() {
    let _agent = Agent::builder()
        .model(ScriptedModel::new())
        .output::<Report>()
        .native_output()
        .output_tool_name("report")
        .build();
}
