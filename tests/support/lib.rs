//! Shared helpers for the workspace-level integration tests and examples.

pub mod replies;
mod server;

pub use server::{RecordedRequest, Reply, StreamEnd, TestServer};
