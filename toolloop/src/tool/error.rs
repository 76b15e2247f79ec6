//! Why a tool call failed, as the tool itself reports it.

use std::fmt;

/// The model's arguments did not fit the tool's input type.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.describe())]
pub struct ArgumentError {
    path: Option<String>,
    message: String,
}

impl ArgumentError {
    /// An error at `path` (dotted field path such as `filters.limit`; `None`
    /// for the arguments as a whole).
    pub fn new(path: Option<String>, message: impl Into<String>) -> Self {
        Self { path, message: message.into() }
    }

    /// The field path where the error is, like `filters[0].limit`.
    pub fn path(&self) -> Option<&str> {
        self.path.as_deref()
    }

    /// What was wrong.
    pub fn message(&self) -> &str {
        &self.message
    }

    fn describe(&self) -> String {
        match &self.path {
            Some(path) => format!("invalid arguments at `{path}`: {}", self.message),
            None => format!("invalid arguments: {}", self.message),
        }
    }
}

/// A tool call that did not produce output.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The arguments did not parse.
    #[error(transparent)]
    InvalidArguments(#[from] ArgumentError),
    /// The handler failed; the message is its error's `Display`.
    #[error("{0}")]
    Failed(String),
    /// The call is not allowed in this position (for example `submit`
    /// before any output was proposed); becomes
    /// [`FailureKind::Rejected`](crate::FailureKind::Rejected).
    #[error("{0}")]
    Rejected(String),
}

impl ToolError {
    /// A handler failure saying `message`.
    pub fn failed(message: impl fmt::Display) -> Self {
        Self::Failed(message.to_string())
    }
}
