//! Streamed runs: the run's [events](crate::run::Event) as they happen,
//! then its result.
//!
//! A streamed run is the same run as a non-streamed one, driven by the
//! same engine: the engine reports each fact of the run once, as a
//! [`run::Event`](crate::run::Event) (the events hooks see too), and streams
//! the model's response instead of waiting for it, so the events include
//! the model's deltas. [`RunStream`] is a [`Stream`](futures_util::Stream)
//! of those events; [`RunStream::output`] then gives the run's result.
//!
//! Events serialise (`{"type": "text_delta", "text": "Hi"}`: the `type` is
//! [`Event::name`](crate::run::Event::name)), so turning the ones a client
//! shows into server-sent events takes a filter (no web framework needed):
//!
//! ```
//! use toolloop::run::Event;
//! use toolloop::testing::ScriptedModel;
//! use toolloop::{Agent, Conversation, ModelResponse};
//!
//! fn sse_line(event: &Event) -> Option<String> {
//!     if !matches!(event, Event::TextDelta { .. } | Event::ToolCallArgumentsDelta { .. } | Event::RunFinished { .. }) {
//!         return None;
//!     }
//!     let data = serde_json::to_string(event).ok()?;
//!     Some(format!("event: {}\ndata: {data}\n\n", event.name()))
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
//! let agent = Agent::builder().model(ScriptedModel::new().respond(ModelResponse::from_text("Hi there"))).build().unwrap();
//! let mut conversation = Conversation::new();
//! conversation.push_user("Hello");
//! let mut lines = String::new();
//! let mut stream = agent.run_stream(&mut conversation);
//! while let Some(event) = stream.next().await {
//!     lines.extend(sse_line(&event));
//! }
//! let done = stream.output().await.unwrap();
//! assert_eq!(done.output, "Hi there");
//! assert!(lines.starts_with("event: text_delta\ndata: {\"type\":\"text_delta\",\"text\":\"Hi there\"}\n\n"));
//! assert!(lines.contains("event: run_finished\ndata: {\"type\":\"run_finished\""), "{lines}");
//! # });
//! ```

mod run_stream;

pub use run_stream::RunStream;
