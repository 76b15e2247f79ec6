//! Nothing here: the package exists for its compile-fail suites
//! (`tests/compile_fail_tool.rs`, `tests/compile_fail_agent.rs`), whose
//! cases and snapshots are under `tests/ui/`.
//!
//! Run them with `cargo test -p toolloop-compile-fail`; after reading each
//! changed `.stderr`, bless with
//! `TRYBUILD=overwrite cargo test -p toolloop-compile-fail --test compile_fail_agent`
//! (or `compile_fail_tool`). One case: append `-- "" trybuild=NAME.rs`.
