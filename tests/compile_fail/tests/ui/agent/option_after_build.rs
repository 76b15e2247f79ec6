use toolloop::testing::ScriptedModel;
use toolloop::Agent;

/// Look up the weather.
#[derive(toolloop::Tool)]
struct Weather {
    city: String,
}

impl Weather {
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok(self.city)
    }
}

fn main() -> Result<(), toolloop::BuildError> {
    let agent = Agent::builder().model(ScriptedModel::new()).build()?;
    let _agent = agent.tool::<Weather>();
    Ok(())
}
