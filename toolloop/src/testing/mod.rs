//! Models for tests: scripted responses or a closure, no network; and
//! [`Cassette`]s, which record a real provider's answers once and replay
//! them offline.
//!
//! Use them to test your own agents and loops: script what the model says,
//! run the agent, then assert on what it was asked.
//!
//! ```
//! use toolloop::testing::ScriptedModel;
//! use toolloop::{Model, ModelRequest, ModelResponse};
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let model = ScriptedModel::new().respond(ModelResponse::from_text("hello"));
//! let reply = model.complete(ModelRequest::new(&[])).await.unwrap();
//! assert_eq!(reply.text(), "hello");
//! model.assert_consumed();
//! # });
//! ```

#[cfg(feature = "http")]
pub(crate) mod cassette;
mod recorded;
mod scripted;

#[cfg(feature = "http")]
pub use cassette::{Cassette, RECORD_VARIABLE};
pub use recorded::RecordedRequest;
pub use scripted::ScriptedModel;

pub use crate::model::stream::chunk_response;

/// The provider name test models report (`"test"`). Tool calls they produce
/// are tagged with it, so a conversation built by a test model is sent back
/// to a test model unchanged.
pub const TEST_PROVIDER: &str = "test";
