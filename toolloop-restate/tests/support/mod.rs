//! The harness of the toolloop-restate tests.
#![allow(dead_code, unreachable_pub)] // each test uses a subset

pub mod app;
pub mod fake;
pub mod server;
pub mod worker;
