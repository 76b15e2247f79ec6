//! Durable toolloop runs on [Restate](https://restate.dev): a run survives
//! a crash, and no model call is paid twice.
//!
//! Inside a Restate handler, [`RestateJournal`] is the
//! [`Journal`](toolloop::run::Journal) of a run: each model call is one
//! journaled step (`ctx.run`, named `model call 3`), each tool execution one
//! step (`tool lookup call_7`), each approval a durable promise. When the
//! worker dies, Restate replays the invocation on another one: recorded
//! steps return their recorded outcome (the model is not called again, the
//! tool does not run again), and the run continues from where it was.
//!
//! ```no_run
//! use restate_sdk::prelude::*;
//! use toolloop::{Agent, Conversation};
//! use toolloop_restate::{RestateJournal, ToolApprovals};
//!
//! struct Research {
//!     agent: Agent,
//! }
//!
//! #[restate_sdk::service]
//! impl Research {
//!     #[handler]
//!     async fn ask(&self, ctx: Context<'_>, question: String) -> HandlerResult<String> {
//!         let mut conversation = Conversation::new();
//!         conversation.push_user(question);
//!         let journal = RestateJournal::new(&ctx);
//!         Ok(journal.run(&self.agent, &mut conversation).await?.output)
//!     }
//! }
//!
//! # async fn serve(agent: Agent) {
//! let endpoint = Endpoint::builder().bind(Research { agent }).bind(ToolApprovals).build();
//! HttpServer::new(endpoint).listen_and_serve("0.0.0.0:9080".parse().unwrap()).await;
//! # }
//! ```
//!
//! # Guarantees
//!
//! - A step that completed (its outcome acknowledged by the Restate
//!   server) is never done again: a model call is paid once, a tool runs
//!   once.
//! - A step that did not complete before a crash is done again on replay:
//!   tools run *at least once*. A tool that changes the world passes
//!   [`idempotency_key`] (the invocation id and the call id, the same on
//!   every attempt) to the system it changes.
//! - The run is deterministic given its journal (toolloop pins this with a
//!   property test): the agent's setup, policies and validators must not
//!   change between a crash and the replay.
//!
//! # What a durable run streams
//!
//! Nothing token by token: a step's outcome is recorded whole, so a
//! durable run is run with [`Agent::run_journaled`](toolloop::Agent::run_journaled),
//! not streamed. Its progress is visible in Restate (each step by name in
//! the invocation's journal), in the run's hooks and tracing spans (a
//! replayed step's `chat` or `execute_tool` span carries
//! `toolloop.replayed = true` and is not counted in the metrics again), and
//! in [`ToolApprovals`] for pending approvals.
//!
//! # Runs that pause
//!
//! A call governance [asks](toolloop::run::Decision::Ask) about waits
//! inside the invocation, as a durable promise ([`ToolApprovals`]). A run
//! that *pauses* instead (a call that
//! [needs approval](toolloop::run::Governance::needs_approval), an
//! [external tool](toolloop::AgentBuilder::external_tool),
//! [`Decision::Defer`](toolloop::run::Decision::Defer)) ends the
//! invocation: [`RestateJournal::run`] returns [`DurableError::Run`] whose
//! run error [`is_deferred`](toolloop::RunError::is_deferred) (a 409
//! terminal error through `?`), and the conversation holds the calls that
//! wait. Keep it (in Restate state, say) and finish it in a later
//! invocation with [`RestateJournal::resume`] and a
//! [`Resolution`](toolloop::run::Resolution) per call; [`Session`] does
//! both (its `pending` and `resume` handlers).
//!
//! # The journal format
//!
//! Each step records toolloop's recorded form
//! ([`journal::encode`](toolloop::run::journal::encode), `{"format": 1, "value": …}`).
//! A toolloop that reads another format, or a record that no longer
//! deserializes, stops the run with a terminal error naming the step
//! ([`DurableError::Journal`]); the run is never continued on a journal it
//! cannot read. Finish (or cancel) the invocations of a deployment before
//! upgrading to a toolloop with another
//! [`JOURNAL_FORMAT`](toolloop::run::journal::JOURNAL_FORMAT), as Restate
//! recommends for any change to a handler's steps (register the new worker
//! as a new deployment; in-flight invocations stay on the old one).

#![forbid(unsafe_code)]

mod approvals;
mod context;
mod journal;
mod key;
mod run;
mod session;

pub use approvals::{ApprovalDecision, ApprovalExpiry, PendingApproval, ToolApprovals};
pub use context::DurableContext;
pub use journal::{DEFAULT_STEP_ATTEMPTS, RestateJournal};
pub use key::idempotency_key;
pub use run::DurableError;
pub use session::Session;

use toolloop::model::BoxFuture;
