//! The Restate context a durable run records its steps in.

use restate_sdk::prelude::*;

use crate::BoxFuture;

/// The context of the Restate handler a run executes in: a service's, a
/// virtual object's exclusive handler's, or a workflow's.
///
/// Made from a reference to the handler's context: `DurableContext::from(&ctx)`.
#[derive(Clone, Copy)]
pub enum DurableContext<'c> {
    /// A service handler.
    Service(&'c Context<'c>),
    /// An exclusive handler of a virtual object.
    Object(&'c ObjectContext<'c>),
    /// A workflow's run handler.
    Workflow(&'c WorkflowContext<'c>),
}

impl std::fmt::Debug for DurableContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("DurableContext").field(&self.invocation_id()).finish()
    }
}

impl<'c> From<&'c Context<'c>> for DurableContext<'c> {
    fn from(ctx: &'c Context<'c>) -> Self {
        Self::Service(ctx)
    }
}

impl<'c> From<&'c ObjectContext<'c>> for DurableContext<'c> {
    fn from(ctx: &'c ObjectContext<'c>) -> Self {
        Self::Object(ctx)
    }
}

impl<'c> From<&'c WorkflowContext<'c>> for DurableContext<'c> {
    fn from(ctx: &'c WorkflowContext<'c>) -> Self {
        Self::Workflow(ctx)
    }
}

/// What one `ctx.run` step returns: the recorded JSON.
pub(crate) type StepWork<'a> = BoxFuture<'a, HandlerResult<Json<serde_json::Value>>>;

impl<'c> DurableContext<'c> {
    /// The id of the invocation.
    pub fn invocation_id(&self) -> &str {
        match self {
            Self::Service(ctx) => ctx.invocation_id(),
            Self::Object(ctx) => ctx.invocation_id(),
            Self::Workflow(ctx) => ctx.invocation_id(),
        }
    }

    /// The object's (or workflow's) key; `None` for a service.
    pub fn key(&self) -> Option<&str> {
        match self {
            Self::Service(_) => None,
            Self::Object(ctx) => Some(ctx.key()),
            Self::Workflow(ctx) => Some(ctx.key()),
        }
    }

    /// `work` as one journaled step named `name`. The step borrows what the
    /// run borrows, so the context is taken at the step's lifetime (a
    /// context is covariant in its lifetime).
    pub(crate) fn run_step<'a>(
        &'a self,
        name: String,
        retry: RunRetryPolicy,
        work: StepWork<'a>,
    ) -> BoxFuture<'a, Result<serde_json::Value, TerminalError>>
    where
        'c: 'a,
    {
        match *self {
            Self::Service(ctx) => {
                let ctx: &'a Context<'a> = ctx;
                Box::pin(
                    async move { ctx.run(move || work).name(name).retry_policy(retry).await.map(Json::into_inner) },
                )
            }
            Self::Object(ctx) => {
                let ctx: &'a ObjectContext<'a> = ctx;
                Box::pin(
                    async move { ctx.run(move || work).name(name).retry_policy(retry).await.map(Json::into_inner) },
                )
            }
            Self::Workflow(ctx) => {
                let ctx: &'a WorkflowContext<'a> = ctx;
                Box::pin(
                    async move { ctx.run(move || work).name(name).retry_policy(retry).await.map(Json::into_inner) },
                )
            }
        }
    }
}
