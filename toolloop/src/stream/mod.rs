//! Streamed runs: one typed event stream for the whole run.
//!
//! A streamed run is the same run as a non-streamed one, driven by the
//! same engine: the engine reports what happens to an event sink when it
//! has one (and streams the model's response instead of waiting for it),
//! and [`RunStream`] interleaves those events with the run's own progress,
//! ending with the run's result.
//!
//! Turning the events into server-sent events takes a `match` (no web
//! framework needed):
//!
//! ```
//! use toolloop::stream::RunEvent;
//! use toolloop::testing::ScriptedModel;
//! use toolloop::{Agent, Conversation, ModelResponse};
//!
//! fn sse_line<T: std::fmt::Debug>(event: &RunEvent<T>) -> Option<String> {
//!     let data = match event {
//!         RunEvent::TextDelta { text } => serde_json::json!({ "text": text }),
//!         RunEvent::ToolCallArgumentsDelta { index, partial, .. } => {
//!             serde_json::json!({ "index": index, "arguments": partial })
//!         }
//!         RunEvent::Finished(Ok(done)) => serde_json::json!({ "output": format!("{:?}", done.output) }),
//!         RunEvent::Finished(Err(error)) => serde_json::json!({ "error": error.to_string() }),
//!         _ => return None,
//!     };
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
//! assert!(lines.starts_with("event: text_delta\ndata: {\"text\":\"Hi there\"}\n\n"));
//! assert!(lines.ends_with("event: finished\ndata: {\"output\":\"\\\"Hi there\\\"\"}\n\n"));
//! # });
//! ```

mod run_stream;

// The events are the engine's (`run::event`); this module is how a caller
// receives them.
pub use crate::run::event::RunEvent;
pub(crate) use crate::run::{EventSink, Progress};
pub use run_stream::RunStream;
