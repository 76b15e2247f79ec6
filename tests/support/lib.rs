//! Shared helpers for the workspace-level integration tests and examples.
