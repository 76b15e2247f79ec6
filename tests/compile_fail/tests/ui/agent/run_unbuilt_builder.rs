use toolloop::testing::ScriptedModel;
use toolloop::Agent;

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Report {
    title: String,
}

async fn go() {
    let builder = Agent::builder().model(ScriptedModel::new()).output::<Report>();
    let mut conversation = toolloop::Conversation::new();
    let _ = builder.run(&mut conversation).await;
}

fn main() {
    drop(go());
}
