use std::time::Duration;

use toolloop::testing::ScriptedModel;
use toolloop::Agent;

fn main() -> Result<(), toolloop::BuildError> {
    let agent = Agent::builder().model(ScriptedModel::new()).build()?;
    let _agent = agent.max_duration(Duration::from_secs(60));
    Ok(())
}
