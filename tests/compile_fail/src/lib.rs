//! Nothing here: the package exists for its compile-fail suites
//! (`tests/compile_fail_tool.rs`, `tests/compile_fail_agent.rs`), whose
//! cases and snapshots are under `tests/ui/`.
