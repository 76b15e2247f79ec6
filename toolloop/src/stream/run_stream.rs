//! The stream of a run: its events as they happen, then its result.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::Stream;
use tokio::sync::mpsc;

use crate::cancel::BoxFuture;
use crate::conversation::Conversation;
use crate::run::event::RunEvent;
use crate::run::{EventSink, LoopEnd, Progress, RunError, RunOutput, ToolLoop};

/// A streamed run: a [`Stream`] of [`RunEvent`]s ending with
/// [`RunEvent::Finished`], then `None`.
///
/// The run advances only while the stream is polled. Dropping the stream
/// cancels the run where it is (mid-delta or mid-tool, as dropping the
/// future of a non-streamed run does); the conversation keeps only whole
/// turns up to there: a model call or a batch of tool calls cut short is
/// not written at all, so no call is left unanswered. Cancel through the
/// agent's [`CancellationToken`](crate::CancellationToken) instead to end
/// with a [`RunEvent::Finished`] that reports the cancellation and to keep
/// the cut batch, its unfinished calls answered as not executed.
#[must_use = "a run stream does nothing unless polled"]
pub struct RunStream<'a, T> {
    run: Option<BoxFuture<'a, Result<RunOutput<T>, RunError>>>,
    events: mpsc::UnboundedReceiver<Progress>,
    result: Option<Result<RunOutput<T>, RunError>>,
}

impl<'a, T: 'a> RunStream<'a, T> {
    /// The stream of the run `start` makes, given the sink to report to.
    pub(crate) fn new<F>(start: impl FnOnce(EventSink) -> F) -> Self
    where
        F: Future<Output = Result<RunOutput<T>, RunError>> + Send + 'a,
    {
        let (sender, events) = mpsc::unbounded_channel();
        Self { run: Some(Box::pin(start(EventSink::to_stream(sender)))), events, result: None }
    }
}

impl<S: Send> ToolLoop<S> {
    /// Runs the loop as [`run`](Self::run) does, streaming what happens:
    /// the model's deltas as they arrive, tool calls forming and running,
    /// and last [`RunEvent::Finished`] with what `run` would return. See
    /// [`stream`](crate::stream).
    pub fn run_stream<'a>(&'a mut self, conversation: &'a mut Conversation) -> RunStream<'a, LoopEnd<S>> {
        RunStream::new(move |sink| self.execute(conversation, Some(sink)))
    }
}

impl<T> RunStream<'_, T> {
    /// The next event, or `None` once [`RunEvent::Finished`] has been
    /// given: `while let Some(event) = stream.next().await { .. }` needs no
    /// trait in scope. ([`Stream`] is implemented too, for combinators.)
    pub async fn next(&mut self) -> Option<RunEvent<T>> {
        std::future::poll_fn(|cx| Pin::new(&mut *self).poll_next(cx)).await
    }
}

impl<T> Unpin for RunStream<'_, T> {}

impl<T> Stream for RunStream<'_, T> {
    type Item = RunEvent<T>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<RunEvent<T>>> {
        let this = &mut *self;
        // Events already sent come first: they happened before the end.
        if let Poll::Ready(Some(event)) = this.events.poll_recv(cx) {
            return Poll::Ready(Some(event.widen()));
        }
        if let Some(run) = this.run.as_mut() {
            match run.as_mut().poll(cx) {
                Poll::Ready(result) => {
                    this.run = None;
                    this.result = Some(result);
                }
                Poll::Pending => {
                    // The run may have sent events while polled.
                    return match this.events.poll_recv(cx) {
                        Poll::Ready(Some(event)) => Poll::Ready(Some(event.widen())),
                        _ => Poll::Pending,
                    };
                }
            }
        }
        // The run is over (its sink dropped): drain, then the result.
        if let Ok(event) = this.events.try_recv() {
            return Poll::Ready(Some(event.widen()));
        }
        Poll::Ready(this.result.take().map(RunEvent::Finished))
    }
}

impl<T> std::fmt::Debug for RunStream<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunStream").field("running", &self.run.is_some()).finish_non_exhaustive()
    }
}
