//! What `build()` can reject.

/// A configuration problem only visible when the agent is built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Two tools share a name (including the output tool and `submit`).
    #[error("two tools are named `{0}`: tool names must be unique within an agent")]
    DuplicateToolName(String),
    /// The output type's schema is not a JSON object, so it cannot be a tool's input.
    #[error("the output type `{0}` must be a struct or map (its schema is not a JSON object); wrap it in a struct")]
    OutputNotAnObject(String),
    /// A tool name set at run time (the output tool's, a [`DynTool`](crate::DynTool)'s)
    /// is one providers reject.
    #[error("tool name `{0}` is not accepted by providers: use 1 to 64 letters, digits, `_` or `-`")]
    InvalidToolName(String),
    /// A limit is zero, or a number is negative or not finite: every limit
    /// must be positive and finite (leave it unset for no limit).
    #[error("`{setting}` must be positive and finite, got {value}: leave it unset for no limit")]
    InvalidSetting {
        /// The builder method (and [`LoopOptions`](crate::run::LoopOptions) field).
        setting: &'static str,
        /// The value it was given.
        value: String,
    },
}
