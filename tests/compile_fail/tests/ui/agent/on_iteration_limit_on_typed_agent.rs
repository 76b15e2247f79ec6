use toolloop::run::LimitDecision;
use toolloop::testing::ScriptedModel;
use toolloop::Agent;

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Report {
    title: String,
}

fn main() {
    let _agent = Agent::builder()
        .model(ScriptedModel::new())
        .output::<Report>()
        .on_iteration_limit(|limit| if limit < 10 { LimitDecision::Extend(5) } else { LimitDecision::MaxIterations })
        .build();
}
