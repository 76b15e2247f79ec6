use std::marker::PhantomData;
use std::rc::Rc;

use toolloop::testing::ScriptedModel;
use toolloop::Agent;

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Report {
    title: String,
    #[serde(skip)]
    #[schemars(skip)]
    owner: PhantomData<Rc<()>>,
}

fn main() {
    let _agent = Agent::builder().model(ScriptedModel::new()).output::<Report>().build();
}
