use toolloop::testing::ScriptedModel;
use toolloop::Agent;

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Report {
    title: String,
    score: u32,
}

fn main() {
    let _agent = Agent::builder()
        .model(ScriptedModel::new())
        .output::<Report>()
        .validator(|report: &Report| report.score > 0)
        .build();
}
