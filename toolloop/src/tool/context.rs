//! What a tool call knows about the run it belongs to, while it runs.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use crate::cancel::{CancellationToken, Cancelled, guarded};
use crate::message::ToolCall;

tokio::task_local! {
    static CURRENT: ToolContext;
}

/// The run a tool call belongs to, as the tool sees it while it runs: the
/// call's id and tool, the run's cancellation token, how long the call may
/// still take, the tokens left in the run's budget, and how deeply the call
/// is nested in other tool calls (an [agent used as a tool](crate::agent::AgentTool)
/// runs its own tool calls one level deeper).
///
/// The engine sets it around each tool execution; read it with
/// [`ToolContext::current`] from the tool's handler. It is bound to the
/// task running the call: work the handler spawns onto other tasks does
/// not see it (hand them what they need).
///
/// ```
/// use toolloop::testing::ScriptedModel;
/// use toolloop::{Agent, Conversation, ModelResponse, ToolCall, ToolContext};
///
/// /// Say which call this is.
/// #[derive(toolloop::Tool)]
/// struct WhoAmI {}
///
/// impl WhoAmI {
///     async fn run(self) -> Result<String, String> {
///         let context = ToolContext::current().ok_or("not run by an engine")?;
///         Ok(format!("call {} of `{}` at depth {}", context.call_id(), context.tool(), context.depth()))
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let model = ScriptedModel::new()
///     .respond(ModelResponse::from_tool_calls([ToolCall::new("c1", "who_am_i", serde_json::json!({}))]))
///     .respond(ModelResponse::from_text("done"));
/// let agent = Agent::builder().model(model.clone()).tool::<WhoAmI>().build()?;
/// let mut conversation = Conversation::new();
/// conversation.push_user("Who are you?");
/// agent.run(&mut conversation).await?;
/// let result = model.requests()[1].messages.last().unwrap().tool_results().next().unwrap().content.clone();
/// assert_eq!(result, "call c1 of `who_am_i` at depth 0");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
///
/// Durable runs will add what a tool needs to make its side effects
/// idempotent (a key per call, from the run's journal) here, beside the
/// call id: fields are private, so the context grows without breaking tools.
#[derive(Clone)]
pub struct ToolContext {
    call_id: String,
    tool: String,
    /// The run's deadline, narrowed by the tool's timeout.
    deadline: Option<Instant>,
    /// What every call of the batch shares.
    batch: Arc<Batch>,
}

/// What every tool call of one batch shares.
struct Batch {
    cancel: CancellationToken,
    deadline: Option<Instant>,
    remaining_tokens: Option<u64>,
    /// The tools of the calls the batch is nested in, outermost first.
    path: Vec<String>,
    /// Where sub-runs started by its calls report (the engine's
    /// `run::RunLink`, which this layer carries without knowing); `None`
    /// outside an engine.
    run: Option<Arc<dyn Any + Send + Sync>>,
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("call_id", &self.call_id)
            .field("tool", &self.tool)
            .field("path", &self.batch.path)
            .field("deadline", &self.deadline)
            .field("remaining_tokens", &self.batch.remaining_tokens)
            .finish_non_exhaustive()
    }
}

impl ToolContext {
    /// The context of the tool call running on this task, or `None` outside
    /// a tool call (or on a task the tool spawned).
    pub fn current() -> Option<Self> {
        CURRENT.try_with(Clone::clone).ok()
    }

    /// The call's id, as the model wrote it (unique within the conversation).
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The name of the tool being called.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The run's cancellation token: cancelled when the run is. Work the
    /// tool starts should stop when it fires (a sub-run takes a child of it).
    pub fn cancel(&self) -> &CancellationToken {
        &self.batch.cancel
    }

    /// When the call must be over: the earlier of the run's deadline
    /// ([`max_duration`](crate::AgentBuilder::max_duration) from its
    /// start) and the end of the tool's timeout. `None` when neither is set
    /// (a call made through [`ToolSet::execute`](crate::ToolSet::execute)
    /// always has a timeout, so a deadline).
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// How long the call may still take (see [`deadline`](Self::deadline));
    /// zero once it has passed.
    pub fn remaining_time(&self) -> Option<Duration> {
        self.deadline.map(|deadline| deadline.saturating_duration_since(Instant::now()))
    }

    /// The tokens left in the run's [token budget](crate::AgentBuilder::token_budget)
    /// when the call's batch started; `None` without a budget. Calls of one
    /// batch that run at once each see the same figure.
    pub fn remaining_tokens(&self) -> Option<u64> {
        self.batch.remaining_tokens
    }

    /// How many tool calls this one is nested in: 0 for a call of a run
    /// started by your code, 1 for a call made by a sub-run that a tool
    /// call started, and so on.
    pub fn depth(&self) -> u32 {
        u32::try_from(self.batch.path.len()).unwrap_or(u32::MAX)
    }

    /// The tools of the calls this one is nested in, outermost first
    /// (empty at depth 0).
    pub fn path(&self) -> &[String] {
        &self.batch.path
    }

    /// Where sub-runs started by this call report (a `run::RunLink`);
    /// `None` outside an engine.
    pub(crate) fn run<T: Any>(&self) -> Option<&T> {
        self.batch.run.as_deref()?.downcast_ref()
    }
}

/// What every tool call of one batch shares; makes each call's context.
pub(crate) struct CallScope(Arc<Batch>);

impl CallScope {
    /// The scope of calls made on this task: nested one level below the
    /// tool call running here, if any.
    pub(crate) fn new(
        cancel: &CancellationToken,
        deadline: Option<Instant>,
        remaining_tokens: Option<u64>,
        run: Option<Arc<dyn Any + Send + Sync>>,
    ) -> Self {
        let path = CURRENT
            .try_with(|outer| outer.batch.path.iter().cloned().chain([outer.tool.clone()]).collect())
            .unwrap_or_default();
        Self(Arc::new(Batch { cancel: cancel.clone(), deadline, remaining_tokens, path, run }))
    }

    /// The context of `call`.
    pub(crate) fn context(&self, call: &ToolCall) -> ToolContext {
        ToolContext {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            deadline: self.0.deadline,
            batch: Arc::clone(&self.0),
        }
    }
}

impl ToolContext {
    /// The same context, due no later than `timeout` from now.
    pub(crate) fn within(mut self, timeout: Duration) -> Self {
        // A timeout too long to add to a clock reading bounds nothing.
        let Some(end) = Instant::now().checked_add(timeout) else { return self };
        self.deadline = Some(self.deadline.map_or(end, |deadline| deadline.min(end)));
        self
    }

    /// Runs `future` with this context as the current one; cut short with
    /// `Err(Cancelled)` when the run's token is cancelled.
    pub(crate) async fn scope<F: Future>(self, future: F) -> Result<F::Output, Cancelled> {
        let batch = Arc::clone(&self.batch);
        let scoped = pin!(CURRENT.scope(self, future));
        guarded(Some(&batch.cancel), None, scoped).await.map_err(|_cancelled| Cancelled)
    }
}
