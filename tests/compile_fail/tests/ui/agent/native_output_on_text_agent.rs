use toolloop::testing::ScriptedModel;
use toolloop::Agent;

fn main() {
    let _agent = Agent::builder().model(ScriptedModel::new()).native_output().build();
}
