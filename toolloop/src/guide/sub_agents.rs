//! # Agents as tools
//!
//! An orchestrator that delegates research and writing to specialised
//! agents is a tool-calling loop whose tools are other loops.
//! [`Agent::as_tool`](crate::Agent::as_tool) makes one agent a tool of
//! another: each call of the tool runs the agent (a *sub-run*) and returns
//! its output as the call's result. Done by hand (a tool that calls
//! `agent.run`), the sub-run's usage is lost, the parent's cancellation and
//! time limit do not reach it, and its trace does not nest; through
//! [`AgentTool`](crate::agent::AgentTool) they do.
//!
//! ```
//! use toolloop::testing::ScriptedModel;
//! use toolloop::prelude::*;
//!
//! /// What the writer is given.
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Brief {
//!     /// The topic.
//!     topic: String,
//!     /// The facts to use.
//!     facts: Vec<String>,
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let researcher = Agent::builder()
//!     .name("researcher")
//!     .model(ScriptedModel::new().respond(ModelResponse::from_text("Berlin: 3.7M. Paris: 2.1M.").with_usage(Usage::new(50, 10))))
//!     .system("Find facts; report them briefly.")
//!     .build()?;
//! let writer = Agent::builder()
//!     .name("writer")
//!     .model(ScriptedModel::new().respond(ModelResponse::from_text("Berlin is larger.").with_usage(Usage::new(40, 5))))
//!     .build()?;
//! let orchestrator = Agent::builder()
//!     .name("orchestrator")
//!     .model(ScriptedModel::from_responses([
//!         ModelResponse::from_tool_calls([ToolCall::new("r1", "research", serde_json::json!({"prompt": "Populations of Paris and Berlin?"}))]),
//!         ModelResponse::from_tool_calls([ToolCall::new("w1", "write", serde_json::json!({"topic": "size", "facts": ["Berlin 3.7M", "Paris 2.1M"]}))]),
//!         ModelResponse::from_text("Berlin is larger."),
//!     ]))
//!     .tool_dyn(researcher.as_tool("research", "Find facts. Give it a precise question.").into())
//!     .tool_dyn(
//!         writer
//!             .as_tool("write", "Write an article from a topic and facts.")
//!             .input::<Brief>()
//!             .render(|brief: &Brief| format!("Write about {}.\nFacts: {}", brief.topic, brief.facts.join("; ")))
//!             .into(),
//!     )
//!     .token_budget(10_000) // counts the sub-runs' tokens too
//!     .build()?;
//!
//! let mut conversation = Conversation::new();
//! conversation.push_user("Which is larger, Paris or Berlin?");
//! let done = orchestrator.run(&mut conversation).await?;
//! assert_eq!(done.metadata.usage.total(), 105);
//! let agents: Vec<_> = done.metadata.sub_runs.iter().map(|run| run.agent.as_str()).collect();
//! assert_eq!(agents, ["researcher", "writer"]);
//! # Ok(())
//! # }
//! ```
//!
//! ## The tool
//!
//! - **Name and description** are required, as for every tool: they are
//!   what the parent model decides by. Say what the agent does and what to
//!   give it; the sub-agent sees nothing of the parent's conversation.
//! - **Input.** A prompt by default (`{"prompt": "..."}`: the task, with
//!   everything the sub-agent needs to know). [`input::<T>()`](crate::agent::AgentTool::input)
//!   takes any `Deserialize + JsonSchema` type instead: the parent model is
//!   shown its schema, arguments that do not fit are an
//!   [`InvalidArguments`](crate::FailureKind::InvalidArguments) error result
//!   (no sub-run starts), and the input becomes the sub-agent's first user
//!   message, as pretty JSON or as [`render`](crate::agent::AgentTool::render)
//!   writes it.
//! - **Result.** A text agent's answer, or a typed agent's output as JSON
//!   (its output type must be `Serialize`).
//! - **Conversation.** Fresh for each call. With
//!   [`keep_conversation`](crate::agent::AgentTool::keep_conversation), one
//!   conversation is kept across the calls of that tool within one parent
//!   run (every attempt of it), so the sub-agent remembers earlier calls;
//!   it is dropped when the parent run ends, and a new parent run starts
//!   afresh.
//!
//! ## What a sub-run inherits
//!
//! The engine gives every tool call a [`ToolContext`](crate::ToolContext)
//! (the call id, the tool, the run's cancellation token, the call's
//! deadline, the tokens left in the run's budget, the nesting depth); an
//! agent tool runs its agent within it:
//!
//! | The parent's | The sub-run |
//! |---|---|
//! | cancellation token | runs on a child of it: cancelling the parent cancels the sub-run (the sub-agent's own [`cancel_token`](crate::AgentBuilder::cancel_token), if any, cancels only the sub-run) |
//! | [`max_duration`](crate::AgentBuilder::max_duration), tool timeout | its own `max_duration` is cut to the time the call has left (the earlier of the end of the parent's `max_duration` and the tool's [timeout](crate::agent::AgentTool::timeout)) |
//! | [`token_budget`](crate::AgentBuilder::token_budget) | its own budget is cut to what the parent had left when the call's batch started; the parent's budget counts what the sub-run used |
//! | governance and hooks | apply to the call like any tool call: a denied call starts no sub-run; `on_tool_execution_started` and `on_tool_execution_finished` (the call's audit record) see it |
//! | nesting depth | a call nested [`max_depth`](crate::agent::AgentTool::max_depth) tool calls deep (default [`DEFAULT_MAX_DEPTH`](crate::agent::DEFAULT_MAX_DEPTH)) is refused with a [`Rejected`](crate::FailureKind::Rejected) error result naming the chain (`delegate → delegate → delegate`), so an agent that calls itself, directly or through others, ends |
//!
//! ## Failures
//!
//! A sub-run that fails (its own limits, a model error, validation
//! exhausted, cancelled through its own token) is an error result
//! ([`ToolFailed`](crate::FailureKind::ToolFailed)) naming its termination:
//! ``agent `researcher` ended without a result (max_model_calls): reached
//! the limit of 3 model calls``. The parent model reads it and goes on;
//! nothing panics and the parent's conversation stays valid. When the
//! parent itself stops (cancelled, out of time) while a sub-run is in
//! flight, the call is answered `not_executed` as any interrupted call is,
//! and the sub-run is still listed with what it had done.
//!
//! ## Usage and metadata
//!
//! The parent's [`RunMetadata`](crate::run::RunMetadata) lists each sub-run
//! in [`sub_runs`](crate::run::RunMetadata::sub_runs), in call order: the
//! tool call id, the agent's name, and the sub-run's own metadata (its
//! termination, usage, counts, and its own sub-runs). Its usage, model
//! calls and tool calls are added to the parent's totals, so `usage` is
//! what the whole tree cost, and the parent's `token_budget` and
//! `max_model_calls` count the sub-runs. `attempts` and `iterations` stay
//! the parent's own. A sub-run cut short from outside (the parent cancelled
//! or out of time) reports the usage of the model calls that had answered.
//!
//! ## Streaming and traces
//!
//! A streamed parent ([`run_stream`](crate::Agent::run_stream)) streams its
//! sub-runs too: their events arrive as
//! [`Event::SubRun`](crate::run::Event::SubRun) `{ call_id, agent,
//! event }` between the call's `ToolExecutionStarted` and
//! `ToolExecutionFinished`, so a UI can show nested progress (a sub-run's
//! own sub-runs nest one level deeper). In traces, the sub-run's
//! `invoke_agent {name}` span is a child of the call's `execute_tool
//! {tool}` span, with its chats and tool calls beneath it.
//!
//! ## Durable runs
//!
//! Under a journal ([`run_journaled`](crate::Agent::run_journaled), and so
//! on Restate with `toolloop-restate`), an agent tool is a tool like any
//! other: its whole call, sub-run included, is **one** journaled step of
//! the parent (`tool research r1`). A sub-run that finished before a crash
//! is never run again: its answer is read back from the journal. A sub-run
//! cut by a crash runs again from its start (at least once, as every tool
//! step whose step did not complete), so its own model calls may be billed
//! twice in that case; the sub-run's calls are not journaled one by one.
//!
//! The next step (not built yet): the run's journal joins the
//! [`ToolContext`](crate::ToolContext) the way [`depth`](crate::ToolContext::depth)
//! and [`path`](crate::ToolContext::path) do, so that a sub-run journals
//! its own model and tool calls as steps **of the parent's invocation**,
//! named under the path and the call id that started it (`research#r1/…`):
//! deterministic across replays and unique, because call ids are unique
//! within a conversation. One invocation keeps one journal, replaying the
//! parent replays its sub-runs in place, and the agents need no
//! registration as services of their own. A sub-run that must outlive its
//! parent is better made a durable call to its own service.
//!
//! ## Your own nested tools
//!
//! A tool of your own can read its [`ToolContext`](crate::ToolContext) to
//! do what an agent tool does: stop when the run is cancelled, finish
//! before its deadline (the earlier of the run's `max_duration` and the tool's timeout), spend no more than the tokens left.
