use toolloop::testing::ScriptedModel;
use toolloop::Agent;

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Report {
    title: String,
    score: u32,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Borrowed<'a> {
    title: &'a str,
}

fn main() {
    let _agent = Agent::builder().model(ScriptedModel::new()).output::<Borrowed>().build();
}
