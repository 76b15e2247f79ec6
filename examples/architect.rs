//! An architect agent: `cargo run --example architect`.
//!
//! - A fresh conversation per request: the agent keeps no memory between
//!   requests (a stateless agent), and one `Agent` serves them all.
//! - A terminal `submit_reply` tool: the run ends as soon as the model
//!   submits its reply, and the reply is the run's output.
//! - Few iterations: three model calls per request at most.
//!
//! It runs on a real model when the environment configures one
//! (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY` or `OPENAI_BASE_URL`, `GEMINI_API_KEY`, `OLLAMA_HOST`)
//! and offline on a scripted model otherwise, and says which.

use std::convert::Infallible;

use serde_json::json;
use toolloop::prelude::*;
use toolloop::testing::ScriptedModel;
use toolloop::tool::ToolExecution;

/// The design notes of the system's components.
const COMPONENTS: &[(&str, &str)] = &[
    ("gateway", "HTTP entry point; authenticates requests and routes them; stateless, 3 replicas."),
    ("orders", "Owns orders in Postgres; publishes `order_placed` events to the queue."),
    ("billing", "Consumes `order_placed`; charges cards through the payment provider; retries for 24h."),
];

/// Read the design notes of one component of the system.
#[derive(toolloop::Tool)]
struct ReadComponent {
    /// The component: "gateway", "orders" or "billing".
    name: String,
}

impl ReadComponent {
    #[allow(clippy::unused_async)] // a real lookup would read a wiki
    async fn run(self) -> Result<&'static str, String> {
        COMPONENTS
            .iter()
            .find(|(name, _)| *name == self.name)
            .map(|(_, notes)| *notes)
            .ok_or_else(|| format!("no component `{}`; there are gateway, orders and billing", self.name))
    }
}

/// Send your reply to the person who asked. This ends your turn.
#[derive(toolloop::Tool)]
struct SubmitReply {
    /// The reply, in a few sentences.
    reply: String,
}

impl SubmitReply {
    #[allow(clippy::unused_async)] // a real handler would post the reply to a chat
    async fn run(self) -> Result<String, Infallible> {
        Ok(self.reply)
    }
}

/// The terminal check: a successful `submit_reply` ends the run; its result is the output.
fn submitted_reply(batch: &[ToolExecution]) -> Option<String> {
    let submitted = batch.iter().find(|done| done.call.name == "submit_reply" && !done.result.is_error())?;
    Some(submitted.result.content.clone())
}

/// The environment's model (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, `GEMINI_API_KEY`, `OLLAMA_HOST`), or a script.
fn model() -> Result<Box<dyn Model>, toolloop::BuildError> {
    let model = toolloop::providers::from_env_or(scripted())?;
    println!("using {} ({})\n", model.name(), model.provider());
    Ok(model)
}

/// What a model would say to the two requests.
fn scripted() -> ScriptedModel {
    let call = |id: &str, name: &str, input| ToolCall::new(id, name, input);
    ScriptedModel::from_responses([
        // Request 1: read two components (one iteration), then reply.
        ModelResponse::from_tool_calls([
            call("r1", "read_component", json!({"name": "orders"})),
            call("r2", "read_component", json!({"name": "billing"})),
        ])
        .with_usage(Usage::new(500, 40)),
        ModelResponse::from_tool_calls([call(
            "r3",
            "submit_reply",
            json!({"reply": "Billing learns of an order from the `order_placed` event that orders publishes; \
                              there is no direct call, so billing can be down for up to 24h without losing charges."}),
        )])
        .with_usage(Usage::new(620, 55)),
        // Request 2: answered from general knowledge in one iteration.
        ModelResponse::from_tool_calls([call(
            "r4",
            "submit_reply",
            json!({"reply": "Put the rate limit in the gateway: it sees every request and is stateless, \
                              so keep the counters in Redis rather than in memory."}),
        )])
        .with_usage(Usage::new(480, 38)),
    ])
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let architect = Agent::builder()
        .model(model()?)
        .system(
            "You are the system's architect. Read the components you need, then answer with `submit_reply`. \
             Be brief.",
        )
        .tool::<ReadComponent>()
        .tool::<SubmitReply>()
        .max_iterations(3)
        .on_tool_execution_started(|call| println!("  {}({})", call.name, call.input))
        .terminal_check(submitted_reply)
        .build()?;

    for request in ["How does billing learn about new orders?", "Where should we enforce rate limits?"] {
        // A fresh conversation per request: nothing leaks from one to the next.
        let mut conversation = Conversation::new();
        conversation.push_user(request);
        println!("request: {request}");
        match architect.run(&mut conversation).await {
            Ok(done) => {
                let meta = &done.metadata;
                println!("reply: {}", done.output);
                println!(
                    "  ended by {:?} after {} of at most 3 iterations, {} tokens; {} messages discarded\n",
                    meta.termination,
                    meta.iterations,
                    meta.usage.total(),
                    conversation.len()
                );
            }
            Err(error) => println!("no reply: {error}\n"),
        }
    }
    Ok(())
}
