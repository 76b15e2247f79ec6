//! The future of one model call as the engine awaits it: started at its
//! first poll and polled in the call's `chat` span, in one layer.

use std::pin::Pin;
use std::task::{Context, Poll};

use tracing::Span;

use crate::model::{BoxFuture, Model, ModelError, ModelRequest, ModelResponse};

/// What a model call ends with.
type Outcome = Result<ModelResponse, ModelError>;

/// One model call in its `chat` span: what `call.instrument(span)` on an
/// `async` block asking the model does, without the block. The model is
/// asked at the first poll (a journal that replays the call never polls it,
/// and the model never hears of it), with the span entered, so the spans
/// the model makes nest under it; every poll of the model's future runs in
/// the span too.
pub(super) struct ModelCall<'a> {
    span: Span,
    state: State<'a>,
}

enum State<'a> {
    /// A call waited for whole, not asked yet.
    Whole(&'a dyn Model, ModelRequest<'a>),
    /// Asked (or a streamed call, which its own future starts).
    Running(BoxFuture<'a, Outcome>),
    /// Taken out while the model is asked.
    Asking,
}

impl<'a> ModelCall<'a> {
    /// `request` to `model`, its response waited for whole.
    pub(super) fn whole(model: &'a dyn Model, request: ModelRequest<'a>, span: Span) -> Self {
        Self { span, state: State::Whole(model, request) }
    }

    /// A call whose `future` does the asking (a streamed call, reporting its deltas).
    pub(super) fn started(future: BoxFuture<'a, Outcome>, span: Span) -> Self {
        Self { span, state: State::Running(future) }
    }
}

impl Future for ModelCall<'_> {
    type Output = Outcome;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Outcome> {
        let this = &mut *self;
        let _entered = this.span.enter();
        if let State::Whole(..) = this.state
            && let State::Whole(model, request) = std::mem::replace(&mut this.state, State::Asking)
        {
            this.state = State::Running(model.complete(request));
        }
        match &mut this.state {
            State::Running(future) => future.as_mut().poll(cx),
            State::Whole(..) | State::Asking => unreachable!("the model is asked above"),
        }
    }
}
