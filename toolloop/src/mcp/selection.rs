//! Which of a server's tools to use, and the names the model sees them by.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::tool::is_valid_tool_name;

type Filter = dyn Fn(&str) -> bool + Send + Sync;

/// Which tools of an MCP server to use and under which names.
///
/// By default every tool, under the server's own names (characters
/// providers reject in a tool name, like `.` or `/`, become `_`).
///
/// ```
/// use std::time::Duration;
/// use toolloop::mcp::ToolSelection;
///
/// let selection = ToolSelection::all()
///     .prefix("time_")
///     .only(["get_current_time"])
///     .timeout(Duration::from_secs(10));
/// assert!(selection.includes("get_current_time"));
/// assert!(!selection.includes("convert_time"));
/// ```
#[derive(Clone, Default)]
pub struct ToolSelection {
    prefix: String,
    filter: Option<Arc<Filter>>,
    timeout: Option<Duration>,
}

impl fmt::Debug for ToolSelection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolSelection")
            .field("prefix", &self.prefix)
            .field("filtered", &self.filter.is_some())
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl ToolSelection {
    /// Every tool, under the server's names.
    pub fn all() -> Self {
        Self::default()
    }

    /// Puts `prefix` before every tool's name (`"github_"`), so that tools
    /// of several servers cannot collide.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Keeps only the tools with these names (the server's names, without
    /// the prefix).
    pub fn only<I: IntoIterator<Item = S>, S: Into<String>>(self, names: I) -> Self {
        let names: Vec<String> = names.into_iter().map(Into::into).collect();
        self.filter(move |name| names.iter().any(|kept| kept == name))
    }

    /// Keeps the tools for which `keep` returns `true`, given the server's
    /// name. Replaces an earlier filter or [`only`](Self::only).
    pub fn filter(mut self, keep: impl Fn(&str) -> bool + Send + Sync + 'static) -> Self {
        self.filter = Some(Arc::new(keep));
        self
    }

    /// How long each of these tools may run before its call fails with
    /// [`FailureKind::TimedOut`](crate::FailureKind::TimedOut) (and is
    /// cancelled on the server); the tool set's default otherwise.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Whether the server's tool `name` is selected.
    pub fn includes(&self, name: &str) -> bool {
        self.filter.as_ref().is_none_or(|keep| keep(name))
    }

    pub(crate) fn tool_timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// The name the model sees for the server's tool `name`, or why there
    /// is none.
    pub(crate) fn local_name(&self, name: &str) -> Result<String, &'static str> {
        let local: String = self
            .prefix
            .chars()
            .chain(name.chars())
            .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
            .collect();
        if local.is_empty() {
            return Err("the name is empty");
        }
        if !is_valid_tool_name(&local) {
            return Err("tool names are at most 64 characters long");
        }
        Ok(local)
    }
}

#[cfg(test)]
mod tests {
    use super::ToolSelection;

    #[test]
    fn names_are_prefixed_and_made_acceptable_to_providers() {
        let selection = ToolSelection::all().prefix("fs.");
        assert_eq!(selection.local_name("read/file"), Ok("fs_read_file".to_owned()));
        assert_eq!(ToolSelection::all().local_name("naïve"), Ok("na_ve".to_owned()));
        assert!(ToolSelection::all().local_name("").is_err());
        assert!(ToolSelection::all().prefix("p_").local_name(&"x".repeat(63)).is_err());
    }
}
