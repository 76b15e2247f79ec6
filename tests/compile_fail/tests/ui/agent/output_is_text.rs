use toolloop::testing::ScriptedModel;
use toolloop::agent::Text;
use toolloop::Agent;

fn main() {
    let _agent = Agent::builder().model(ScriptedModel::new()).output::<Text>().build();
}
