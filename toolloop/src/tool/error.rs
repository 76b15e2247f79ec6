//! Why a tool call failed, as the tool itself reports it.

use std::fmt;

/// A tool call that did not produce output.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The model's arguments did not fit the tool's input type, or broke a
    /// constraint its schema shows (`#[schemars(range, length, regex...)]`);
    /// becomes [`FailureKind::InvalidArguments`](crate::FailureKind::InvalidArguments).
    /// [`Tool::parse`](crate::Tool::parse) returns it.
    #[error(
        "invalid arguments{}: {message}",
        .path.as_ref().map(|path| format!(" at `{path}`")).unwrap_or_default()
    )]
    InvalidArguments {
        /// The field path where the error is, like `filters[0].limit`;
        /// `None` for the arguments as a whole.
        path: Option<String>,
        /// What was wrong.
        message: String,
    },
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

    /// Arguments that do not fit, at `path` (a field path such as
    /// `filters.limit`; `None` for the arguments as a whole), saying `message`.
    pub fn invalid_arguments(path: Option<String>, message: impl Into<String>) -> Self {
        Self::InvalidArguments { path, message: message.into() }
    }
}

#[cfg(test)]
mod tests {
    use super::ToolError;

    #[test]
    fn invalid_arguments_name_their_field_path_when_they_have_one() {
        let at = ToolError::invalid_arguments(Some("filters.limit".into()), "must be at most 10");
        assert_eq!(at.to_string(), "invalid arguments at `filters.limit`: must be at most 10");
        let whole = ToolError::invalid_arguments(None, "expected a JSON object, got a string");
        assert_eq!(whole.to_string(), "invalid arguments: expected a JSON object, got a string");
    }
}
