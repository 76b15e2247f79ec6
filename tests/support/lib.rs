//! Shared helpers for the workspace-level integration tests and examples.

pub mod anthropic_cache;
pub mod replies;
mod server;

pub use server::{RecordedRequest, Reply, TestServer};
