//! Governance of tool calls: `cargo run --example governance`.
//!
//! - A policy decides before each tool call: `drop_table` is always denied,
//!   `email_customers` needs a person's approval, anything else runs.
//! - The approver is async and asks on stdin. When stdin is not a terminal
//!   (CI, a pipe) nobody can answer, so it rejects with a default answer.
//! - Denied and rejected calls are not run; the model gets an error result
//!   with a machine-readable kind ([`FailureKind`]) and can carry on.
//! - Every call leaves an audit record, printed here as JSON.
//!
//! It runs on a real model when the environment configures one
//! (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY` or `OPENAI_BASE_URL`, `GEMINI_API_KEY`, `OLLAMA_HOST`)
//! and offline on a scripted model otherwise, and says which.

use std::convert::Infallible;
use std::io::{BufRead as _, IsTerminal as _, Write as _};

use serde_json::json;
use toolloop::FailureKind;
use toolloop::prelude::*;
use toolloop::run::{Decision, Event, Governance};
use toolloop::testing::ScriptedModel;

/// Run a read-only SQL query against the customer database.
#[derive(toolloop::Tool)]
struct RunQuery {
    /// The query.
    sql: String,
}

impl RunQuery {
    #[allow(clippy::unused_async)] // a real query would await the database
    async fn run(self) -> Result<String, Infallible> {
        Ok(format!("3 rows for `{}`: ana@example.com, bo@example.com, cy@example.com", self.sql))
    }
}

/// Drop a table from the customer database.
#[derive(toolloop::Tool)]
struct DropTable {
    /// The table.
    table: String,
}

impl DropTable {
    #[allow(clippy::unused_async)] // never reached here: the policy denies every call
    async fn run(self) -> Result<String, Infallible> {
        Ok(format!("dropped {}", self.table))
    }
}

/// Email a group of customers.
#[derive(toolloop::Tool)]
struct EmailCustomers {
    /// Who gets it, e.g. "inactive".
    group: String,
    /// The subject line.
    subject: String,
}

impl EmailCustomers {
    #[allow(clippy::unused_async)] // a real mailer would await its API
    async fn run(self) -> Result<String, Infallible> {
        Ok(format!("sent \"{}\" to the {} customers", self.subject, self.group))
    }
}

/// The policy: what may run, what may not, and what needs a person.
fn policy(call: &ToolCall) -> Decision {
    match call.name.as_str() {
        "drop_table" => Decision::Deny("dropping tables is never allowed from an agent".to_owned()),
        "email_customers" => Decision::Ask,
        _ => Decision::Allow,
    }
}

/// The approver: asks on stdin, or answers no when nobody can be asked.
async fn ask_operator(call: ToolCall) -> Decision {
    if !std::io::stdin().is_terminal() {
        println!("  [approver] stdin is not a terminal: answering no to {}", call.name);
        return Decision::Deny("no operator available to approve it".to_owned());
    }
    // Reading stdin blocks, so it runs off the async workers.
    let answer = tokio::task::spawn_blocking(move || {
        print!("  [approver] allow {}({})? [y/N] ", call.name, call.input);
        std::io::stdout().flush().ok();
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line).map(|_| line)
    })
    .await;
    match answer {
        Ok(Ok(line)) if line.trim().eq_ignore_ascii_case("y") => Decision::Allow,
        _ => Decision::Deny("the operator said no".to_owned()),
    }
}

/// The environment's model (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, `GEMINI_API_KEY`, `OLLAMA_HOST`), or a script.
fn model() -> Result<Box<dyn Model>, toolloop::BuildError> {
    let model = toolloop::providers::from_env_or(scripted())?;
    println!("using {} ({})\n", model.name(), model.provider());
    Ok(model)
}

/// One batch touching all three tools, then a summary.
fn scripted() -> ScriptedModel {
    let call = |id: &str, name: &str, input| ToolCall::new(id, name, input);
    ScriptedModel::from_responses([
        ModelResponse::from_tool_calls([
            call("g1", "run_query", json!({"sql": "select email from customers where inactive"})),
            call("g2", "email_customers", json!({"group": "inactive", "subject": "We miss you"})),
            call("g3", "drop_table", json!({"table": "inactive_customers"})),
        ])
        .with_usage(Usage::new(500, 70)),
        ModelResponse::from_text(
            "I found 3 inactive customers. Emailing them was not approved and dropping the table is not \
             allowed, so I did neither.",
        )
        .with_usage(Usage::new(640, 30)),
    ])
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let governance = Governance::new().policy(policy).approver(ask_operator);
    let agent = Agent::builder()
        .model(model()?)
        .system("You manage the customer database with the tools you have.")
        .tool::<RunQuery>()
        .tool::<DropTable>()
        .tool::<EmailCustomers>()
        .governance(governance)
        .on_tool_execution_finished(|call, result| {
            let kind = result.failure.map_or("ok", FailureKind::as_str);
            println!("  {} -> [{kind}] {}", call.name, result.content);
        })
        // The audit log: each finished call's event, serialised as it is.
        .on_event(|event: &Event| match event {
            Event::ToolExecutionFinished { .. } => serde_json::to_string(event).map(|json| println!("  audit: {json}")),
            _ => Ok(()),
        })
        .build()?;

    let mut conversation = Conversation::new();
    conversation.push_user(
        "Find the inactive customers, email them a 'We miss you' note, then drop the inactive_customers table.",
    );
    let done = agent.run(&mut conversation).await?;
    println!("\nanswer: {}", done.output);
    println!("tools executed: {} (denied and rejected calls never run)", done.metadata.tool_calls);
    Ok(())
}
