//! # Durable runs on Restate
//!
//! A run normally lives in one process: kill the process and the run is
//! gone, and starting it again pays every model call again. The
//! `toolloop-restate` crate (in this repository's workspace) runs any agent
//! inside a [Restate](https://restate.dev) handler, where each model call
//! and each tool execution is a journaled step: when a worker dies, Restate
//! replays the run on another one, and recorded steps return their recorded
//! outcome instead of calling the model or the tool again. Approvals wait
//! as durable promises (no worker held), and `Session` keeps a conversation
//! per session id (a run that pauses for calls the caller answers is
//! stored paused and finished by its `resume` handler; a handler of your
//! own resumes with `RestateJournal::resume`, built on
//! [`Agent::resume_journaled`](crate::Agent::resume_journaled)).
//!
//! ```ignore
//! #[restate_sdk::service]
//! impl Research {
//!     #[handler]
//!     async fn ask(&self, ctx: Context<'_>, question: String) -> HandlerResult<Json<Report>> {
//!         let mut conversation = Conversation::new();
//!         conversation.push_user(question);
//!         Ok(Json(RestateJournal::new(&ctx).run(&self.agent, &mut conversation).await?.output))
//!     }
//! }
//! ```
//!
//! (Not compiled here: toolloop does not depend on `toolloop-restate`;
//! `toolloop-restate/examples/research_worker.rs` is the whole worker, and
//! CI runs it.) Try it (the worker uses your `ANTHROPIC_API_KEY`,
//! `OPENAI_API_KEY` or `OLLAMA_HOST`, or an offline model):
//!
//! ```sh
//! npx @restatedev/restate-server                                  # the server: ingress :8080, admin :9070
//! cargo run -p toolloop-restate --example research_worker         # the worker, on :9080
//! curl localhost:9070/deployments --json '{"uri": "http://localhost:9080"}'   # register it
//! curl localhost:8080/Research/ask --json '"durable execution"'  # run the agent
//! curl localhost:8080/Research/ask/send --json '"crash recovery"'   # start one without waiting...
//! # ...kill the worker (Ctrl-C) during a lookup, start it again, and watch the run finish:
//! curl localhost:8080/restate/invocation/<invocationId>/attach
//! curl localhost:8080/Session/alice/message --json '"hello"'      # a session
//! ```
//!
//! `cargo run -p toolloop-restate --example research_worker -- --demo`
//! starts a Restate server itself (the one `.ci/install-restate` installs,
//! or `RESTATE_SERVER_BIN`), registers the worker, asks one question and
//! two session messages, and stops.
//! Under Restate a response's tool calls run in turn, in call order,
//! whatever [`parallel_tool_calls`](crate::AgentBuilder::parallel_tool_calls)
//! says: Restate's journal answers `false` to
//! [`Journal::parallel_steps`](crate::run::journal::Journal::parallel_steps).
//! Guarantees, the idempotency key tools get, approvals, and how the
//! journal format is versioned: the `toolloop-restate` crate docs
//! (`cargo doc -p toolloop-restate --open`) and
//! [`run::journal`](crate::run::journal).
