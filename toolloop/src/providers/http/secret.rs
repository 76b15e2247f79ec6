//! An API key that never shows itself.

use std::fmt;

/// An API key. Its `Debug` prints `<redacted>` and it has no `Display`, so
/// it cannot end up in logs or error messages by accident.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct ApiKey(String);

impl ApiKey {
    pub(crate) fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// The key itself, for the one header that carries it.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

#[cfg(test)]
mod tests {
    use super::ApiKey;

    #[test]
    fn debug_redacts_the_key() {
        let key = ApiKey::new("sk-secret-123");
        assert_eq!(format!("{key:?}"), "<redacted>");
        assert_eq!(format!("{:?}", Some(key.clone())), "Some(<redacted>)");
        assert_eq!(key.expose(), "sk-secret-123");
    }
}
