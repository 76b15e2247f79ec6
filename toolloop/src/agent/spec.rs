//! What distinguishes a text agent from a typed one at run time.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use serde_json::Value;

use super::error::BuildError;
use super::output_tool::{DEFAULT_OUTPUT_DESCRIPTION, DEFAULT_OUTPUT_TOOL, OutputTool};
use super::state::{AsyncValidator, OutputIs, OutputType, ReflectionHandler, Text, Validator};
use crate::tool::{DynTool, ToolDefinition};

/// One user check of a typed output.
pub(crate) enum Check<T> {
    Sync(Arc<dyn Validator<T>>),
    Async(Arc<dyn AsyncValidator<T>>),
}

impl<T> Clone for Check<T> {
    fn clone(&self) -> Self {
        match self {
            Self::Sync(check) => Self::Sync(Arc::clone(check)),
            Self::Async(check) => Self::Async(Arc::clone(check)),
        }
    }
}

/// The typed-only settings; empty on a text agent.
pub(crate) struct TypedSpec<T> {
    pub(crate) name: Cow<'static, str>,
    /// `None`: the default, which includes the output type's doc comment.
    pub(crate) description: Option<Cow<'static, str>>,
    pub(crate) reflection: Option<Arc<dyn ReflectionHandler<T>>>,
    pub(crate) checks: Vec<Check<T>>,
}

impl<T> Default for TypedSpec<T> {
    fn default() -> Self {
        Self { name: Cow::Borrowed(DEFAULT_OUTPUT_TOOL), description: None, reflection: None, checks: Vec::new() }
    }
}

impl<T: 'static> TypedSpec<T> {
    /// The same settings for output type `U`, which is `T` itself (or
    /// `Text` for a text agent, which has none of them).
    pub(crate) fn convert<U: OutputIs<T>>(self) -> TypedSpec<U> {
        TypedSpec {
            name: self.name,
            description: self.description,
            reflection: self.reflection.and_then(U::reflection),
            checks: self
                .checks
                .into_iter()
                .filter_map(|check| match check {
                    Check::Sync(validator) => U::validator(validator).map(Check::Sync),
                    Check::Async(validator) => U::async_validator(validator).map(Check::Async),
                })
                .collect(),
        }
    }
}

impl<T> Clone for TypedSpec<T> {
    fn clone(&self) -> Self {
        Self {
            name: self.name.clone(),
            description: self.description.clone(),
            reflection: self.reflection.clone(),
            checks: self.checks.clone(),
        }
    }
}

/// What an agent produces: [`Text`] (a `String`) or a typed output.
///
/// Implemented for [`Text`] and for every [`OutputType`]; the methods are
/// the agent's internals.
pub trait AgentOutput: Sized + Send + Sync + 'static {
    /// What a successful run returns.
    type Value: Send;

    #[doc(hidden)]
    fn output_definition(
        name: Cow<'static, str>,
        description: Option<Cow<'static, str>>,
    ) -> Option<Result<ToolDefinition, BuildError>>;

    #[doc(hidden)]
    fn output_tool(
        definition: ToolDefinition,
        reflection: Option<Arc<dyn ReflectionHandler<Self>>>,
        proposed: Arc<AtomicBool>,
    ) -> Option<Arc<dyn DynTool>>;

    #[doc(hidden)]
    fn parse(value: &Value, definition: &ToolDefinition) -> Result<Self, String>;

    #[doc(hidden)]
    fn into_value(self) -> Self::Value;

    #[doc(hidden)]
    fn from_text(text: String) -> Option<Self::Value>;
}

impl AgentOutput for Text {
    type Value = String;

    fn output_definition(
        _: Cow<'static, str>,
        _: Option<Cow<'static, str>>,
    ) -> Option<Result<ToolDefinition, BuildError>> {
        None
    }

    fn output_tool(
        _: ToolDefinition,
        _: Option<Arc<dyn ReflectionHandler<Self>>>,
        _: Arc<AtomicBool>,
    ) -> Option<Arc<dyn DynTool>> {
        None
    }

    fn parse(_: &Value, _: &ToolDefinition) -> Result<Self, String> {
        Err("a text agent has no typed output".to_owned())
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

    fn output_tool(
        definition: ToolDefinition,
        reflection: Option<Arc<dyn ReflectionHandler<Self>>>,
        proposed: Arc<AtomicBool>,
    ) -> Option<Arc<dyn DynTool>> {
        Some(Arc::new(OutputTool { definition, reflection, proposed }))
    }

    fn parse(value: &Value, definition: &ToolDefinition) -> Result<Self, String> {
        crate::__private::parse_arguments(value, definition).map_err(|error| error.to_string())
    }

    fn into_value(self) -> T {
        self
    }

    fn from_text(_: String) -> Option<T> {
        None
    }
}
