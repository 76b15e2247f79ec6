//! Secrets (API keys) that never show themselves.

use std::fmt;

/// A secret (an API key, a credential header). Its `Debug` prints `<redacted>` and it has no `Display`, so
/// it cannot end up in logs or error messages by accident.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Secret(String);

impl Secret {
    pub(crate) fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// The key itself, for the one header that carries it.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

#[cfg(test)]
mod tests {
    use super::Secret;

    #[test]
    fn debug_redacts_the_key() {
        let key = Secret::new("sk-secret-123");
        assert_eq!(format!("{key:?}"), "<redacted>");
        assert_eq!(format!("{:?}", Some(key.clone())), "Some(<redacted>)");
        assert_eq!(key.expose(), "sk-secret-123");
    }
}
