//! Conversation stores: keep conversations by session id between runs,
//! across processes, with optimistic versions.
//!
//! A [`ConversationStore`] loads and saves a [`Conversation`] under a
//! session id. A load gives the conversation with its version, and every
//! save names the version it read (or `None` for a session that does not
//! exist yet); a save over a newer version is refused with
//! [`StoreError::Conflict`] instead of silently overwriting another
//! writer's turn: load again, redo the turn, save again.
//!
//! Two stores come with the crate: [`MemoryStore`] (in process, for tests
//! and single-process apps) and, with the `sqlite` feature, `SqliteStore`
//! (an embedded SQLite file). A conversation paused with deferred tool
//! calls is saved like any other, pending calls included, and resumed
//! after a load (see [`Agent::resume`](crate::Agent::resume)).
//!
//! ```
//! use toolloop::Conversation;
//! use toolloop::store::{ConversationStore, MemoryStore, StoreError};
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let store = MemoryStore::new();
//! let mut conversation = Conversation::new();
//! conversation.push_user("Hello");
//! let v1 = store.save("session-1", &conversation, None).await?;
//!
//! let (mut loaded, version) = store.load("session-1").await?.expect("saved above");
//! assert_eq!(version, v1);
//! loaded.push_user("Still there?");
//! let v2 = store.save("session-1", &loaded, Some(version)).await?;
//!
//! // A writer that read version 1 cannot overwrite version 2.
//! let stale = store.save("session-1", &conversation, Some(v1)).await.unwrap_err();
//! assert!(matches!(stale, StoreError::Conflict { found: Some(found), .. } if found == v2));
//! # Ok::<(), StoreError>(())
//! # }).unwrap();
//! ```

mod error;
mod memory;
#[cfg(feature = "sqlite")]
mod sqlite;

pub use error::StoreError;
pub use memory::MemoryStore;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteStore;

use crate::conversation::Conversation;
use crate::model::BoxFuture;

/// Where conversations are kept between runs, by session id.
///
/// Implementations keep the promise of optimistic concurrency: `save` with
/// `expected` succeeds only when the session's current version is exactly
/// `expected` (`None`: the session does not exist), atomically, and
/// returns the new version; otherwise it fails with
/// [`StoreError::Conflict`] and changes nothing.
pub trait ConversationStore: Send + Sync {
    /// The session's conversation and its version, or `None` when there is
    /// no such session. The version is 1 after the session's first save,
    /// one more after each save since, and never reused: a session deleted
    /// and saved again goes on from its deleted version, so a writer that
    /// loaded it before the delete cannot overwrite the new one. Name the
    /// version when saving the conversation back. A stored value that does not read back as a
    /// conversation is [`StoreError::Corrupt`], naming the session.
    fn load<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Result<Option<(Conversation, u64)>, StoreError>>;

    /// Saves `conversation` as the session's new version, if its current
    /// version is `expected`; returns the new version.
    fn save<'a>(
        &'a self,
        session: &'a str,
        conversation: &'a Conversation,
        expected: Option<u64>,
    ) -> BoxFuture<'a, Result<u64, StoreError>>;

    /// Every session id, in order.
    fn list(&self) -> BoxFuture<'_, Result<Vec<String>, StoreError>>;

    /// Deletes the session; whether it existed.
    fn delete<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Result<bool, StoreError>>;
}
