use toolloop::Agent;

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Report {
    title: String,
}

fn main() {
    let _agent = Agent::builder().system("You write reports.").output::<Report>().build();
}
