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
        .validator(|report| if report.title.is_empty() { Err("the title is empty".into()) } else { Ok(()) })
        .build();
}
