use toolloop::testing::ScriptedModel;
use toolloop::Agent;

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Report {
    title: String,
}

#[derive(Debug)]
struct Other;

fn main() {
    let _agent = Agent::builder()
        .model(ScriptedModel::new())
        .output::<Report>()
        .reflection(|other: &Other| format!("{other:?}"))
        .build();
}
