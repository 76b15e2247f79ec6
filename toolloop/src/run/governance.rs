//! Governance: a policy decides, before each tool call, whether it may run.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use futures_util::FutureExt as _;
use serde::{Deserialize, Serialize};

use super::panic::panic_message;
use crate::message::ToolCall;
use crate::model::BoxFuture;

/// What governance answers about one tool call: the answer of the
/// [policy](Governance::policy), and of the [approver](Governance::approver)
/// when the policy asks it.
///
/// Each answer means one thing from either: [`Ask`](Self::Ask) passes the
/// call to the next one in line (policy, then approver, then a person).
/// The [verdict](Verdict) recorded for the call says which of them decided.
///
/// Serialised (a journal records the approver's answer) as `"allow"`,
/// `"ask"`, `{"deny": reason}` or `{"defer": reason}`; `"approve"` reads as
/// `"allow"` (the form journals recorded before the approver answered with
/// a `Decision`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Decision {
    /// Run it ([`Verdict::Allowed`] from the policy, [`Verdict::Approved`]
    /// from the approver).
    #[serde(alias = "approve")]
    Allow,
    /// Do not run it; the model sees an error result saying `reason`:
    /// [`FailureKind::Denied`](crate::FailureKind::Denied) from the policy,
    /// [`FailureKind::ApprovalDenied`](crate::FailureKind::ApprovalDenied)
    /// from the approver.
    Deny(String),
    /// Let the next one in line decide. From the policy: the
    /// [approver](Governance::approver) is asked (without one, the call is
    /// denied, unless the run's [journal](super::journal) gets decisions
    /// elsewhere, as `toolloop-restate` does from a person). From the
    /// approver: a person is, later; the call is deferred for approval as
    /// with [`Defer`](Self::Defer), the reason saying that the approver
    /// passed it on (unless the journal gets decisions from a person
    /// itself: under `toolloop-restate` the run waits for one, durably, one
    /// call at a time).
    Ask,
    /// Do not run it now: the run pauses with the call pending (a
    /// [`DeferredCall`](super::DeferredCall) for approval, saying `reason`),
    /// and a person approves or denies it when the run is resumed, in this
    /// process or another ([`Agent::resume`](crate::Agent::resume)). An
    /// approver answers this when nobody can decide now (say, no operator is
    /// online).
    Defer(String),
}

/// What governance decided about a call, as recorded in the audit trail.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "verdict", content = "reason")]
#[non_exhaustive]
pub enum Verdict {
    /// The policy allowed it.
    Allowed,
    /// The approver approved it.
    Approved,
    /// The policy denied it.
    Denied(String),
    /// The approver denied it.
    ApprovalDenied(String),
    /// Governance did not decide: the run stopped (cancellation,
    /// `max_duration`, a limit, a stop policy) before it did, or before the
    /// call ran; or the call was never put to it (a call of a response cut
    /// off at the token limit, a call beyond `max_tool_calls_per_iteration`).
    Undecided,
    /// The policy or the approver deferred it for approval (see
    /// [`Decision::Defer`]); the run pauses with the call pending.
    Deferred(String),
}

impl Verdict {
    /// Whether the call was let through.
    pub fn allows(&self) -> bool {
        matches!(self, Self::Allowed | Self::Approved)
    }
}

/// Asks someone (a person, a service) whether a tool call may run.
pub trait Approver: Send + Sync {
    /// Decides about `call`; may take as long as it needs (the run's
    /// cancellation and `max_duration` still apply).
    /// ([`Decision`] says what each answer does when an approver gives it.)
    fn approve<'a>(&'a self, call: &'a ToolCall) -> BoxFuture<'a, Decision>;
}

impl<F, Fut> Approver for F
where
    F: Fn(ToolCall) -> Fut + Send + Sync,
    Fut: Future<Output = Decision> + Send + 'static,
{
    fn approve<'a>(&'a self, call: &'a ToolCall) -> BoxFuture<'a, Decision> {
        Box::pin(self(call.clone()))
    }
}

type Policy = dyn Fn(&ToolCall) -> Decision + Send + Sync;

/// Why a call waits when its approver answered [`Decision::Ask`].
const APPROVER_ASKED: &str = "the approver asked for a person to decide";

