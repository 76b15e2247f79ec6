//! The stream of a run: its events as they happen, then its result.

use std::collections::VecDeque;
use std::future::Future;
use std::mem;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use futures_util::Stream;

use super::event::{Progress, RunEvent};
use crate::cancel::BoxFuture;
use crate::run::{RunError, RunOutput};

/// Where the engine reports a streamed run's events: a queue the stream
/// empties after every poll of the run, or a parent run's sink.
///
/// Every event is sent while the stream polls the run (the engine sends
/// them from the run's own future, never from another task; a sub-run is
/// polled inside its parent's tool call), so nobody needs waking: a
/// channel's wake-up would only reschedule the polling task itself, once
/// per network read, and on a multi-threaded runtime hand it to another
/// worker thread.
#[derive(Clone, Debug)]
pub(crate) struct EventSink(Destination);

#[derive(Clone, Debug)]
enum Destination {
    /// The queue of a [`RunStream`].
    Stream(Arc<Mutex<VecDeque<Progress>>>),
    /// A sub-run's events, reported to its parent run tagged with the tool call.
    SubRun { parent: Box<EventSink>, call_id: String, agent: String },
}

impl Default for EventSink {
    fn default() -> Self {
        Self(Destination::Stream(Arc::default()))
    }
}

impl EventSink {
    /// Reports `event`; a consumer that went away is no error: the run goes
    /// on to its end, as a non-streamed one would.
    pub(crate) fn send(&self, event: Progress) {
        match &self.0 {
            Destination::Stream(queue) => queue.lock().unwrap_or_else(PoisonError::into_inner).push_back(event),
            Destination::SubRun { parent, call_id, agent } => parent.send(Progress::SubRun {
                call_id: call_id.clone(),
                agent: agent.clone(),
                event: Box::new(event.widen()),
            }),
        }
    }

    /// Where a sub-run started by the tool call `call_id` reports: into
    /// this run's events, each one tagged with the call and the agent.
    pub(crate) fn sub_run(&self, call_id: &str, agent: &str) -> Self {
        Self(Destination::SubRun { parent: Box::new(self.clone()), call_id: call_id.to_owned(), agent: agent.to_owned() })
    }

    /// Moves the events sent so far into `ready` (empty), in order.
    fn take_into(&self, ready: &mut VecDeque<Progress>) {
        match &self.0 {
            Destination::Stream(queue) => mem::swap(&mut *queue.lock().unwrap_or_else(PoisonError::into_inner), ready),
            // Only a stream's own sink is read; a sub-run's events went to its parent.
            Destination::SubRun { .. } => {}
        }
    }
}

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
    /// Where the run sends its events.
    sink: EventSink,
    /// Events taken from the sink, not yet given out.
    ready: VecDeque<Progress>,
    result: Option<Result<RunOutput<T>, RunError>>,
}

impl<'a, T: 'a> RunStream<'a, T> {
    /// The stream of the run `start` makes, given the sink to report to.
    pub(crate) fn new<F>(start: impl FnOnce(EventSink) -> F) -> Self
    where
        F: Future<Output = Result<RunOutput<T>, RunError>> + Send + 'a,
    {
        let sink = EventSink::default();
        let run = Box::pin(start(sink.clone()));
        Self { run: Some(run), sink, ready: VecDeque::new(), result: None }
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
        if let Some(event) = this.ready.pop_front() {
            return Poll::Ready(Some(event.widen()));
        }
        if let Some(run) = this.run.as_mut()
            && let Poll::Ready(result) = run.as_mut().poll(cx)
        {
            this.run = None;
            this.result = Some(result);
        }
        // What the run sent while polled; when it sent nothing and is still
        // pending, its own wakers wake this stream's consumer.
        this.sink.take_into(&mut this.ready);
        if let Some(event) = this.ready.pop_front() {
            return Poll::Ready(Some(event.widen()));
        }
        if this.run.is_some() {
            return Poll::Pending;
        }
        Poll::Ready(this.result.take().map(RunEvent::Finished))
    }
}

impl<T> std::fmt::Debug for RunStream<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunStream").field("running", &self.run.is_some()).finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::{Context, Poll, Wake, Waker};

    use futures_util::Stream;

    use super::RunStream;
    use crate::run::{RunError, RunOutput};
    use crate::stream::{Progress, RunEvent};

    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Pending once, waking its task (as a read that must wait for more does).
    struct YieldOnce(bool);

    impl Future for YieldOnce {
        type Output = ();

        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            if self.0 {
                return Poll::Ready(());
            }
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }

    fn text<T>(event: Poll<Option<RunEvent<T>>>) -> String {
        match event {
            Poll::Ready(Some(RunEvent::TextDelta { text })) => text,
            _ => panic!("expected a text delta"),
        }
    }

    #[test]
    fn events_come_in_order_and_sending_them_wakes_nobody() {
        let mut stream = RunStream::<()>::new(|sink| async move {
            sink.send(Progress::TextDelta { text: "a".into() });
            sink.send(Progress::TextDelta { text: "b".into() });
            YieldOnce(false).await;
            sink.send(Progress::TextDelta { text: "c".into() });
            std::future::pending::<Result<RunOutput<()>, RunError>>().await
        });
        let counter = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(Arc::clone(&counter));
        let mut cx = Context::from_waker(&waker);
        let mut next = || Pin::new(&mut stream).poll_next(&mut cx);
        assert_eq!(text(next()), "a");
        assert_eq!(text(next()), "b");
        assert_eq!(text(next()), "c");
        assert!(next().is_pending());
        // Only the run's own wait woke the task; the three events did not.
        assert_eq!(counter.0.load(Ordering::SeqCst), 1);
    }
}
