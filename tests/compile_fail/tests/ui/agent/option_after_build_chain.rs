use toolloop::testing::ScriptedModel;
use toolloop::Agent;

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Report {
    title: String,
}

fn main() -> Result<(), toolloop::BuildError> {
    let agent = Agent::builder().model(ScriptedModel::new()).output::<Report>().build()?;
    let _agent = agent.validator(|report| if report.title.is_empty() { Err("empty") } else { Ok(()) });
    Ok(())
}
