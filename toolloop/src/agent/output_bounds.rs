//! What `.output::<T>()` asks of `T`, one trait per requirement, so that a
//! type missing one is told which one and how to add it. ([`OutputType`]
//! is all of them at once; a single trait could only say "one of these is
//! missing".)
//!
//! [`OutputType`]: super::OutputType

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use super::output::Text;

/// An output type is read from the output tool's arguments.
///
/// This is also where `.output::<Text>()` is turned away: [`Text`] is the
/// text agents' marker, which has no `Deserialize` (and is let through
/// [`OutputSchema`], so that it gets this one error).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an agent's output type: it does not implement `serde::Deserialize`",
    label = "`{Self}` does not implement `Deserialize`",
    note = "the output is read from the model's JSON: derive `serde::Deserialize` on your output type (its fields need it too)",
    note = "a borrowed field such as `&str` cannot hold the model's output: use an owned one such as `String`",
    note = "for the model's text answer, leave out `.output::<..>()`: `Text` marks text agents, whose output is a `String`"
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
pub trait OutputSchema {}

#[diagnostic::do_not_recommend]
impl<T: JsonSchema> OutputSchema for T {}

// Not output types, but [`OutputDeserialize`] says so, once.
#[diagnostic::do_not_recommend]
impl OutputSchema for Text {}

/// An output crosses threads: runs are futures that may move between them,
/// and an agent, which holds the output type's validators and reflection
/// handler, is shared between them. (One trait for both, so that a type
/// with an `Rc`, which is neither, gets one error.)
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an agent's output type: it must be `Send` and `Sync`",
    label = "`{Self}` cannot be sent or shared between threads",
    note = "runs and agents move between threads: replace `Rc` with `Arc` and `Cell`/`RefCell` with `Mutex`/`RwLock` (or atomics) in `{Self}`, or keep such state out of the output type"
)]
pub trait OutputSend: Send + Sync {}

#[diagnostic::do_not_recommend]
impl<T: Send + Sync> OutputSend for T {}

/// An output type is `Sync`. No longer asked for on its own:
/// [`OutputSend`] asks for `Send` and `Sync` together.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an agent's output type: it is not `Sync`",
    label = "`{Self}` cannot be shared between threads",
    note = "an agent and its validators are shared between threads: replace `Cell`/`RefCell` with `Mutex`/`RwLock` (or atomics) in `{Self}`, or keep such state out of the output type"
)]
pub trait OutputSync: Sync {}

#[diagnostic::do_not_recommend]
impl<T: Sync> OutputSync for T {}

// Every type `.output::<T>()` may leave in the builder, valid or not, as
// long as it reads JSON: see `state::Typed`. (Beside the bound it needs, so
// that `output` does not depend on this file.)
#[diagnostic::do_not_recommend]
impl<T: OutputDeserialize> super::sealed::Sealed for T {}
