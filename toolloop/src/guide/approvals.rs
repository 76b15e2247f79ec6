//! # Pausing a run: approvals, external tools, and stores
//!
//! An [`Approver`](crate::run::Approver) answers while the run waits, in the
//! same process. Often nobody can answer that fast: a web app shows the
//! request to a person and returns; the person clicks tomorrow, on another
//! server. Or the tool itself runs elsewhere — in the user's browser, on a
//! device. For these, a run *pauses*: it ends with
//! [`Termination::Deferred`](crate::run::Termination::Deferred), leaves the
//! calls that wait in the conversation as pending, and is resumed later,
//! anywhere the conversation can be loaded.
//!
//! ## What defers a call
//!
//! - Governance: a policy returns [`Decision::Defer`](crate::run::Decision::Defer),
//!   or a tool is marked with [`Governance::needs_approval`](crate::run::Governance::needs_approval)
//!   (the policy can still deny its calls first). An in-process
//!   [`Approver`](crate::run::Approver) that cannot decide now (no operator
//!   online) answers [`Decision::Defer`](crate::run::Decision::Defer).
//! - An external tool: [`AgentBuilder::external_tool`](crate::AgentBuilder::external_tool)
//!   (or [`ToolSet::add_external`](crate::ToolSet::add_external)) offers the
//!   model a name, description and schema, with no handler; its calls
//!   always wait for the caller's result.
//!
//! The other calls of the same response run as usual (the default: the
//! model asked for them together, and a person then decides only what
//! needs deciding); call
//! [`hold_batch_on_deferral()`](crate::AgentBuilder::hold_batch_on_deferral)
//! on the builder to hold back the calls after a deferred one as well, so nothing runs
//! before it is resolved.
//!
//! A typed agent's output call (and `submit`, with reflection) waits with
//! the deferred calls of its response, wherever it is in it
//! ([`DeferralReason::Held`](crate::run::DeferralReason::Held)): the output
//! ends the run, so it is validated once they are resolved. Governance
//! decides it once: before the pause (the paused conversation keeps the
//! verdict), or after it when `hold_batch_on_deferral` held the call back
//! before governance saw it; it is answered, reported and counted once,
//! when the run is resumed.
//!
//! ## Pause, save, load, resume
//!
//! The paused run's error says what waits
//! ([`RunError::deferred_calls`](crate::RunError::deferred_calls): id, tool,
//! arguments, reason; serialisable), and so does the conversation
//! ([`Conversation::deferred_calls`](crate::Conversation::deferred_calls)).
//! Save the conversation; when the decision comes, load it and call
//! [`Agent::resume`](crate::Agent::resume) with a
//! [`Resolution`](crate::run::Resolution) per call.
//!
//! ```
//! use toolloop::run::{Governance, Resolution};
//! use toolloop::store::{ConversationStore, MemoryStore};
//! use toolloop::testing::ScriptedModel;
//! use toolloop::prelude::*;
//! use toolloop::FailureKind;
//! use toolloop::tool::ToolDefinition;
//!
//! /// Cancel a subscription.
//! #[derive(toolloop::Tool)]
//! struct Cancel {
//!     /// The customer.
//!     customer: String,
//! }
//!
//! impl Cancel {
//!     async fn run(self) -> Result<String, std::convert::Infallible> {
//!         Ok(format!("cancelled {}", self.customer))
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let model = ScriptedModel::new()
//!     .respond(ModelResponse::from_tool_calls([
//!         ToolCall::new("c1", "cancel", serde_json::json!({"customer": "ana"})),
//!         ToolCall::new("g1", "geolocation", serde_json::json!({})),
//!     ]))
//!     .respond(ModelResponse::from_text("Not cancelled; you are in Lyon."));
//! let geolocation = ToolDefinition::from_schema(
//!     "geolocation",
//!     "The user's position, from their browser.",
//!     serde_json::json!({"type": "object", "properties": {}}),
//! );
//! let agent = Agent::builder()
//!     .model(model)
//!     .tool::<Cancel>()
//!     .external_tool(geolocation)
//!     .governance(Governance::new().needs_approval("cancel"))
//!     .build()?;
//! let store = MemoryStore::new(); // `SqliteStore` with the `sqlite` feature
//!
//! // Request 1: run until something waits, save, answer the page.
//! let mut conversation = Conversation::new();
//! conversation.push_user("Cancel ana's subscription. Where am I?");
//! let paused = agent.run(&mut conversation).await.unwrap_err();
//! assert!(paused.is_deferred());
//! let waiting = serde_json::to_value(paused.deferred_calls())?; // for the page
//! assert_eq!(waiting[1]["reason"]["kind"], "external");
//! store.save("ana", &conversation, None).await?;
//!
//! // Request 2, maybe tomorrow, on another server: load, claim, resume, save.
//! let (mut stored, loaded) = store.load("ana").await?.expect("saved");
//! // The claim: a request that loaded the same version (a double click, a
//! // retry) now gets a `Conflict` before it runs anything.
//! let claimed = store.save("ana", &stored, Some(loaded)).await?;
//! let resolutions = [
//!     ("c1", Resolution::deny("the customer has an open invoice")),
//!     ("g1", Resolution::output("Lyon, France")),
//! ];
//! let done = agent.resume(&mut stored, resolutions).await;
//! // Saved however it ended (the approved calls ran), unless it was refused.
//! if !done.as_ref().is_err_and(|error| error.resume_error().is_some()) {
//!     store.save("ana", &stored, Some(claimed)).await?;
//! }
//! assert_eq!(done?.output, "Not cancelled; you are in Lyon.");
//!
//! // The model read the denial as an error result, and the browser's answer.
//! let results: Vec<_> = stored.messages()[2].tool_results().cloned().collect();
//! assert_eq!(results[0].failure, Some(FailureKind::ApprovalDenied));
//! assert_eq!(results[1].content, "Lyon, France");
//! # Ok(())
//! # }
//! ```
//!
//! The resumed run goes on exactly where the paused one stopped: the same
//! attempt and iteration, typed outputs validated, a reflection agent's
//! proposed output remembered (read back from the conversation), and its
//! limits and [metadata](crate::run::RunMetadata) counted over both
//! segments (the pause itself does not count toward
//! [`max_duration`](crate::AgentBuilder::max_duration)). Build the
//! agent the same way in the process that resumes. Streaming works the
//! same ([`Agent::resume_stream`](crate::Agent::resume_stream)); a streamed
//! run reports each deferred call as
//! [`Event::ToolCallDeferred`](crate::run::Event::ToolCallDeferred).
//!
//! ## What cannot go wrong
//!
//! A pending conversation cannot reach a model by mistake: `run` on it is
//! refused before any call ([`Termination::PendingCalls`](crate::run::Termination::PendingCalls)).
//! A resume whose resolutions do not fit — an unknown call id, a call
//! already answered, a missing or duplicate resolution, an output for a
//! call that only needed approval, or a conversation changed since the
//! pause — is refused with a [`ResumeError`](crate::run::ResumeError)
//! ([`RunError::resume_error`](crate::RunError::resume_error)), and the
//! conversation is left exactly as it was.
//!
//! ```
//! # use toolloop::run::{Governance, Resolution, ResumeError, Termination};
//! # use toolloop::testing::ScriptedModel;
//! # use toolloop::{Agent, Conversation, ModelResponse, ToolCall};
//! # /// Cancel a subscription.
//! # #[derive(toolloop::Tool)]
//! # struct Cancel { customer: String }
//! # impl Cancel { async fn run(self) -> Result<String, std::convert::Infallible> { Ok(String::new()) } }
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let model = ScriptedModel::new().respond(ModelResponse::from_tool_calls([
//! #     ToolCall::new("c1", "cancel", serde_json::json!({"customer": "ana"})),
//! # ]));
//! # let agent = Agent::builder().model(model).tool::<Cancel>()
//! #     .governance(Governance::new().needs_approval("cancel")).build()?;
//! # let mut conversation = Conversation::new();
//! # conversation.push_user("Cancel ana.");
//! # agent.run(&mut conversation).await.unwrap_err();
//! let again = agent.run(&mut conversation).await.unwrap_err();
//! assert_eq!(*again.termination(), Termination::PendingCalls { calls: 1 });
//!
//! let before = conversation.clone();
//! let refused = agent.resume(&mut conversation, [("c2", Resolution::Approve)]).await.unwrap_err();
//! assert_eq!(refused.resume_error(), Some(&ResumeError::UnknownCall { id: "c2".into() }));
//! assert_eq!(conversation, before);
//! # Ok(())
//! # }
//! ```
//!
//! ## Stores
//!
//! A [`ConversationStore`](crate::store::ConversationStore) keeps
//! conversations by session id with optimistic versions: each save names
//! the version it loaded, and a save over a newer one is a
//! [`StoreError::Conflict`](crate::store::StoreError::Conflict) — load
//! again and redo the turn — never a silent overwrite. A resume runs the
//! approved calls before it saves, so claim the paused conversation first
//! (save it back unchanged with the version loaded, as above), and save
//! what the resume left however it ended, unless it was refused: of two
//! requests resuming one session, the second then fails its claim and
//! runs nothing. A process that dies between the claim and the final save
//! leaves the session paused, and resuming it again runs the approved
//! calls again: give such tools an idempotency key, or run on
//! [Restate](super::durable), whose steps run once.
//! [`MemoryStore`](crate::store::MemoryStore) keeps them in process; with
//! the `sqlite` feature, `SqliteStore` keeps them in an embedded SQLite
//! file (compiled in; WAL mode; a versioned schema migrated on open), which
//! several processes can share. The repository's `approvals` example runs
//! the whole story across two processes:
//!
//! ```text
//! cargo run --example approvals              # pauses for approval, saves, exits
//! cargo run --example approvals -- approve   # loads, resumes, finishes
//! ```
