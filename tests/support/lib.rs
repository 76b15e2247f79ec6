//! Shared helpers for the workspace-level integration tests and examples.

mod server;

pub use server::{RecordedRequest, Reply, TestServer};
