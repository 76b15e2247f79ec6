//! What `.output::<T>()` asks of `T`, one trait per requirement, so that a
//! type missing one is told which one and how to add it. ([`OutputType`]
//! is all of them at once; a single trait could only say "one of these is
//! missing".)
//!
//! [`OutputType`]: super::OutputType

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

/// An output type is read from the output tool's arguments.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an agent's output type: it does not implement `serde::Deserialize`",
    label = "`{Self}` does not implement `Deserialize`",
    note = "the output is read from the model's JSON: add `#[derive(serde::Deserialize)]` to `{Self}` (its fields need it too)",
    note = "a borrowed field such as `&str` cannot hold the model's output: use an owned one such as `String`"
)]
pub trait OutputDeserialize: DeserializeOwned {}

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned> OutputDeserialize for T {}

/// An output type's schema is the output tool's input schema.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an agent's output type: it does not implement `schemars::JsonSchema`",
    label = "`{Self}` does not implement `JsonSchema`",
    note = "the model is shown the output's schema: add `#[derive(schemars::JsonSchema)]` to `{Self}` (its fields need it too)",
    note = "toolloop uses schemars 1.x: depend on `schemars = \"1\"` (a type deriving another version's `JsonSchema` is not accepted)"
)]
pub trait OutputSchema: JsonSchema {}

#[diagnostic::do_not_recommend]
impl<T: JsonSchema> OutputSchema for T {}

/// An output crosses threads: runs are futures that may move between them.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an agent's output type: it is not `Send`",
    label = "`{Self}` cannot be sent between threads",
    note = "a run's output may move to another thread: replace `Rc` with `Arc` (and `Cell`/`RefCell` with `Mutex`/`RwLock`) in `{Self}`, or keep such state out of the output type"
)]
pub trait OutputSend: Send {}

#[diagnostic::do_not_recommend]
impl<T: Send> OutputSend for T {}

/// An agent, which holds the output type's validators and reflection
/// handler, is shared between threads.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an agent's output type: it is not `Sync`",
    label = "`{Self}` cannot be shared between threads",
    note = "an agent and its validators are shared between threads: replace `Cell`/`RefCell` with `Mutex`/`RwLock` (or atomics) in `{Self}`, or keep such state out of the output type"
)]
pub trait OutputSync: Sync {}

#[diagnostic::do_not_recommend]
impl<T: Sync> OutputSync for T {}
