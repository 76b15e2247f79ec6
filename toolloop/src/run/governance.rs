//! Governance: a policy decides, before each tool call, whether it may run.

use std::fmt;
use std::sync::Arc;

use serde::Serialize;

use crate::message::ToolCall;
use crate::model::BoxFuture;

/// What a [policy](Governance::policy) decides about one tool call.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Decision {
    /// Run it.
    Allow,
    /// Do not run it; the model sees an error result
    /// ([`FailureKind::Denied`](crate::FailureKind::Denied)) saying `reason`.
    Deny(String),
    /// Ask the [approver](Governance::approver).
    Ask,
}

/// What an approver answers.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Approval {
    /// Run the call.
    Approve,
    /// Do not run it; the model sees an error result
    /// ([`FailureKind::ApprovalDenied`](crate::FailureKind::ApprovalDenied)).
    Reject(String),
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
    /// The approver rejected it.
    Rejected(String),
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
    /// cancellation and deadline still apply).
    fn approve<'a>(&'a self, call: &'a ToolCall) -> BoxFuture<'a, Approval>;
}

impl<F, Fut> Approver for F
where
    F: Fn(ToolCall) -> Fut + Send + Sync,
    Fut: Future<Output = Approval> + Send + 'static,
{
    fn approve<'a>(&'a self, call: &'a ToolCall) -> BoxFuture<'a, Approval> {
        Box::pin(self(call.clone()))
    }
}

type Policy = dyn Fn(&ToolCall) -> Decision + Send + Sync;

/// The policy and approver consulted before each tool call. Allows
/// everything by default.
#[derive(Clone, Default)]
pub struct Governance {
    policy: Option<Arc<Policy>>,
    approver: Option<Arc<dyn Approver>>,
}

impl fmt::Debug for Governance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Governance")
            .field("policy", &self.policy.is_some())
            .field("approver", &self.approver.is_some())
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
    /// closure `|call: ToolCall| async { Approval::Approve }` works.
    pub fn approver(mut self, approver: impl Approver + 'static) -> Self {
        self.approver = Some(Arc::new(approver));
        self
    }

    /// Decides about `call`.
    pub(crate) async fn decide(&self, call: &ToolCall) -> Verdict {
        let decision = self.policy.as_ref().map_or(Decision::Allow, |policy| policy(call));
        match decision {
            Decision::Allow => Verdict::Allowed,
            Decision::Deny(reason) => Verdict::Denied(reason),
            Decision::Ask => match &self.approver {
                None => Verdict::Rejected("approval is required but no approver is configured".to_owned()),
                Some(approver) => match approver.approve(call).await {
                    Approval::Approve => Verdict::Approved,
                    Approval::Reject(reason) => Verdict::Rejected(reason),
                },
            },
        }
    }
}
