use toolloop::testing::ScriptedModel;
use toolloop::Agent;

struct Weather {
    city: String,
}

fn main() {
    let _agent = Agent::builder().model(ScriptedModel::new()).tool::<Weather>().build();
}