/// The policy and approver consulted before each tool call. Allows
/// everything by default.
///
/// A denied call does not run: the model gets an error result
/// with [`FailureKind::Denied`](crate::FailureKind::Denied) or
/// [`FailureKind::ApprovalDenied`](crate::FailureKind::ApprovalDenied), and
/// an audit record is made for every call.
///
/// ```
/// use toolloop::run::{Decision, Governance};
/// use toolloop::testing::ScriptedModel;
/// use toolloop::{Agent, Conversation, FailureKind, ModelResponse, ToolCall};
///
/// /// Delete a file.
/// #[derive(toolloop::Tool)]
/// struct DeleteFile {
///     /// Its path.
///     path: String,
/// }
///
/// impl DeleteFile {
///     async fn run(self) -> Result<String, std::convert::Infallible> {
///         Ok(format!("deleted {}", self.path))
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let governance = Governance::new()
///     .policy(|call| match call.input["path"].as_str() {
///         Some(path) if path.starts_with("/etc") => Decision::Deny("system files are off limits".into()),
///         Some(path) if path.starts_with("/home") => Decision::Ask,
///         _ => Decision::Allow,
///     })
///     // Any async function of the call: a chat message, a ticket, a prompt.
///     .approver(|call: ToolCall| async move { Decision::Deny(format!("nobody approved {}", call.name)) });
///
/// let delete = |id: &str, path: &str| ToolCall::new(id, "delete_file", serde_json::json!({ "path": path }));
/// let model = ScriptedModel::new()
///     .respond(ModelResponse::from_tool_calls([delete("1", "/etc/hosts"), delete("2", "/home/a"), delete("3", "/tmp/b")]))
///     .respond(ModelResponse::from_text("Deleted /tmp/b only."));
/// let agent = Agent::builder().model(model).tool::<DeleteFile>().governance(governance).build()?;
///
/// let mut conversation = Conversation::new();
/// conversation.push_user("Clean up.");
/// let done = agent.run(&mut conversation).await?;
/// let kinds: Vec<_> = conversation.messages()[2].tool_results().map(|result| result.failure).collect();
/// assert_eq!(kinds, [Some(FailureKind::Denied), Some(FailureKind::ApprovalDenied), None]);
/// assert_eq!(done.metadata.tool_calls, 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone, Default)]
pub struct Governance {
    policy: Option<Arc<Policy>>,
    approver: Option<Arc<dyn Approver>>,
    /// Tools whose calls are deferred for approval unless the policy denies them.
    needs_approval: Vec<String>,
}

impl fmt::Debug for Governance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Governance")
            .field("policy", &self.policy.is_some())
            .field("approver", &self.approver.is_some())
            .field("needs_approval", &self.needs_approval)
            .finish()
    }
}

impl Governance {
    /// Allows every call.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the policy deciding about each call.
    pub fn policy(mut self, policy: impl Fn(&ToolCall) -> Decision + Send + Sync + 'static) -> Self {
        self.policy = Some(Arc::new(policy));
        self
    }

    /// Sets who is asked when the policy says [`Decision::Ask`]. An async
    /// closure `|call: ToolCall| async { Decision::Allow }` works.
    pub fn approver(mut self, approver: impl Approver + 'static) -> Self {
        self.approver = Some(Arc::new(approver));
        self
    }

    /// Marks tool `name` as needing approval: its calls are deferred (the
    /// run pauses with them pending, see [`Decision::Defer`]) unless the
    /// policy denies them first. Call once per tool.
    pub fn needs_approval(mut self, name: impl Into<String>) -> Self {
        self.needs_approval.push(name.into());
        self
    }

    /// Decides about `call`. A policy or approver that panics denies the
    /// call rather than breaking the run.
    /// The approver is asked through `ask` (the run's journal, which
    /// records its decision).
    pub(crate) async fn decide<'a>(
        &'a self,
        call: &ToolCall,
        ask: impl FnOnce(Option<&'a dyn Approver>) -> BoxFuture<'a, Decision>,
    ) -> Verdict {
        let decision = match &self.policy {
            None => Decision::Allow,
            Some(policy) => catch_unwind(AssertUnwindSafe(|| policy(call))).unwrap_or_else(|panic| {
                Decision::Deny(format!("the tool policy panicked: {}", panic_message(&*panic)))
            }),
        };
        let decision = match decision {
            Decision::Allow | Decision::Ask if self.needs_approval.contains(&call.name) => {
                Decision::Defer(format!("`{}` needs approval", call.name))
            }
            decision => decision,
        };
        match decision {
            Decision::Allow => Verdict::Allowed,
            Decision::Defer(reason) => Verdict::Deferred(reason),
            Decision::Deny(reason) => Verdict::Denied(reason),
            Decision::Ask => {
                let approval = ask(self.approver.as_deref());
                match AssertUnwindSafe(approval).catch_unwind().await {
                    Ok(Decision::Allow) => Verdict::Approved,
                    Ok(Decision::Deny(reason)) => Verdict::ApprovalDenied(reason),
                    Ok(Decision::Ask) => Verdict::Deferred(APPROVER_ASKED.to_owned()),
                    Ok(Decision::Defer(reason)) => Verdict::Deferred(reason),
                    Err(panic) => Verdict::ApprovalDenied(format!("the approver panicked: {}", panic_message(&*panic))),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Decision;

    /// A journal records an approver's answer in this form; `"approve"` is
    /// how journals recorded an approval before the approver answered with
    /// a `Decision`, and still reads.
    #[test]
    fn a_decision_is_recorded_in_one_form_and_reads_the_older_one() {
        let answers = [
            (Decision::Allow, json!("allow")),
            (Decision::Ask, json!("ask")),
            (Decision::Deny("no".into()), json!({"deny": "no"})),
            (Decision::Defer("later".into()), json!({"defer": "later"})),
        ];
        for (decision, form) in answers {
            assert_eq!(serde_json::to_value(&decision).unwrap(), form);
            assert_eq!(serde_json::from_value::<Decision>(form).unwrap(), decision);
        }
        assert_eq!(serde_json::from_value::<Decision>(json!("approve")).unwrap(), Decision::Allow);
    }
}
