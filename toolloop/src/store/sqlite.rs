//! A conversation store in an embedded SQLite database (feature `sqlite`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension as _, TransactionBehavior, params};

use super::{ConversationStore, StoreError};
use crate::conversation::Conversation;
use crate::model::BoxFuture;

/// The schema, one migration per version: migration `i` takes the database
/// from version `i` to `i + 1`. Append only; never edit a shipped one.
const MIGRATIONS: &[&str] = &[
    // 1: one row per session, the conversation as JSON.
    "CREATE TABLE conversations (
        session    TEXT PRIMARY KEY NOT NULL,
        version    INTEGER NOT NULL CHECK (version > 0),
        body       TEXT NOT NULL,
        updated_at INTEGER NOT NULL
    ) STRICT;",
    // 2: the last version of each deleted session, so that saving it again
    // goes on from there (a version is never reused).
    "CREATE TABLE deleted_sessions (
        session TEXT PRIMARY KEY NOT NULL,
        version INTEGER NOT NULL CHECK (version > 0)
    ) STRICT;",
];

/// How long a writer waits for another connection's write lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Conversations in a SQLite database file, embedded (SQLite is compiled
/// in: no server, no system library), in WAL mode so readers never wait
/// for a writer. Several processes may open the same file; optimistic
/// versions keep their writes apart (see [`ConversationStore`]).
///
/// The schema is versioned (table `schema_version`) and migrated from its
/// first version when the store is opened; a database written by a newer
/// toolloop is refused ([`StoreError::UnknownSchema`]).
///
/// ```
/// use toolloop::Conversation;
/// use toolloop::store::{ConversationStore, SqliteStore};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let path = std::env::temp_dir().join(format!("toolloop-doc-{}.db", std::process::id()));
/// let store = SqliteStore::open(&path)?;
/// let mut conversation = Conversation::new();
/// conversation.push_user("Hello");
/// let version = store.save("alice", &conversation, None).await?;
/// let loaded = store.load("alice").await?.unwrap();
/// assert_eq!(loaded, (conversation, version));
/// # drop(store);
/// # for suffix in ["", "-wal", "-shm"] { let _ = std::fs::remove_file(format!("{}{suffix}", path.display())); }
/// # Ok::<(), toolloop::store::StoreError>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct SqliteStore {
    connection: Arc<Mutex<Connection>>,
    path: PathBuf,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore").field("path", &self.path).finish_non_exhaustive()
    }
}

fn backend(error: rusqlite::Error) -> StoreError {
    StoreError::Backend(Box::new(error))
}

impl SqliteStore {
    /// Opens (creating it if needed) the database at `path`, and migrates
    /// its schema to the newest version.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref().to_owned();
        let mut connection = Connection::open(&path).map_err(backend)?;
        connection.busy_timeout(BUSY_TIMEOUT).map_err(backend)?;
        // WAL: readers do not block the writer nor the writer them, and a
        // commit survives a crash of the process right after it.
        let mode: String = connection.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0)).map_err(backend)?;
        tracing::debug!(path = %path.display(), mode, "opened the SQLite conversation store");
        connection.pragma_update(None, "synchronous", "NORMAL").map_err(backend)?;
        migrate(&mut connection)?;
        Ok(Self { connection: Arc::new(Mutex::new(connection)), path })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The newest schema version this library knows.
    pub fn schema_version() -> u32 {
        u32::try_from(MIGRATIONS.len()).unwrap_or(u32::MAX)
    }

    /// Runs `job` on the connection on a blocking thread (SQLite calls block).
    async fn with<T: Send + 'static>(
        &self,
        job: impl FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let connection = Arc::clone(&self.connection);
        tokio::task::spawn_blocking(move || job(&mut connection.lock().unwrap_or_else(PoisonError::into_inner)))
            .await
            .map_err(|error| StoreError::Backend(Box::new(error)))?
    }
}

/// Brings the schema to the newest version, one migration per transaction.
fn migrate(connection: &mut Connection) -> Result<(), StoreError> {
    let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate).map_err(backend)?;
    transaction
        .execute_batch("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL) STRICT;")
        .map_err(backend)?;
    let found: Option<u32> =
        transaction.query_row("SELECT MAX(version) FROM schema_version", [], |row| row.get(0)).map_err(backend)?;
    let found = found.unwrap_or(0);
    let known = SqliteStore::schema_version();
    if found > known {
        return Err(StoreError::UnknownSchema { found, known });
    }
    for (version, migration) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        transaction.execute_batch(migration).map_err(backend)?;
        let to = u32::try_from(version + 1).unwrap_or(u32::MAX);
        transaction.execute("INSERT INTO schema_version (version) VALUES (?1)", [to]).map_err(backend)?;
        tracing::info!(to, "migrated the conversation store's schema");
    }
    transaction.commit().map_err(backend)
}

