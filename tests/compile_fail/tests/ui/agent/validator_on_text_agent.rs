use toolloop::testing::ScriptedModel;
use toolloop::Agent;

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Report {
    title: String,
}

fn main() {
    let _agent = Agent::builder()
        .model(ScriptedModel::new())
        .validator(|report: &Report| if report.title.is_empty() { Err("empty") } else { Ok(()) })
        .build();
}
