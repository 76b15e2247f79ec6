//! Sessions: a conversation per key, in a Restate virtual object.

use std::time::Duration;

use std::collections::BTreeMap;

use restate_sdk::prelude::*;
use toolloop::run::{DeferredCall, Resolution};
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
/// - A run that pauses (a call that [needs
///   approval](toolloop::run::Governance::needs_approval), an [external
///   tool](toolloop::AgentBuilder::external_tool)) is stored paused, and
///   `message` answers 409 naming the calls that wait. While they wait,
///   `message` is refused (409, nothing stored); `pending` (shared) lists
///   them, and `resume` (exclusive) takes a JSON object of a
///   [`Resolution`] per call id, finishes the run durably (an approved
///   call runs once, however often the invocation is replayed), stores
///   the conversation and returns the answer.
/// - `conversation` (shared) returns the stored conversation.
///
/// A stored conversation that no longer deserializes fails `message`,
/// `resume` and `pending` with a terminal error naming it; it is left as
/// it is.
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
/// curl localhost:8080/Session/alice/pending
/// curl localhost:8080/Session/alice/resume --json '{"call_1": {"resolution": "output", "content": "Sunny"}}'
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
        let mut conversation = read(ctx.get(CONVERSATION).await?, ctx.key())?;
        if conversation.is_pending() {
            return Err(
                TerminalError::new_with_code(409, waiting(ctx.key(), &conversation, "refused a message")).into()
            );
        }
        conversation.push_user(text);
        let journal = self.journal(&ctx);
        let outcome = journal.run(&self.agent, &mut conversation).await;
        finish(&ctx, &conversation, outcome)
    }

    /// Resumes the session's paused run with a resolution per pending
    /// call id.
    #[handler]
    async fn resume(
        &self,
        ctx: ObjectContext<'_>,
        Json(resolutions): Json<BTreeMap<String, Resolution>>,
    ) -> HandlerResult<String> {
        let mut conversation = read(ctx.get(CONVERSATION).await?, ctx.key())?;
        let journal = self.journal(&ctx);
        let outcome = journal.resume(&self.agent, &mut conversation, resolutions).await;
        if let Err(DurableError::Run(error)) = &outcome
            && error.resume_error().is_some()
        {
            // Refused: the conversation is as it was; nothing is stored.
            return Err(TerminalError::new_with_code(409, error.to_string()).into());
        }
        finish(&ctx, &conversation, outcome)
    }

    /// The calls the session's paused run waits for (none when it is not
    /// paused).
    #[handler]
    async fn pending(&self, ctx: SharedObjectContext<'_>) -> HandlerResult<Json<Vec<DeferredCall>>> {
        let conversation = read(ctx.get(CONVERSATION).await?, ctx.key())?;
        Ok(Json(conversation.deferred_calls().to_vec()))
    }

    /// The session's conversation so far.
    #[handler]
    async fn conversation(&self, ctx: SharedObjectContext<'_>) -> HandlerResult<Json<serde_json::Value>> {
        let stored = ctx.get::<Json<serde_json::Value>>(CONVERSATION).await?;
        Ok(stored.unwrap_or_else(|| Json(serde_json::json!({"messages": []}))))
    }
}

impl Session {
    fn journal<'c>(&self, ctx: &'c ObjectContext<'_>) -> RestateJournal<'c> {
        let journal = RestateJournal::new(ctx);
        match self.approval_timeout {
            Some(timeout) => journal.approval_timeout(timeout),
            None => journal,
        }
    }
}

/// The session's stored conversation (a new one when there is none); a
/// terminal error when it does not read.
fn read(stored: Option<Json<serde_json::Value>>, key: &str) -> Result<Conversation, HandlerError> {
    let Some(Json(json)) = stored else { return Ok(Conversation::new()) };
    serde_json::from_value::<Conversation>(json).map_err(|error| {
        let message = format!("the stored conversation of session `{key}` does not read: {error}");
        TerminalError::new_with_code(500, message).into()
    })
}

/// Stores the conversation a run left (unless its journal could not be
/// read) and answers with its output, or with why there is none.
fn finish(
    ctx: &ObjectContext<'_>,
    conversation: &Conversation,
    outcome: Result<toolloop::RunOutput<String>, DurableError>,
) -> HandlerResult<String> {
    if let Err(DurableError::Journal(error)) = outcome {
        // Nothing is stored from a run that could not read its journal.
        return Err(TerminalError::new(error.to_string()).into());
    }
    let json = serde_json::to_value(conversation).map_err(|error| TerminalError::new(error.to_string()))?;
    ctx.set(CONVERSATION, Json(json));
    match outcome {
        Err(DurableError::Run(error)) if error.is_deferred() => {
            Err(TerminalError::new_with_code(409, waiting(ctx.key(), conversation, "paused")).into())
        }
        outcome => Ok(outcome?.output),
    }
}

/// Says which calls the session waits for, and how to answer them.
fn waiting(key: &str, conversation: &Conversation, what: &str) -> String {
    let calls: Vec<String> = conversation
        .deferred_calls()
        .iter()
        .map(|deferred| format!("{} (`{}`: {})", deferred.call.id, deferred.call.name, deferred.reason))
        .collect();
    format!("session `{key}` {what}: tool calls wait for an answer: {}; answer them with `resume`", calls.join(", "))
}
