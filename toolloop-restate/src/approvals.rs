//! Approvals as durable promises: the pending ones, and deciding them.

use std::time::Duration;

use restate_sdk::prelude::*;
use serde::{Deserialize, Serialize};
use toolloop::ToolCall;
use toolloop::run::Decision;

/// A tool call waiting for a person's decision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PendingApproval {
    /// The tool call's id: what [`ToolApprovals`]' `approve` and `deny` take.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// Its arguments.
    pub arguments: serde_json::Value,
    /// The invocation waiting for the decision.
    pub invocation_id: String,
    /// The durable promise (awakeable) the decision completes.
    pub awakeable_id: String,
}

/// A decision on a pending approval: `{"call_id": "...", "reason": "..."}`
/// (the reason only for a denial).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApprovalDecision {
    /// The call decided on.
    pub call_id: String,
    /// Why it is denied (the model sees it).
    #[serde(default)]
    pub reason: Option<String>,
}

const PENDING: &str = "pending";

/// The virtual object holding the approvals pending in durable runs, keyed
/// like the run: a [session](crate::Session)'s id, or the invocation id of a
/// run in a service. Bind it to the endpoint beside the services that run
/// agents.
///
/// Over Restate's ingress (`http://localhost:8080`):
///
/// ```text
/// curl localhost:8080/ToolApprovals/<key>/list
/// curl localhost:8080/ToolApprovals/<key>/approve --json '{"call_id": "call_1"}'
/// curl localhost:8080/ToolApprovals/<key>/deny --json '{"call_id": "call_1", "reason": "not today"}'
/// ```
///
/// A run with an [approval timeout](crate::RestateJournal::approval_timeout)
/// sends itself an `expire` for the call, delayed by the timeout: the
/// decisions on one key run one at a time, so whichever of a reviewer's
/// decision and the timeout comes first decides the call, and the other
/// finds nothing pending (an `approve` is then a 404). A run whose
/// invocation is cancelled while it waits withdraws its call the same way.
#[derive(Clone, Copy, Debug, Default)]
pub struct ToolApprovals;

#[restate_sdk::object]
impl ToolApprovals {
    /// Records a pending approval (sent by the waiting run).
    #[handler]
    async fn add(&self, ctx: ObjectContext<'_>, pending: Json<PendingApproval>) -> HandlerResult<()> {
        let mut all = load(&ctx).await?;
        let pending = pending.into_inner();
        all.retain(|earlier| earlier.call_id != pending.call_id);
        all.push(pending);
        ctx.set(PENDING, Json(all));
        Ok(())
    }

    /// The pending approvals.
    #[handler]
    async fn list(&self, ctx: SharedObjectContext<'_>) -> HandlerResult<Json<Vec<PendingApproval>>> {
        let all = ctx.get::<Json<Vec<PendingApproval>>>(PENDING).await?;
        Ok(Json(all.map(Json::into_inner).unwrap_or_default()))
    }

    /// Approves a pending call: the run executes it.
    #[handler]
    async fn approve(&self, ctx: ObjectContext<'_>, decision: Json<ApprovalDecision>) -> HandlerResult<()> {
        decide(&ctx, &decision.into_inner().call_id, Decision::Allow).await
    }

    /// Denies a pending call: the model sees the reason.
    #[handler]
    async fn deny(&self, ctx: ObjectContext<'_>, decision: Json<ApprovalDecision>) -> HandlerResult<()> {
        let decision = decision.into_inner();
        let reason = decision.reason.unwrap_or_else(|| "denied by a reviewer".to_owned());
        decide(&ctx, &decision.call_id, Decision::Deny(reason)).await
    }

    /// Forgets a pending call (sent by runs of earlier versions when their
    /// approval timed out).
    #[handler]
    async fn remove(&self, ctx: ObjectContext<'_>, decision: Json<ApprovalDecision>) -> HandlerResult<()> {
        let mut all = load(&ctx).await?;
        all.retain(|pending| pending.call_id != decision.0.call_id);
        ctx.set(PENDING, Json(all));
        Ok(())
    }

