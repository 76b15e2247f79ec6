//! Support for the code `#[derive(Tool)]` generates. Not public API.

pub use schemars;
pub use serde;
pub use serde_json;

/// The crate itself, as the derive reaches it: the generated code imports
/// `<#[tool(crate)]>::__private::toolloop` once, so a `crate = ...` path
/// that is not toolloop fails there, in one error, instead of at every
/// path the derive writes.
pub use crate as toolloop;

/// Emits its input as it is. The derive writes everything it generates
/// inside `__toolloop::__private::emit! { .. }`, so that when the import of
/// `__toolloop` fails (a wrong `#[tool(crate)]`), nothing else is expanded
/// to fail after it.
pub use crate::__toolloop_emit as emit;

#[doc(hidden)]
#[macro_export]
macro_rules! __toolloop_emit {
    ($($tokens:tt)*) => { $($tokens)* };
}

use std::borrow::Cow;
use std::convert::Infallible;
use std::fmt::Display;
use std::future::{Future, Pending};
use std::marker::PhantomData;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use crate::tool::arguments::{has_constraints, parse_arguments, parse_arguments_checked};
use crate::tool::{ToolDefinition, ToolError, ToolOutput};

/// Builds a derived tool's definition, once per type. `from_doc`: the
/// description is the struct's doc comment, of which the model is sent the
/// summary (unless `#[tool(full_doc)]`, `full_doc`).
///
/// # Panics
///
/// When the arguments' schema is not an object.
pub fn definition<T: schemars::JsonSchema>(
    name: &'static str,
    description: &'static str,
    from_doc: bool,
    full_doc: bool,
    timeout_millis: Option<u64>,
) -> ToolDefinition {
    let description = if from_doc && !full_doc { crate::tool::doc_summary(description) } else { description.trim() };
    let definition = ToolDefinition::for_input::<T>(name, description);
    // Providers take only object schemas, so a tool that builds another
    // would fail on every call; fail where it is added instead. The derive
    // rejects `#[serde(transparent)]`; `from`/`try_from` another type can
    // still get here.
    assert!(
        definition.input_schema.get("type") == Some(&Value::from("object")),
        "tool `{name}`: its arguments must be a JSON object, but their schema is {}; \
         with #[serde(from = ...)] or #[serde(try_from = ...)], convert from a struct",
        definition.input_schema,
    );
    match timeout_millis {
        Some(millis) => definition.with_timeout(std::time::Duration::from_millis(millis)),
        None => definition,
    }
}

/// What a tool's `run` may return.
#[diagnostic::on_unimplemented(
    message = "a tool's `run` must return `Result<T, E>` with `T: Serialize` and `E: Display`, not `{Self}`",
    label = "this tool's `run` returns `{Self}`",
    note = "wrap the value: `Ok(value)`; use `std::convert::Infallible` as `E` when the tool cannot fail"
)]
pub trait IntoToolResult {
    /// Converts the handler's return value.
    fn into_tool_result(self) -> Result<ToolOutput, ToolError>;
}

impl<T: Serialize, E: Display> IntoToolResult for Result<T, E> {
    fn into_tool_result(self) -> Result<ToolOutput, ToolError> {
        let output = self.map_err(ToolError::failed)?;
        ToolOutput::from_serialize(&output)
            .map_err(|error| ToolError::failed(format!("the tool's output could not be serialised: {error}")))
    }
}

/// A type that can hold one of a tool's arguments.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool argument: it needs both `Deserialize` and `JsonSchema`",
    label = "the model's arguments are read into this type and described by its schema",
    note = "derive it on your type, together with the schema the model reads: \
            `#[derive(serde::Deserialize, schemars::JsonSchema)]` (schemars 1.x)",
    note = "a borrowed type such as `&str` cannot hold the model's arguments: use an owned one such as `String`"
)]
pub trait Argument: DeserializeOwned + schemars::JsonSchema {}

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned + schemars::JsonSchema> Argument for T {}

