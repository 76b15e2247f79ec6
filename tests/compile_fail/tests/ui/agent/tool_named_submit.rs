use toolloop::testing::ScriptedModel;
use toolloop::Agent;

/// Submits an order.
#[derive(toolloop::Tool)]
struct Submit {
    /// The order.
    order: String,
}

impl Submit {
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok(self.order)
    }
}

fn main() {
    let _agent = Agent::builder().model(ScriptedModel::new()).tool::<Submit>().build();
}
