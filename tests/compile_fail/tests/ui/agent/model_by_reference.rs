use toolloop::testing::ScriptedModel;
use toolloop::Agent;

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Report {
    title: String,
    score: u32,
}

fn main() {
    let model = ScriptedModel::new();
    let _agent = Agent::builder().model(&model).output::<Report>().build();
}
