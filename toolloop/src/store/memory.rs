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
    sessions: Arc<Mutex<BTreeMap<String, (u64, String)>>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn sessions(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, (u64, String)>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl ConversationStore for MemoryStore {
    fn load<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Result<Option<(Conversation, u64)>, StoreError>> {
        let stored = self.sessions().get(session).cloned();
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
            let found = sessions.get(session).map(|(version, _)| *version);
            if found != expected {
                return Err(StoreError::Conflict { session: session.to_owned(), expected, found });
            }
            let version = found.unwrap_or(0) + 1;
            sessions.insert(session.to_owned(), (version, body));
            Ok(version)
        })
    }

    fn list(&self) -> BoxFuture<'_, Result<Vec<String>, StoreError>> {
        let sessions = self.sessions().keys().cloned().collect();
        Box::pin(async move { Ok(sessions) })
    }

    fn delete<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        let existed = self.sessions().remove(session).is_some();
        Box::pin(async move { Ok(existed) })
    }
}