    /// Denies a call nobody decided in time (sent by the waiting run, to
    /// arrive when its approval timeout passes), if it is still pending.
    /// Decisions on one key run one at a time, so a reviewer's decision and
    /// the timeout cannot both win: an `approve` after it is a 404, and a
    /// timeout after a decision changes nothing.
    #[handler]
    async fn expire(&self, ctx: ObjectContext<'_>, expiry: Json<ApprovalExpiry>) -> HandlerResult<()> {
        let ApprovalExpiry { call_id, awakeable_id, reason } = expiry.into_inner();
        let mut all = load(&ctx).await?;
        let expired = |pending: &PendingApproval| pending.awakeable_id == awakeable_id && pending.call_id == call_id;
        let Some(index) = all.iter().position(expired) else { return Ok(()) };
        all.remove(index);
        ctx.resolve_awakeable(&awakeable_id, Json(Decision::Deny(reason)));
        ctx.set(PENDING, Json(all));
        Ok(())
    }
}

/// A pending approval whose time is up: the call, its durable promise, and
/// what the model is told.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApprovalExpiry {
    /// The call.
    pub call_id: String,
    /// Its durable promise (awakeable).
    pub awakeable_id: String,
    /// Why it is denied (the model sees it).
    pub reason: String,
}

async fn load(ctx: &ObjectContext<'_>) -> Result<Vec<PendingApproval>, TerminalError> {
    Ok(ctx.get::<Json<Vec<PendingApproval>>>(PENDING).await?.map(Json::into_inner).unwrap_or_default())
}

async fn decide(ctx: &ObjectContext<'_>, call_id: &str, approval: Decision) -> HandlerResult<()> {
    let mut all = load(ctx).await?;
    let Some(index) = all.iter().position(|pending| pending.call_id == call_id) else {
        let known: Vec<&str> = all.iter().map(|pending| pending.call_id.as_str()).collect();
        let message = format!("no approval is pending for call `{call_id}`; pending: {known:?}");
        return Err(TerminalError::new_with_code(404, message).into());
    };
    let pending = all.remove(index);
    ctx.resolve_awakeable(&pending.awakeable_id, Json(approval));
    ctx.set(PENDING, Json(all));
    Ok(())
}

/// Waits, durably, for the decision on `call`: registers it as pending
/// under `key` and suspends until it is decided or `timeout` passes. One
/// function per context type (the context traits' futures do not unify
/// across a generic context).
macro_rules! wait_in {
    ($name:ident, $context:ident) => {
        pub(crate) async fn $name(
            ctx: &$context<'_>,
            key: String,
            call: &ToolCall,
            invocation_id: String,
            timeout: Option<Duration>,
        ) -> Result<Decision, TerminalError> {
            let (awakeable_id, decision) = ctx.awakeable::<Json<Decision>>();
            let pending = PendingApproval {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                arguments: call.input.clone(),
                invocation_id,
                awakeable_id: awakeable_id.clone(),
            };
            let approvals = || ctx.object_client::<ToolApprovalsClient>(key.clone());
            let expiry =
                |reason| ApprovalExpiry { call_id: call.id.clone(), awakeable_id: awakeable_id.clone(), reason };
            approvals().add(Json(pending)).send();
            if let Some(timeout) = timeout {
                // The timeout is decided where the reviewers' decisions
                // are, one at a time with them: whichever comes first
                // completes the promise.
                approvals().expire(Json(expiry(timed_out(timeout)))).send_after(timeout);
            }
            let decision = decision.await;
            if decision.is_err() {
                // The run stopped waiting (its invocation was cancelled):
                // the call is no longer pending, and a reviewer's decision
                // now finds nothing to decide.
                approvals().expire(Json(expiry(STOPPED_WAITING.to_owned()))).send();
            }
            decision.map(Json::into_inner)
        }
    };
}

wait_in!(wait_in_service, Context);
wait_in!(wait_in_object, ObjectContext);
wait_in!(wait_in_workflow, WorkflowContext);

/// Why a call is no longer pending when its run stops waiting for it.
const STOPPED_WAITING: &str = "the run stopped waiting for the decision";

/// What the model is told when nobody decided in time.
fn timed_out(timeout: Duration) -> String {
    format!("nobody approved the call within {} s, so it was not executed", timeout.as_secs_f64())
}
