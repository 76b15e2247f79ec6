use toolloop::Agent;

fn main() {
    let _agent = Agent::builder().model("claude-sonnet-4-5").build();
}