/// A tool argument crosses threads with the tool: the derive bounds its
/// impl by `FieldType: SendArgument` for each field, so that a field that
/// is not `Send` is reported once, at the field, by rustc's own message
/// naming the type inside it that is not `Send`.
pub trait SendArgument: Send {}

impl<T: Send + ?Sized> SendArgument for T {}

/// Stands for an argument type `T` in the schema of a derived tool's
/// arguments. The derive describes each field through a newtype whose
/// `JsonSchema` impl asks `(&Describe::<T>::NEW).description()`: that is
/// `T`'s own schema ([`DescribeArgument`]) when `T: JsonSchema`, and a
/// stand-in never used ([`DescribeArgumentFallback`]) otherwise, so that a
/// field type without `JsonSchema` is reported once, by
/// [`deserialize_argument`]'s bound ("needs both `Deserialize` and
/// `JsonSchema`"), instead of by schemars too.
pub struct Describe<T: ?Sized>(PhantomData<fn() -> Box<T>>);

impl<T: ?Sized> Describe<T> {
    /// The probe.
    pub const NEW: Self = Self(PhantomData);
}

impl<T: ?Sized> Clone for Describe<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: ?Sized> Copy for Describe<T> {}

/// How schemars describes an argument type: its `JsonSchema` functions.
/// (The two hidden ones decide, among other things, whether an `Option`
/// field is required; schemars' own `#[schemars(transparent)]` passes them
/// on the same way.)
#[allow(clippy::struct_field_names)]
pub struct ArgumentDescription {
    /// `JsonSchema::inline_schema`.
    pub inline_schema: fn() -> bool,
    /// `JsonSchema::schema_name`.
    pub schema_name: fn() -> Cow<'static, str>,
    /// `JsonSchema::schema_id`.
    pub schema_id: fn() -> Cow<'static, str>,
    /// `JsonSchema::json_schema`.
    pub json_schema: fn(&mut schemars::SchemaGenerator) -> schemars::Schema,
    /// schemars' hidden `_schemars_private_non_optional_json_schema`.
    pub non_optional_json_schema: fn(&mut schemars::SchemaGenerator) -> schemars::Schema,
    /// schemars' hidden `_schemars_private_is_option`.
    pub is_option: fn() -> bool,
}

/// `T`'s own description, chosen when `T: JsonSchema`.
pub trait DescribeArgument {
    /// The description.
    fn description(self) -> ArgumentDescription;
}

impl<T: schemars::JsonSchema + ?Sized> DescribeArgument for &Describe<T> {
    fn description(self) -> ArgumentDescription {
        ArgumentDescription {
            inline_schema: T::inline_schema,
            schema_name: T::schema_name,
            schema_id: T::schema_id,
            json_schema: T::json_schema,
            non_optional_json_schema: T::_schemars_private_non_optional_json_schema,
            is_option: T::_schemars_private_is_option,
        }
    }
}

/// Chosen when `T` has no `JsonSchema`; the derived code then does not
/// compile (see [`Describe`]), so this never runs.
pub trait DescribeArgumentFallback {
    /// A description that is never used.
    fn description(self) -> ArgumentDescription;
}

impl<T: ?Sized> DescribeArgumentFallback for Describe<T> {
    fn description(self) -> ArgumentDescription {
        fn never<R>() -> R {
            unreachable!("a tool argument without `JsonSchema` does not compile")
        }
        fn never_with<R>(_: &mut schemars::SchemaGenerator) -> R {
            never()
        }
        ArgumentDescription {
            inline_schema: never,
            schema_name: never,
            schema_id: never,
            json_schema: never_with,
            non_optional_json_schema: never_with,
            is_option: never,
        }
    }
}

/// Deserialises one argument. Derived tools read each field through a
/// newtype whose `Deserialize` calls this, so that a field type without
/// `Deserialize` is reported once, here, rather than at each of the
/// places serde's derived code uses it.
pub fn deserialize_argument<'de, T: Argument, D: serde::Deserializer<'de>>(deserializer: D) -> Result<T, D::Error> {
    T::deserialize(deserializer)
}

