use toolloop::testing::ScriptedModel;
use toolloop::Agent;

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Report {
    title: String,
    score: u32,
}

struct Low;

fn main() {
    let _agent = Agent::builder()
        .model(ScriptedModel::new())
        .output::<Report>()
        .validator(|report: &Report| if report.score > 0 { Ok(()) } else { Err(Low) })
        .build();
}
