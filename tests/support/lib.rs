//! Shared helpers for the workspace-level integration tests and examples.

pub mod anthropic_cache;
pub mod anthropic_rules;
pub mod gemini_rules;
pub mod output_rules;
pub mod replies;
pub mod responses_rules;
mod rules;
mod server;
pub mod streamed;

pub use rules::Rejection;
pub use server::{RecordedRequest, Reply, StreamEnd, TestServer};
