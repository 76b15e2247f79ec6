//! A conversation store in memory.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use super::{ConversationStore, StoreError};
use crate::conversation::Conversation;
use crate::model::BoxFuture;

/// Conversations kept in this process's memory, serialised as JSON (so a
/// conversation is stored as a copy, exactly as a persistent store would
/// keep it). Clones share the same sessions. For tests, and for
/// applications that run in one process and may lose their sessions on
/// restart.
#[derive(Clone, Debug, Default)]
pub struct MemoryStore {
    sessions: Arc<Mutex<Sessions>>,
}

/// The stored sessions, and the last version of each deleted one.
#[derive(Debug, Default)]
struct Sessions {
    stored: BTreeMap<String, (u64, String)>,
    deleted: BTreeMap<String, u64>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn sessions(&self) -> std::sync::MutexGuard<'_, Sessions> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl ConversationStore for MemoryStore {
    fn load<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Result<Option<(Conversation, u64)>, StoreError>> {
        let stored = self.sessions().stored.get(session).cloned();
        Box::pin(async move {
            let Some((version, body)) = stored else { return Ok(None) };
            let conversation = serde_json::from_str(&body)
                .map_err(|error| StoreError::Corrupt { session: session.to_owned(), message: error.to_string() })?;
            Ok(Some((conversation, version)))
        })
    }

    fn save<'a>(
        &'a self,
        session: &'a str,
        conversation: &'a Conversation,
        expected: Option<u64>,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        let body = serde_json::to_string(conversation);
        Box::pin(async move {
            let body = body.map_err(|error| StoreError::Backend(Box::new(error)))?;
            let mut sessions = self.sessions();
            let found = sessions.stored.get(session).map(|(version, _)| *version);
            if found != expected {
                return Err(StoreError::Conflict { session: session.to_owned(), expected, found });
            }
            // A session saved again after a delete goes on from its deleted version.
            let version = found.or_else(|| sessions.deleted.remove(session)).unwrap_or(0) + 1;
            sessions.stored.insert(session.to_owned(), (version, body));
            Ok(version)
        })
    }

    fn list(&self) -> BoxFuture<'_, Result<Vec<String>, StoreError>> {
        let sessions = self.sessions().stored.keys().cloned().collect();
        Box::pin(async move { Ok(sessions) })
    }

    fn delete<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        let mut sessions = self.sessions();
        let removed = sessions.stored.remove(session);
        if let Some((version, _)) = &removed {
            sessions.deleted.insert(session.to_owned(), *version);
        }
        let existed = removed.is_some();
        Box::pin(async move { Ok(existed) })
    }
}
