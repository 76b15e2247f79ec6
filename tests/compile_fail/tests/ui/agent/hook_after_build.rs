use toolloop::testing::ScriptedModel;
use toolloop::Agent;

fn main() -> Result<(), toolloop::BuildError> {
    let agent = Agent::builder().model(ScriptedModel::new()).build()?;
    let _agent = agent.on_run_finished(|termination| println!("{termination:?}"));
    Ok(())
}
