use toolloop::testing::ScriptedModel;
use toolloop::Agent;

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Report {
    title: String,
}

fn check(title: &String) -> Result<(), String> {
    if title.is_empty() { Err("empty".into()) } else { Ok(()) }
}

fn main() {
    let _agent = Agent::builder().model(ScriptedModel::new()).output::<Report>().validator(check).build();
}
