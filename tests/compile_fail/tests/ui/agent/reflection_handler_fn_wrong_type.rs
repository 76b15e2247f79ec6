use toolloop::testing::ScriptedModel;
use toolloop::Agent;

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Report {
    title: String,
}

fn render(text: &String) -> String {
    text.clone()
}

fn main() {
    let _agent = Agent::builder().model(ScriptedModel::new()).output::<Report>().reflection(render).build();
}
