//! # The guide
//!
//! Chapters on each part of toolloop, each with code that compiles and runs
//! (as doctests). The repository's README is the ten-minute tour; this is
//! where the details live.
//!
//! | chapter | what it covers |
//! |---|---|
//! | this page | how a run is layered; migrating from a hand-written loop; terminal checks, iteration limits, validation retries, cancellation, budgets; [testing your agents](#test-your-agents) with scripted models and cassettes |
//! | [`tools`] | `#[derive(Tool)]`, failures as results, a [`ToolSet`](crate::ToolSet) on its own, tools with state (`tool_with_state`), the type of a typed reflective agent (`Agent<Offer, Reflective>`) |
//! | [`compile_errors`] | the mistakes the compiler and `build()` reject, and what they say |
//! | [`structured_output`] | a typed output through the output tool, the provider's native schema, or JSON in the answer |
//! | [`reasoning`] | one reasoning setting for every provider; what each sends and keeps; switching providers |
//! | [`streaming`] | a run as a stream of events; server-sent events for a web UI |
//! | [`context`] | prompt caching, the context window, compaction |
//! | [`approvals`] | runs that pause for a person or the caller; conversation stores |
//! | [`sub_agents`] | agents as tools of other agents |
//! | [`mcp`] | tools from MCP servers, and serving yours |
//! | [`observability`] | hooks, logs, OpenTelemetry spans and metrics |
//! | [`durable`] | durable runs on Restate (`toolloop-restate`) |
//! | [`performance`] | what the loop costs beside a hand-written one |
//!
//! ## How a run is layered
//!
//! An **iteration** is one model call plus every tool call of its response,
//! executed in order, with all results fed back in one message. An
//! **attempt** runs iterations until the model produces an output; the
//! output is then deserialised (errors name the field path), checked
//! against its schema's constraints, and passed to your validators. A
//! failed attempt feeds the errors back into the same conversation and
//! starts the next one. With **reflection**, each proposed output is shown
//! back to the model through your handler, and the model calls the
//! framework's `submit` tool when it is done.
//!
//! Every result, `Ok` or `Err`, carries the run's metadata: usage summed
//! over all iterations and attempts, attempts, iterations, model calls,
//! tool calls, elapsed time, why the run ended, and errors from your hooks.
//! *Why the run ended* is one vocabulary,
//! [`run::Termination`](crate::run::Termination), for agents and loops,
//! successes (`Output`, `Answer`, `Signal`) and stops (`MaxIterations`,
//! `MaxDuration`, `TokenBudget`, `Cancelled`, `ModelError`,
//! `ValidationFailed`, ...) alike. A failed run is a
//! [`RunError`](crate::RunError): its `termination()`, its `metadata()`,
//! and its `source()` — the model error, say — while the conversation you
//! passed holds everything done so far, every tool call answered.
//!
//! - **The conversation never dangles.** Every stop — iteration limit,
//!   model-call or tool-execution budget, time limit (`max_duration`),
//!   token budget, consecutive tool failures, a denied tool under a stop
//!   policy, cancellation — goes through one path that answers every
//!   pending tool call, so the history can always be sent again. Dropping
//!   the run's future leaves it consistent too.
//! - **Text or typed.** Text agents end when the model answers without
//!   tools (optionally after a double-confirmation round), or when your
//!   terminal check sees a tool result that should end the run with a
//!   signal, and an iteration-limit hook can grant more budget. Typed agents
//!   end through their output tool, validate, and retry with feedback.
//! - **Governance.** A policy before each tool call allows it, denies it
//!   with a reason (the model sees a `denied` error result), defers it to a
//!   person ([`approvals`]), or asks an async approver; an audit event
//!   follows each execution.
//! - **Cancellation.** A [`CancellationToken`](crate::CancellationToken)
//!   stops a run promptly, also while a model call or a tool is in flight;
//!   the error says which phase it stopped in.
//! - **Providers.** Anthropic Messages, OpenAI Chat Completions (and any
//!   OpenAI-compatible server by base URL: vLLM, llama.cpp, LM Studio,
//!   OpenRouter, Groq...), the OpenAI Responses API, Ollama and Gemini, over
//!   reqwest + tokio, with their real wire formats, typed errors, and
//!   retries as the official SDKs do them. Each has `from_env()` and a
//!   builder (`Anthropic::builder()`, or `Anthropic::builder_from_env()` to
//!   start from the environment: `api_key`, `base_url`, `model`,
//!   `max_tokens`, `temperature`, `timeout`, `retry_policy`, extra headers);
//!   [`providers::from_env()`](crate::providers::from_env) picks whichever
//!   provider the environment configures, and
//!   [`from_env_or(offline_model)`](crate::providers::from_env_or) falls
//!   back to a model of yours. [`Fallback`](crate::providers::Fallback)
//!   moves to a second model on persistent errors; switching models
//!   mid-conversation works because each request is a view of the history
//!   built for its provider.
//!
//! ## The loop without an agent
//!
//! [`run::ToolLoop`](crate::run::ToolLoop) is the iteration loop on its
//! own, for agents whose end is decided by a tool rather than a typed
//! output: a terminal check over each executed batch returns your signal
//! (say, the id in a `spec_submit` result), and an iteration-limit hook may
//! grant more iterations or end with a signal. It returns the same
//! `RunOutput` (its output a `LoopOutput`: the answer or your signal) and
//! `RunError` as an agent.
//!
//! ## Migrating from a hand-written loop
//!
//! Most applications that let a model call tools start with a loop like
//! this one (in whatever language), and then grow it:
//!
//! ```text
//! messages = [system, user]                         // history
//! total_tokens = 0
//! for i in 0..MAX_ITERATIONS {                      // iteration limit
//!     if abort_signal.aborted() { break }           // cancellation
//!     if DEBUG_LLM { print(messages) }              // logging
//!     response = llm.create(messages, tools)
//!     total_tokens += response.usage                // token accounting
//!     messages.push(response.message)
//!     if response.tool_calls.empty() { return response.text }
//!     for call in response.tool_calls {             // dispatch by name
//!         result = match call.name {
//!             "search" => search(parse(call.arguments)),
//!             _        => "unknown tool",
//!         } catch e { "Error: " + e }               // error formatting
//!         messages.push(tool_result(call.id, result))
//!     }
//!     if check_terminal(response.tool_calls) { return ... }  // CheckTerminal
//! }
//! on_iteration_limit()                              // OnIterationLimit
//! // ... then parse the answer as JSON, validate it, and if it is wrong
//! // push "fix these errors" and run the whole loop again.
//! ```
//!
//! Each part of it has a counterpart in toolloop, written once and tested
//! for the cases hand-written copies tend to miss (a `break` that leaves a
//! tool call without a result, a crash on malformed arguments, usage lost
//! when the run fails, history one provider rejects after another wrote it).
//!
//! | Your loop | toolloop |
//! |---|---|
//! | `messages: Vec<_>` you push to | [`Conversation`](crate::Conversation): yours, append-only, serde. Pass the same one to every run for a conversational agent, a fresh one per request for a stateless one. |
//! | `for i in 0..MAX_ITERATIONS` | [`max_iterations`](crate::AgentBuilder::max_iterations) (per attempt), with [`max_model_calls`](crate::AgentBuilder::max_model_calls), [`max_tool_executions`](crate::AgentBuilder::max_tool_executions), [`max_duration`](crate::AgentBuilder::max_duration), set on the builder (or a [`ToolLoop`](crate::run::ToolLoop)). |
//! | tool schemas written by hand, `match call.name { .. }` | `#[derive(Tool)]` on a struct of arguments, [`.tool::<T>()`](crate::AgentBuilder::tool) or a [`ToolSet`](crate::ToolSet); tools with state via `#[tool(state = ..)]`. |
//! | `parse(call.arguments)` | Generated: argument errors name the field and reach the model as an error result it can correct. |
//! | `catch e { "Error: " + e }` | Your handler's error type's `Display` is the error result's text; panics, timeouts and unknown tools become error results too, each with a [`FailureKind`](crate::FailureKind). |
//! | `check_terminal(calls)` (`CheckTerminal`) | [`terminal_check`](crate::AgentBuilder::terminal_check) over the executed batch ([`ToolExecution`](crate::tool::ToolExecution): call, result, structured output); its signal ends the run. [`ToolLoop`](crate::run::ToolLoop) takes any signal type. |
//! | `on_iteration_limit()` (`OnIterationLimit`) | [`on_iteration_limit`](crate::AgentBuilder::on_iteration_limit): [`LimitDecision`](crate::run::LimitDecision)`::Extend(n)`, `Signal(signal)` or `MaxIterations`. |
//! | "are you sure you are done?" | [`double_confirmation`](crate::AgentBuilder::double_confirmation). |
//! | `total_tokens += usage` | [`RunMetadata::usage`](crate::run::RunMetadata), summed over iterations and attempts, on success and on [`RunError::metadata`](crate::RunError::metadata); [`token_budget`](crate::AgentBuilder::token_budget) stops a run. |
//! | `abort_signal` | A [`CancellationToken`](crate::CancellationToken) ([`run_with_cancel`](crate::Agent::run_with_cancel) or [`cancel_token`](crate::AgentBuilder::cancel_token)), or dropping the run future; the error says which [`Phase`](crate::run::Phase) was interrupted. |
//! | `break` out of the loop | Every stop answers the pending tool calls with `not_executed` results, so the conversation can be sent again ([`Conversation::unanswered_tool_calls`](crate::Conversation::unanswered_tool_calls)). |
//! | parse JSON, validate, "fix these errors", run again | [`output::<T>()`](crate::AgentBuilder::output), [`validator`](crate::AgentBuilder::validator), [`async_validator`](crate::AgentBuilder::async_validator), [`max_attempts`](crate::AgentBuilder::max_attempts): each failure is fed back and the next attempt starts in the same conversation. |
//! | `if DEBUG_LLM { print(messages) }` | `tracing`: `RUST_LOG=toolloop=debug` logs a summary of every request and response (roles, block kinds, tool call ids and names; never contents or keys), `RUST_LOG=toolloop=trace` every request, response, tool call and result with contents (never keys). Hooks ([`on_event`](crate::AgentBuilder::on_event), [`on_tool_execution_finished`](crate::AgentBuilder::on_tool_execution_finished), ...) for your own output. |
//! | `if name == "drop_table" { refuse }` | [`Governance`](crate::run::Governance): a policy per call (allow, deny, ask an async approver), and an audit record for every call (its [`Event::ToolExecutionFinished`](crate::run::Event::ToolExecutionFinished), serialised). |
//! | "stop when tools keep failing" | [`max_consecutive_tool_failures`](crate::AgentBuilder::max_consecutive_tool_failures), [`stop_on_failed_tool`](crate::AgentBuilder::stop_on_failed_tool), [`stop_on_denied_tool`](crate::AgentBuilder::stop_on_denied_tool). |
//! | `join_all(calls)` | [`parallel_tool_calls`](crate::AgentBuilder::parallel_tool_calls): bounded, results kept in call order. |
//! | a second client when the first is down | [`providers::Fallback`](crate::providers::Fallback); switching models mid-conversation works because each request is a [view](crate::Conversation::view_for) for its provider. |
//! | mocking the HTTP client in tests | [`testing::ScriptedModel`](crate::testing::ScriptedModel) (a script, or [`from_fn`](crate::testing::ScriptedModel::from_fn) a closure): script the model, then assert on the requests it received. |
//!
//! ## The loop, with a terminal check and an iteration-limit hook
//!
//! A text agent: the run ends when the model answers without tool calls,
//! or when the terminal check returns a signal (here the id `spec_submit`
//! returned), or when the iteration-limit hook ends it.
//!
//! ```
//! use toolloop::run::LimitDecision;
//! use toolloop::testing::ScriptedModel;
//! use toolloop::prelude::*;
//!
//! /// Submit the finished spec. Returns its id.
//! #[derive(toolloop::Tool)]
//! struct SpecSubmit {
//!     /// The spec's title.
//!     title: String,
//! }
//!
//! impl SpecSubmit {
//!     async fn run(self) -> Result<String, std::convert::Infallible> {
//!         Ok(format!("SPEC-1 ({})", self.title))
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // Stands in for a real provider, e.g. `toolloop::providers::anthropic::Anthropic::from_env()?`.
//! let model = ScriptedModel::new()
//!     .respond(ModelResponse::from_tool_calls([ToolCall::new("1", "spec_submit", serde_json::json!({"title": "Export"}))]));
//!
//! let agent = Agent::builder()
//!     .model(model)
//!     .system("You write specs.")
//!     .tool::<SpecSubmit>()
//!     .max_iterations(10)
//!     // CheckTerminal:
//!     .terminal_check(|batch| {
//!         let submitted = batch.iter().find(|done| done.call.name == "spec_submit" && !done.result.is_error())?;
//!         Some(submitted.result.content.clone())
//!     })
//!     // OnIterationLimit: five more iterations, once.
//!     .on_iteration_limit(|limit| {
//!         if limit < 15 { LimitDecision::Extend(5) } else { LimitDecision::MaxIterations }
//!     })
//!     .build()?;
//!
//! let mut conversation = Conversation::new(); // keep it for the next run, or drop it
//! conversation.push_user("Spec the CSV export.");
//! let done = agent.run(&mut conversation).await?;
//! assert_eq!(done.output, "SPEC-1 (Export)");
//! println!("{} tokens over {} iterations", done.metadata.usage.total(), done.metadata.iterations);
//! # Ok(())
//! # }
//! ```
//!
//! ## Retry on validation
//!
//! Instead of parsing the answer yourself and looping on errors, give the
//! agent an output type. The model answers by calling an output tool whose
//! schema is the type's; the output is deserialised, checked against the
//! schema's constraints and your validators, and every error is fed back
//! for the next attempt.
//!
//! ```
//! use toolloop::testing::ScriptedModel;
//! use toolloop::prelude::*;
//!
//! #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
//! struct Estimate {
//!     /// Days of work.
//!     days: u32,
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let answer = |id: &str, days: u32| {
//!     ModelResponse::from_tool_calls([ToolCall::new(id, "final_output", serde_json::json!({"days": days}))])
//! };
//! let model = ScriptedModel::new().respond(answer("1", 0)).respond(answer("2", 3));
//!
//! let agent = Agent::builder()
//!     .model(model.clone())
//!     .output::<Estimate>()
//!     .validator(|estimate: &Estimate| if estimate.days > 0 { Ok(()) } else { Err("days must be at least 1") })
//!     .max_attempts(3)
//!     .build()?;
//!
//! let mut conversation = Conversation::new();
//! conversation.push_user("How long will the export take?");
//! let done = agent.run(&mut conversation).await?;
//! assert_eq!(done.output.days, 3);
//! assert_eq!(done.metadata.attempts, 2);
//! // The second request carried the verdict, as the output call's error result.
//! let verdict = model.requests()[1].last_tool_result().unwrap().clone();
//! assert!(verdict.is_error() && verdict.content.contains("days must be at least 1"));
//! # Ok(())
//! # }
//! ```
//!
//! ## Cancellation, budgets, and what a failed run still tells you
//!
//! A failed run returns a [`RunError`](crate::RunError) with the same
//! metadata as a successful one, and the conversation holds everything done
//! so far.
//!
//! ```
//! use toolloop::testing::ScriptedModel;
//! use toolloop::run::{Phase, Termination};
//! use toolloop::prelude::*;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let agent = Agent::builder().model(ScriptedModel::new().hang()).token_budget(50_000).build()?;
//! let cancel = CancellationToken::new();
//! let trigger = cancel.clone();
//! tokio::spawn(async move { trigger.cancel() }); // your abort signal, from anywhere
//!
//! let mut conversation = Conversation::new();
//! conversation.push_user("Summarise the logs.");
//! let error = agent.run_with_cancel(&mut conversation, &cancel).await.unwrap_err();
//! // Where it stopped: attempt, iteration and phase.
//! assert_eq!(error.termination(), &Termination::Cancelled { attempt: 1, iteration: 1, phase: Phase::ModelCall });
//! println!("used {} tokens before: {error}", error.metadata().usage.total());
//! assert!(conversation.unanswered_tool_calls().is_empty());
//! # Ok(())
//! # }
//! ```
//!
//! ## Keeping your own outer loop
//!
//! When the agent's attempts are not what you need, [`ToolLoop`](crate::run::ToolLoop)
//! is the iteration loop alone: model call, the whole batch of tool calls,
//! terminal check, repeat. Its terminal signal can be any type.
//!
//! ```
//! use toolloop::run::{LoopOutput, ToolLoop};
//! use toolloop::testing::ScriptedModel;
//! use toolloop::prelude::*;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let model = ScriptedModel::new().respond(ModelResponse::from_text("done"));
//! let mut tool_loop = ToolLoop::new(model, ToolSet::new())
//!     .max_iterations(5)
//!     .terminal_check(|batch| batch.iter().any(|done| done.call.name == "finish").then_some(()));
//! let mut conversation = Conversation::new();
//! conversation.push_user("Go.");
//! let done = tool_loop.run(&mut conversation).await?;
//! assert_eq!(done.output, LoopOutput::Answer("done".to_owned()));
//! # Ok(())
//! # }
//! ```
//!
//! ## Test your agents
//!
//! The test models in [`testing`](crate::testing) need no network:
//! [`ScriptedModel`](crate::testing::ScriptedModel) plays a script of
//! responses (and fails loudly when the run asks for more), or answers with
//! a closure ([`ScriptedModel::from_fn`](crate::testing::ScriptedModel::from_fn)),
//! and records every request.
//!
//! ```
//! use toolloop::testing::ScriptedModel;
//! use toolloop::prelude::*;
//!
//! #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
//! struct Verdict {
//!     approve: bool,
//! }
//!
//! # tokio_test::block_on(async {
//! let call = |id, input| ModelResponse::from_tool_calls([ToolCall::new(id, "final_output", input)]);
//! let model = ScriptedModel::from_responses([
//!     call("1", serde_json::json!({"approve": "yes"})), // wrong type: fed back as an error
//!     call("2", serde_json::json!({"approve": true})),
//! ]);
//! let agent = Agent::builder().model(model.clone()).output::<Verdict>().build()?;
//!
//! let mut conversation = Conversation::new();
//! conversation.push_user("Review this change.");
//! let done = agent.run(&mut conversation).await?;
//!
//! assert!(done.output.approve);
//! assert_eq!(done.metadata.attempts, 2);
//! model.assert_consumed();
//! // The second request showed the model what was wrong with the first output,
//! // as the error result of its output call.
//! let verdict = model.requests()[1].last_tool_result().unwrap().clone();
//! assert!(verdict.is_error() && verdict.content.contains("approve"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! ### Cassettes: a real model's answers, replayed
//!
//! [`ScriptedModel`](crate::testing::ScriptedModel) tests the loop with
//! answers you write. To test your agent against what a real model says,
//! without calling it on every run, give the provider a
//! [`Cassette`](crate::testing::Cassette): record once, replay forever.
//!
//! - `TOOLLOOP_RECORD=1 ANTHROPIC_API_KEY=... cargo test my_test` calls the
//!   real API and writes its exchanges to the cassette file when the test
//!   ends (one file per test; a test that fails keeps the old file): the
//!   request body, the response status, a safe subset of headers, the
//!   response body (or a stream as its list of events). API keys,
//!   `authorization`, `x-api-key`, `x-goog-api-key`, the values of your own
//!   extra headers named as credentials (`x-gateway-token`, say), key
//!   parameters in URLs and URL passwords never reach the file; request
//!   ids are normalised. Commit the file.
//! - `cargo test` (and CI) replays it: each request must equal a recorded
//!   one (the first not played yet that it equals), and gets its response. Nothing is sent, no key
//!   is needed, streamed calls stream the recorded events. Signatures,
//!   encrypted reasoning and tool-call ids go back exactly as recorded.
//! - A request that differs (its path, body or recorded headers) fails
//!   with the differences by JSON pointer;
//!   when a field changes from run to run by design, ignore it with
//!   [`ignore_field`](crate::testing::Cassette::ignore_field) or
//!   [`ignore_pointer`](crate::testing::Cassette::ignore_pointer).
//!   (A server that sends tool calls without ids, as some OpenAI-compatible
//!   servers do, gets ids toolloop makes from the clock: ignore
//!   `/body/messages/*/tool_calls/*/id` and `tool_call_id`.)
//!   A run that makes fewer calls than were recorded fails when the
//!   cassette is dropped or [finished](crate::testing::Cassette::finish),
//!   unless [`allow_unplayed`](crate::testing::Cassette::allow_unplayed).
//!   A missing cassette says how to record it.
//!
//! Cassettes work for every provider, streamed or not. The file is JSON,
//! versioned, pretty-printed so that a re-recording reads as a diff; here
//! is one, written by hand, replayed by an agent:
//!
//! ```
//! use toolloop::providers::anthropic::Anthropic;
//! use toolloop::testing::Cassette;
//! use toolloop::prelude::*;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let path = std::env::temp_dir().join(format!("toolloop-guide-{}.json", std::process::id()));
//! std::fs::write(&path, serde_json::json!({
//!     "format": "toolloop-cassette",
//!     "version": 1,
//!     "interactions": [{
//!         "request": {
//!             "method": "POST",
//!             "url": "https://api.anthropic.com/v1/messages",
//!             "body": {
//!                 "model": "claude-sonnet-4-5", "max_tokens": 4096,
//!                 "system": [{"type": "text", "text": "Answer in French.", "cache_control": {"type": "ephemeral"}}],
//!                 "messages": [{"role": "user", "content": [
//!                     {"type": "text", "text": "Say hello.", "cache_control": {"type": "ephemeral"}}]}]
//!             }
//!         },
//!         "response": {
//!             "status": 200,
//!             "headers": {"content-type": "application/json"},
//!             "body": {
//!                 "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
//!                 "content": [{"type": "text", "text": "Bonjour !"}],
//!                 "stop_reason": "end_turn", "usage": {"input_tokens": 12, "output_tokens": 4}
//!             }
//!         }
//!     }]
//! }).to_string())?;
//!
//! // In your tests, `Cassette::open(path)`: TOOLLOOP_RECORD decides the mode.
//! let replay = || Cassette::replay(&path);
//! let cassette = replay()?;
//! let model = Anthropic::builder().cassette(&cassette).build()?; // no key: nothing is sent
//! let agent = Agent::builder().model(model).system("Answer in French.").build()?;
//! let mut conversation = Conversation::new();
//! conversation.push_user("Say hello.");
//! assert_eq!(agent.run(&mut conversation).await?.output, "Bonjour !");
//! cassette.finish()?;
//!
//! // The agent changed what it asks: the replay says where.
//! let cassette = replay()?;
//! let model = Anthropic::builder().cassette(&cassette).build()?;
//! let agent = Agent::builder().model(model).system("Answer in French.").build()?;
//! let mut conversation = Conversation::new();
//! conversation.push_user("Say goodbye.");
//! assert!(agent.run(&mut conversation).await.is_err());
//! let mismatch = cassette.finish().unwrap_err().to_string();
//! assert!(mismatch.contains(
//!     r#"/body/messages/0/content/0/text: recorded "Say hello.", sent "Say goodbye.""#
//! ));
//! # std::fs::remove_file(&path)?;
//! # Ok(())
//! # }
//! ```
//!
//! In your own tests, open the cassette by its path and let
//! `TOOLLOOP_RECORD` decide the mode; the provider's builder takes its key
//! from the environment when recording, and needs none to replay:
//!
//! ```no_run
//! # use toolloop::providers::anthropic::Anthropic;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let cassette = toolloop::testing::Cassette::open("tests/cassettes/my_agent.json")?;
//! let model = Anthropic::builder_from_env().cassette(&cassette).build()?; // replay needs no key
//! // ... run the agent on `model`, assert on its output ...
//! cassette.finish()?;
//! # Ok(()) }
//! ```
//!
//! `tests/cassette_example.rs` in the repository is a whole test to copy,
//! with its recorded cassette.
//!
//! ## Where to look next
//!
//! The chapters in the table at the top of this page, and the examples in
//! the repository's `examples/` directory (listed in its README), each of
//! which runs offline on a scripted model: `cargo run --example quickstart`.

pub mod approvals;
pub mod compile_errors;
pub mod context;
pub mod durable;
pub mod mcp;
pub mod observability;
pub mod performance;
pub mod reasoning;
pub mod streaming;
pub mod structured_output;
pub mod sub_agents;
pub mod tools;
