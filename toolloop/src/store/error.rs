//! What can go wrong with a conversation store.

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The session changed since it was read: another writer saved first.
    /// Nothing was written; load the session again and redo the change.
    #[error("session `{session}` is at version {}, not {}: another writer saved it first", show(*found), show(*expected))]
    Conflict {
        /// The session.
        session: String,
        /// The version the save expected (`None`: a new session).
        expected: Option<u64>,
        /// The version found (`None`: there is no such session).
        found: Option<u64>,
    },
    /// The stored value of the session does not read back as a conversation.
    #[error("session `{session}` is corrupt: {message}")]
    Corrupt {
        /// The session.
        session: String,
        /// What is wrong with it.
        message: String,
    },
    /// The store was written by a newer version of this library, whose
    /// schema this one does not know.
    #[error("the store's schema is at version {found}; this version of toolloop knows up to {known}")]
    UnknownSchema {
        /// The store's schema version.
        found: u32,
        /// The newest this library knows.
        known: u32,
    },
    /// The storage itself failed (I/O, the database engine).
    #[error("the conversation store failed: {0}")]
    Backend(#[source] Box<dyn std::error::Error + Send + Sync>),
}

fn show(version: Option<u64>) -> String {
    version.map_or_else(|| "none (a new session)".to_owned(), |version| version.to_string())
}

impl StoreError {
    /// Whether this is a [`Conflict`](Self::Conflict).
    pub fn is_conflict(&self) -> bool {
        matches!(self, Self::Conflict { .. })
    }
}