/// A tool's `run` next to what it is called with (the tool, and `()` or
/// the state), so that the derive can ask by method resolution whether
/// `run` has a signature a tool can use: [`CallRun`] applies when it does,
/// [`CallRunFallback`] otherwise, and [`require_run`] or
/// [`require_run_with_state`] then reports the mistake once, with the
/// signature to write (rustc's own errors for a mismatched call suggest
/// edits to the struct's line, where the call is generated).
pub struct RunProbe<F, T, S>(pub F, pub T, pub S);

/// `run` has a usable signature.
pub struct RunMatches;

/// `run` is missing or has another signature.
pub struct RunSignatureMismatch(());

/// Calls a `run` whose signature fits.
pub trait CallRun {
    /// The future `run` returns.
    type Future: Future;
    /// Calls `run`.
    fn call_run(self) -> (Self::Future, RunMatches);
}

impl<F, T, Fut> CallRun for RunProbe<F, T, ()>
where
    F: FnOnce(T) -> Fut,
    Fut: Future,
{
    type Future = Fut;
    fn call_run(self) -> (Fut, RunMatches) {
        ((self.0)(self.1), RunMatches)
    }
}

impl<'a, F, T, S, Fut> CallRun for RunProbe<F, T, &'a S>
where
    F: FnOnce(T, &'a S) -> Fut,
    Fut: Future,
{
    type Future = Fut;
    fn call_run(self) -> (Fut, RunMatches) {
        ((self.0)(self.1, self.2), RunMatches)
    }
}

/// Chosen when [`CallRun`] does not apply; yields a future that is never
/// run (the mismatch does not compile), typed so that nothing else fails.
pub trait CallRunFallback {
    /// Reports the mismatch.
    fn call_run(self) -> (Pending<Result<(), Infallible>>, RunSignatureMismatch);
}

impl<F, T, S> CallRunFallback for &RunProbe<F, T, S> {
    fn call_run(self) -> (Pending<Result<(), Infallible>>, RunSignatureMismatch) {
        (std::future::pending(), RunSignatureMismatch(()))
    }
}

/// `run` of a tool without state.
#[diagnostic::on_unimplemented(
    message = "`{T}` needs `async fn run(self) -> Result<T, E>` to be a tool",
    label = "`{T}::run` is missing or has another signature",
    note = "write `impl {T} {{ async fn run(self) -> Result<Output, Error> {{ ... }} }}`: `run` must be `async`, \
            take `self` by value (not `&self`) and take nothing else",
    note = "a tool that needs state declares it with `#[tool(state = Type)]` and takes it as \
            `async fn run(self, state: &Type)`"
)]
pub trait RunSignature<T> {}

#[diagnostic::do_not_recommend]
impl<T> RunSignature<T> for RunMatches {}

/// `run` of a tool with state `S`.
#[diagnostic::on_unimplemented(
    message = "`{T}` declares `#[tool(state = {S})]`, so it needs `async fn run(self, state: &{S}) -> Result<T, E>`",
    label = "`{T}::run` is missing or has another signature",
    note = "write `impl {T} {{ async fn run(self, state: &{S}) -> Result<Output, Error> {{ ... }} }}`: `run` must \
            be `async`, take `self` by value and the state by reference",
    note = "tools may run at the same time, so the state is shared (`&`, not `&mut`): put what changes behind a \
            `Mutex`, an `RwLock` or atomics inside it"
)]
pub trait RunSignatureWithState<T, S> {}

#[diagnostic::do_not_recommend]
impl<T, S> RunSignatureWithState<T, S> for RunMatches {}

/// Fails to compile, with the signature to write, unless `run` fits a tool without state.
pub fn require_run<T, M: RunSignature<T>>(_: M) {}

/// Fails to compile, with the signature to write, unless `run` fits a tool with state `S`.
pub fn require_run_with_state<T, S, M: RunSignatureWithState<T, S>>(_: M) {}

/// What `Type::run` resolves to when the tool has no inherent `run`, so
/// that the missing method is reported by [`require_run`] with the
/// signature to write.
pub struct NoRunMethod(());
