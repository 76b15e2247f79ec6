//! What an agent produces: a text answer, or a typed output through an
//! output tool whose schema is the output type's.

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::sealed::Sealed;
use crate::build_error::BuildError;
use crate::tool::{ToolDefinition, ToolError};

/// The name of the output tool unless configured otherwise.
pub const DEFAULT_OUTPUT_TOOL: &str = "final_output";

/// The default description of the output tool.
const DEFAULT_OUTPUT_DESCRIPTION: &str = "Provide your final output. Its arguments are the output itself.";

/// The output of a text agent: the model's final answer as a `String`.
// Hidden from the docs only (`cfg(doc)`): the default of `Agent<O, R>`'s `O`,
// which users never write (`Agent` is a text agent), but rustc names it.
#[cfg_attr(doc, doc(hidden))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Text;

/// A type an agent can produce as its typed output: deserialisable, with a
/// JSON schema, and sendable between threads.
///
/// [`AgentBuilder::output`](crate::AgentBuilder::output) asks for each of
/// these separately ([`state::OutputDeserialize`](super::state::OutputDeserialize),
/// [`OutputSchema`](super::state::OutputSchema), and
/// [`OutputSend`](super::state::OutputSend) for `Send + Sync`), so that a
/// type missing one is told which.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an agent's output type: it must implement `serde::Deserialize` and `schemars::JsonSchema`, and be `Send + Sync + 'static`",
    label = "not an output type",
    note = "add `#[derive(serde::Deserialize, schemars::JsonSchema)]` to `{Self}` (its fields need them too), and keep `Rc`/`Cell`/`RefCell` and borrowed fields out of it"
)]
// Hidden from the docs only (`cfg(doc)`): a bound of `.output::<T>()`, not written by users.
#[cfg_attr(doc, doc(hidden))]
pub trait OutputType: DeserializeOwned + JsonSchema + Send + Sync + 'static {}

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned + JsonSchema + Send + Sync + 'static> OutputType for T {}

/// What an agent produces: [`Text`] (a `String`) or an [`OutputType`].
/// Implemented for both (and sealed); the methods are the agent's internals.
// Hidden from the docs only (`cfg(doc)`): the bound of `Agent<O, R>`'s `O` (see `OutputType`).
#[cfg_attr(doc, doc(hidden))]
pub trait AgentOutput: Sealed + Sized + Send + Sync + 'static {
    /// What a successful run returns.
    type Value: Send;

    #[doc(hidden)]
    fn output_definition(
        name: Cow<'static, str>,
        description: Option<Cow<'static, str>>,
    ) -> Option<Result<ToolDefinition, BuildError>>;

    /// The output type's doc comment, which describes a native response schema.
    #[doc(hidden)]
    fn doc() -> Option<String>;

    /// Deserialises normalised output-tool arguments.
    #[doc(hidden)]
    fn parse(value: &Value) -> Result<Self, ToolError>;

    #[doc(hidden)]
    fn into_value(self) -> Self::Value;

    #[doc(hidden)]
    fn from_text(text: String) -> Option<Self::Value>;
}

impl Sealed for Text {}

impl AgentOutput for Text {
    type Value = String;

    fn output_definition(
        _: Cow<'static, str>,
        _: Option<Cow<'static, str>>,
    ) -> Option<Result<ToolDefinition, BuildError>> {
        None
    }

    fn doc() -> Option<String> {
        None
    }

    fn parse(_: &Value) -> Result<Self, ToolError> {
        Err(ToolError::invalid_arguments(None, "a text agent has no typed output"))
    }

    fn into_value(self) -> String {
        String::new()
    }

    fn from_text(text: String) -> Option<String> {
        Some(text)
    }
}

impl<T: OutputType> AgentOutput for T {
    type Value = T;

    fn output_definition(
        name: Cow<'static, str>,
        description: Option<Cow<'static, str>>,
    ) -> Option<Result<ToolDefinition, BuildError>> {
        let (schema, doc) = crate::tool::schema::input_schema_and_description_for::<T>();
        // The output type's doc comment tells the model what the output is.
        let description = description.unwrap_or_else(|| match doc {
            Some(doc) => Cow::Owned(format!("{DEFAULT_OUTPUT_DESCRIPTION} The output: {doc}")),
            None => Cow::Borrowed(DEFAULT_OUTPUT_DESCRIPTION),
        });
        let definition = ToolDefinition::from_schema(name, description, schema);
        let is_object = definition.input_schema.get("type") == Some(&Value::from("object"));
        Some(if is_object { Ok(definition) } else { Err(BuildError::OutputNotAnObject(T::schema_name().into_owned())) })
    }

    fn doc() -> Option<String> {
        crate::tool::schema::input_schema_and_description_for::<T>().1
    }

    fn parse(value: &Value) -> Result<Self, ToolError> {
        crate::tool::arguments::deserialize(value)
    }

    fn into_value(self) -> T {
        self
    }

    fn from_text(_: String) -> Option<T> {
        None
    }
}
