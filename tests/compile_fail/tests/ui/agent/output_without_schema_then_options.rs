use toolloop::testing::ScriptedModel;
use toolloop::Agent;

#[derive(Debug, serde::Deserialize)]
struct Report {
    title: String,
}

fn main() {
    let _agent = Agent::builder()
        .model(ScriptedModel::new())
        .output::<Report>()
        .validator(|report: &Report| if report.title.is_empty() { Err("empty title") } else { Ok(()) })
        .max_attempts(2)
        .build();
}
