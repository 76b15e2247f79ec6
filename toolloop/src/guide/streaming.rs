//! # Streaming a run
//!
//! `agent.run_stream(&mut conversation)` is the same run as `agent.run`, as
//! a stream of the run's [`Event`](crate::run::Event)s (the events hooks
//! see), then its result:
//!
//! ```no_run
//! use toolloop::prelude::*;
//! use toolloop::run::Event;
//!
//! async fn answer_live(agent: &Agent, conversation: &mut Conversation) -> Result<RunOutput<String>, RunError> {
//!     let mut stream = agent.run_stream(conversation);
//!     while let Some(event) = stream.next().await {
//!         match event {
//!             Event::TextDelta { text } => print!("{text}"),
//!             // A tool call's arguments as far as they have arrived, as JSON.
//!             Event::ToolCallArgumentsDelta { partial: Some(arguments), .. } => println!("\n{arguments}"),
//!             // The model call failed or was cancelled part-way: what it showed is void.
//!             Event::ModelCallDiscarded { .. } => println!("\n[discarded]"),
//!             _ => {}
//!         }
//!     }
//!     // Exactly what `agent.run` returns.
//!     stream.output().await
//! }
//! ```
//!
//! The events are text and reasoning deltas, a tool call's arguments
//! forming (each delta completed to a JSON value), tools running,
//! validation, and last `Event::RunFinished` with the run's
//! [`Termination`](crate::run::Termination); `stream.output()` then gives
//! exactly what `run` returns. When a model call fails or is cancelled part-way,
//! `ModelCallDiscarded` says to drop what was shown since the iteration
//! started (and carries the usage the call had reported); the conversation
//! never holds half a message. A typed agent's output streams as
//! `Event::OutputDelta` (see [`structured_output`](super::structured_output)),
//! and a sub-agent's events arrive tagged with the call that runs it (see
//! [`sub_agents`](super::sub_agents)).
//!
//! The HTTP providers stream from the wire (SSE or NDJSON), retry a failed
//! stream until its first content arrives (empty deltas are not content;
//! a stream that stalls before any content is retried once at most), and
//! time out a stalled stream (`idle_timeout`);
//! [`Model::stream`](crate::Model::stream) gives one model call's events on
//! their own.
//!
//! ## Server-sent events for a web UI
//!
//! Each run event maps to one server-sent event: `Event::name()` is the
//! `event:` line, a JSON object of its fields the `data:` line (see the
//! [`stream`](crate::stream) module, and `examples/streaming.rs`, whose
//! `-- --sse` prints a run that way).
//!
//! What streaming costs the client, per event, beside a hand-written
//! reqwest + SSE loop is measured in the repository's `BENCHMARKS.md`
//! (section 8, `cargo bench -p toolloop --bench stream_overhead`).
