use toolloop::testing::ScriptedModel;
use toolloop::Agent;

fn main() {
    let builder = Agent::builder().model(ScriptedModel::new()).system("You answer briefly.");
    let mut conversation = toolloop::Conversation::new();
    conversation.push_user("Hi");
    let _events = builder.run_stream(&mut conversation);
}
