//! Sessions: a conversation per key, in a Restate virtual object.

use std::time::Duration;

use restate_sdk::prelude::*;
use toolloop::{Agent, Conversation};

use crate::journal::RestateJournal;
use crate::run::DurableError;

const CONVERSATION: &str = "conversation";

/// A ready virtual object serving a text agent as sessions: its
/// [`Conversation`] lives in Restate state under the session id (the
/// object's key).
///
/// - `message` (exclusive) takes the user's message (a JSON string), runs
///   the agent durably on the session's conversation, stores it, and
///   returns the answer. Restate runs one `message` per session at a time,
///   in order of arrival, so two messages to one session never race;
///   different sessions run in parallel, on any worker.
/// - `conversation` (shared) returns the stored conversation.
///
/// A stored conversation that no longer deserializes fails `message` with
/// a terminal error naming it; it is left as it is.
///
/// ```no_run
/// use restate_sdk::prelude::*;
/// use toolloop::Agent;
/// use toolloop_restate::{Session, ToolApprovals};
///
/// # async fn serve(agent: Agent) {
/// let endpoint = Endpoint::builder().bind(Session::new(agent)).bind(ToolApprovals).build();
/// HttpServer::new(endpoint).listen_and_serve("0.0.0.0:9080".parse().unwrap()).await;
/// # }
/// ```
///
/// ```text
/// curl localhost:8080/Session/alice/message --json '"What is the weather in Paris?"'
/// curl localhost:8080/Session/alice/conversation
/// ```
pub struct Session {
    agent: Agent,
    approval_timeout: Option<Duration>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("agent", &self.agent).finish_non_exhaustive()
    }
}

impl Session {
    /// Sessions answered by `agent`.
    pub fn new(agent: Agent) -> Self {
        Self { agent, approval_timeout: None }
    }

    /// Denies tool calls nobody approved within `timeout`
    /// (see [`RestateJournal::approval_timeout`]).
    #[must_use]
    pub fn approval_timeout(mut self, timeout: Duration) -> Self {
        self.approval_timeout = Some(timeout);
        self
    }
}

#[restate_sdk::object]
impl Session {
    /// Answers the user's message in the session's conversation.
    #[handler]
    async fn message(&self, ctx: ObjectContext<'_>, text: String) -> HandlerResult<String> {
        let stored = ctx.get::<Json<serde_json::Value>>(CONVERSATION).await?;
        let mut conversation = match stored {
            None => Conversation::new(),
            Some(Json(json)) => serde_json::from_value::<Conversation>(json).map_err(|error| {
                let message = format!("the stored conversation of session `{}` does not read: {error}", ctx.key());
                TerminalError::new_with_code(500, message)
            })?,
        };
        conversation.push_user(text);
        let mut journal = RestateJournal::new(&ctx);
        if let Some(timeout) = self.approval_timeout {
            journal = journal.approval_timeout(timeout);
        }
        let outcome = journal.run(&self.agent, &mut conversation).await;
        if let Err(DurableError::Journal(error)) = outcome {
            // Nothing is stored from a run that could not read its journal.
            return Err(TerminalError::new(error.to_string()).into());
        }
        let json = serde_json::to_value(&conversation).map_err(|error| TerminalError::new(error.to_string()))?;
        ctx.set(CONVERSATION, Json(json));
        Ok(outcome?.output)
    }

    /// The session's conversation so far.
    #[handler]
    async fn conversation(&self, ctx: SharedObjectContext<'_>) -> HandlerResult<Json<serde_json::Value>> {
        let stored = ctx.get::<Json<serde_json::Value>>(CONVERSATION).await?;
        Ok(stored.unwrap_or_else(|| Json(serde_json::json!({"messages": []}))))
    }
}
