//! A run that waits for a person, across processes:
//! `cargo run --example approvals`, then
//! `cargo run --example approvals -- approve` (or `-- deny "reason"`).
//!
//! - The agent looks an order up and wants to refund it. Refunds need a
//!   person's approval (`Governance::needs_approval`), so the run pauses:
//!   the lookup has run, the refund waits as a *deferred call*.
//! - The conversation, pending call included, is saved to a SQLite store
//!   and the process exits — as a web app would after showing the request.
//! - Run again with the decision: the conversation is loaded from the
//!   store, resumed with the decision (the refund runs, or the model reads
//!   why not), and the run finishes; the store gets the finished turn.
//!
//! The store is `$TOOLLOOP_APPROVALS_DB`, else `toolloop-approvals.db` in
//! the system's temporary directory. Running without arguments starts the
//! session over. It runs on a real model when the environment configures
//! one (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY` or `OPENAI_BASE_URL`,
//! `OLLAMA_HOST`) and offline on a scripted model otherwise.

use std::convert::Infallible;
use std::path::PathBuf;

use serde_json::json;
use toolloop::prelude::*;
use toolloop::run::{Governance, Resolution};
use toolloop::store::{ConversationStore as _, SqliteStore};
use toolloop::testing::ScriptedModel;

/// The store's session for this example.
const SESSION: &str = "approvals-example";

/// Look an order up by its number.
#[derive(toolloop::Tool)]
struct LookUpOrder {
    /// The order number, e.g. "A-1042".
    order: String,
}

impl LookUpOrder {
    #[allow(clippy::unused_async)] // a real lookup would await the database
    async fn run(self) -> Result<String, Infallible> {
        Ok(format!("order {}: 2 items, paid 84.00 EUR, delivered damaged", self.order))
    }
}

/// Refund an order to the customer's card.
#[derive(toolloop::Tool)]
struct RefundPayment {
    /// The order number.
    order: String,
    /// The amount, in euros.
    amount: f64,
}

impl RefundPayment {
    #[allow(clippy::unused_async)] // a real payment API would be awaited
    async fn run(self) -> Result<String, Infallible> {
        Ok(format!("refunded {:.2} EUR for order {}", self.amount, self.order))
    }
}

/// What the person decided, from the command line.
enum Decided {
    Approve,
    Deny(String),
}

fn store_path() -> PathBuf {
    std::env::var_os("TOOLLOOP_APPROVALS_DB")
        .map_or_else(|| std::env::temp_dir().join("toolloop-approvals.db"), PathBuf::from)
}

/// The environment's model, or `script` offline.
fn model(script: ScriptedModel) -> Result<Box<dyn Model>, toolloop::BuildError> {
    let model = toolloop::providers::from_env_or(script)?;
    println!("using {} ({})", model.name(), model.provider());
    Ok(model)
}

/// The same agent in both processes: only the offline script differs, as
/// the first process used its first response.
fn agent(script: ScriptedModel) -> Result<Agent, Box<dyn std::error::Error>> {
    Ok(Agent::builder()
        .model(model(script)?)
        .system("You are a support agent. Look orders up before acting; refund damaged deliveries in full.")
        .tool::<LookUpOrder>()
        .tool::<RefundPayment>()
        .governance(Governance::new().needs_approval("refund_payment"))
        .build()?)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let decided = match args.first().map(String::as_str) {
        None => None,
        Some("approve") => Some(Decided::Approve),
        Some("deny") => Some(Decided::Deny(args.get(1).cloned().unwrap_or_else(|| "not approved".to_owned()))),
        Some(other) => return Err(format!("unknown argument `{other}`: use `approve` or `deny \"reason\"`").into()),
    };
    let store = SqliteStore::open(store_path())?;
    println!("store: {}", store.path().display());
    match decided {
        None => start(&store).await,
        Some(decided) => decide(&store, decided).await,
    }
}

/// Runs until the refund waits for approval, saves, and exits.
async fn start(store: &SqliteStore) -> Result<(), Box<dyn std::error::Error>> {
    // Starting over: an earlier session of this example is replaced.
    store.delete(SESSION).await?;
    let script = ScriptedModel::from_responses([ModelResponse::from_tool_calls([
        ToolCall::new("c1", "look_up_order", json!({"order": "A-1042"})),
        ToolCall::new("c2", "refund_payment", json!({"order": "A-1042", "amount": 84.0})),
    ])
    .with_usage(Usage::new(420, 60))]);
    let agent = agent(script)?;
    let mut conversation = Conversation::new();
    conversation.push_user("Order A-1042 arrived damaged. Please look it up and refund it.");
    let paused = match agent.run(&mut conversation).await {
        Err(error) if error.is_deferred() => error,
        Err(error) => return Err(error.into()),
        Ok(done) => {
            println!("the model finished without asking for a refund: {}", done.output);
            return Ok(());
        }
    };
    store.save(SESSION, &conversation, None).await?;
    println!("\n{}; waiting for a person:", paused.termination());
    for deferred in paused.deferred_calls() {
        println!("  {} {}({}) — {}", deferred.call.id, deferred.call.name, deferred.call.input, deferred.reason);
    }
    println!("saved as session `{SESSION}`; decide with");
    println!("  cargo run --example approvals -- approve");
    println!("  cargo run --example approvals -- deny \"reason\"");
    Ok(())
}

/// Loads the paused session, resumes it with the decision, saves the end.
async fn decide(store: &SqliteStore, decided: Decided) -> Result<(), Box<dyn std::error::Error>> {
    let Some((mut stored, loaded)) = store.load(SESSION).await? else {
        return Err("no paused session: run `cargo run --example approvals` first".into());
    };
    if !stored.is_pending() {
        return Err("the session is not waiting for a decision: run `cargo run --example approvals` first".into());
    }
    let (resolution, answer) = match decided {
        Decided::Approve => {
            (Resolution::Approve, "I refunded 84.00 EUR for order A-1042; it should reach your card in a few days.")
        }
        Decided::Deny(reason) => (
            Resolution::deny(reason),
            "Order A-1042 was damaged, but the refund was not approved; a colleague will contact you.",
        ),
    };
    let script = ScriptedModel::from_responses([ModelResponse::from_text(answer).with_usage(Usage::new(560, 40))]);
    let agent = agent(script)?;
    // Every call that waits gets the person's decision.
    let resolutions: Vec<_> =
        stored.deferred_calls().iter().map(|deferred| (deferred.call.id.clone(), resolution.clone())).collect();
    // Claimed before anything runs: a second `approve` of the same paused
    // session (a double click, a retry) fails here with a conflict.
    let claimed = store.save(SESSION, &stored, Some(loaded)).await?;
    let done = agent.resume(&mut stored, resolutions).await;
    if done.as_ref().is_err_and(|error| error.resume_error().is_some()) {
        return Err(done.err().map_or_else(|| "refused".into(), Into::into));
    }
    // Saved however the run ended: the approved calls ran.
    let version = store.save(SESSION, &stored, Some(claimed)).await?;
    let done = done?;
    println!("\nanswer: {}", done.output);
    let metadata = &done.metadata;
    println!(
        "over both processes: {} model calls, {} tools executed {:?}, {} tokens; session `{SESSION}` saved at version {version}",
        metadata.model_calls,
        metadata.tool_calls,
        metadata.tools_used,
        metadata.usage.total()
    );
    Ok(())
}