fn now_millis() -> i64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
}

fn to_version(value: i64) -> u64 {
    u64::try_from(value).unwrap_or_default()
}

impl ConversationStore for SqliteStore {
    fn load<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Result<Option<(Conversation, u64)>, StoreError>> {
        let session = session.to_owned();
        Box::pin(self.with(move |connection| {
            let row: Option<(i64, String)> = connection
                .query_row("SELECT version, body FROM conversations WHERE session = ?1", [&session], |row| {
                    Ok((row.get(0)?, row.get(1)?))
                })
                .optional()
                .map_err(|error| match error {
                    // A body that is not text is as corrupt as text that is not a conversation.
                    rusqlite::Error::FromSqlConversionFailure(..) | rusqlite::Error::InvalidColumnType(..) => {
                        StoreError::Corrupt { session: session.clone(), message: error.to_string() }
                    }
                    error => backend(error),
                })?;
            let Some((version, body)) = row else { return Ok(None) };
            let conversation: Conversation = serde_json::from_str(&body)
                .map_err(|error| StoreError::Corrupt { session: session.clone(), message: error.to_string() })?;
            Ok(Some((conversation, to_version(version))))
        }))
    }

    fn save<'a>(
        &'a self,
        session: &'a str,
        conversation: &'a Conversation,
        expected: Option<u64>,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        let body = serde_json::to_string(conversation);
        let session = session.to_owned();
        Box::pin(async move {
            let body = body.map_err(|error| StoreError::Backend(Box::new(error)))?;
            self.with(move |connection| {
                // IMMEDIATE takes the write lock first, so the version read
                // here is still the current one when the row is written.
                let transaction =
                    connection.transaction_with_behavior(TransactionBehavior::Immediate).map_err(backend)?;
                let found: Option<i64> = transaction
                    .query_row("SELECT version FROM conversations WHERE session = ?1", [&session], |row| row.get(0))
                    .optional()
                    .map_err(backend)?;
                let found = found.map(to_version);
                if found != expected {
                    return Err(StoreError::Conflict { session, expected, found });
                }
                // A session saved again after a delete goes on from its
                // deleted version.
                let deleted: Option<i64> = match found {
                    Some(_) => None,
                    None => transaction
                        .query_row("SELECT version FROM deleted_sessions WHERE session = ?1", [&session], |row| {
                            row.get(0)
                        })
                        .optional()
                        .map_err(backend)?,
                };
                let version = found.or(deleted.map(to_version)).unwrap_or(0) + 1;
                let stored = i64::try_from(version).map_err(|error| StoreError::Backend(Box::new(error)))?;
                if deleted.is_some() {
                    transaction
                        .execute("DELETE FROM deleted_sessions WHERE session = ?1", [&session])
                        .map_err(backend)?;
                }
                transaction
                    .execute(
                        "INSERT INTO conversations (session, version, body, updated_at) VALUES (?1, ?2, ?3, ?4)
                         ON CONFLICT (session) DO UPDATE SET version = excluded.version, body = excluded.body,
                         updated_at = excluded.updated_at",
                        params![session, stored, body, now_millis()],
                    )
                    .map_err(backend)?;
                transaction.commit().map_err(backend)?;
                Ok(version)
            })
            .await
        })
    }

    fn list(&self) -> BoxFuture<'_, Result<Vec<String>, StoreError>> {
        Box::pin(self.with(|connection| {
            let mut statement =
                connection.prepare("SELECT session FROM conversations ORDER BY session").map_err(backend)?;
            let sessions = statement.query_map([], |row| row.get(0)).map_err(backend)?;
            sessions.collect::<Result<Vec<String>, _>>().map_err(backend)
        }))
    }

    fn delete<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        let session = session.to_owned();
        Box::pin(self.with(move |connection| {
            let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate).map_err(backend)?;
            let found: Option<i64> = transaction
                .query_row("SELECT version FROM conversations WHERE session = ?1", [&session], |row| row.get(0))
                .optional()
                .map_err(backend)?;
            let Some(version) = found else { return Ok(false) };
            transaction.execute("DELETE FROM conversations WHERE session = ?1", [&session]).map_err(backend)?;
            transaction
                .execute(
                    "INSERT INTO deleted_sessions (session, version) VALUES (?1, ?2)
                     ON CONFLICT (session) DO UPDATE SET version = excluded.version",
                    params![session, version],
                )
                .map_err(backend)?;
            transaction.commit().map_err(backend)?;
            Ok(true)
        }))
    }
}
