//! The stream of a run: its events as they happen, then its result.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;

use std::task::{Context, Poll};

use futures_util::Stream;

use crate::cancel::BoxFuture;
use crate::conversation::Conversation;
use crate::run::{Event, EventSink, LoopOutput, Resolution, Resume, RunError, RunOutput, ToolLoop};

/// A streamed run: a [`Stream`] of the run's [`Event`]s, the last one
/// [`Event::RunFinished`], then `None`; [`output`](Self::output) gives the
/// run's result (what the non-streamed run returns), reading whatever
/// events are left.
///
/// The run advances only while the stream is polled. Dropping the stream
/// cancels the run where it is (mid-delta or mid-tool, as dropping the
/// future of a non-streamed run does); the conversation keeps only whole
/// turns up to there: a model call or a batch of tool calls cut short is
/// not written at all, so no call is left unanswered. Cancel through the
/// agent's [`CancellationToken`](crate::CancellationToken) instead to end
/// with a result that reports the cancellation and to keep the cut batch,
/// its unfinished calls answered as not executed.
#[must_use = "a run stream does nothing unless polled"]
pub struct RunStream<'a, T> {
    run: Option<BoxFuture<'a, Result<RunOutput<T>, RunError>>>,
    /// Where the run sends its events.
    sink: EventSink,
    /// Events taken from the sink, not yet given out.
    ready: VecDeque<Event>,
    result: Option<Result<RunOutput<T>, RunError>>,
    /// Whether [`Event::RunFinished`] was given out: a run refused before
    /// it started (nothing to answer, calls left pending, a resume that
    /// does not fit) sends none, and the stream then ends with one itself.
    finished: bool,
}

impl<'a, T: 'a> RunStream<'a, T> {
    /// The stream of the run `start` makes, given the sink to report to.
    pub(crate) fn new<F>(start: impl FnOnce(EventSink) -> F) -> Self
    where
        F: Future<Output = Result<RunOutput<T>, RunError>> + Send + 'a,
    {
        let sink = EventSink::default();
        let run = Box::pin(start(sink.clone()));
        Self { run: Some(run), sink, ready: VecDeque::new(), result: None, finished: false }
    }
}

impl<S: Send> ToolLoop<S> {
    /// Runs the loop as [`run`](Self::run) does, streaming what happens:
    /// the model's deltas as they arrive, tool calls forming and running;
    /// [`RunStream::output`] then gives what `run` would return. See
    /// [`stream`](crate::stream).
    pub fn run_stream<'a>(&'a mut self, conversation: &'a mut Conversation) -> RunStream<'a, LoopOutput<S>> {
        RunStream::new(move |sink| self.execute(conversation, Some(sink), None, None))
    }

    /// [`resume`](Self::resume), streamed as [`run_stream`](Self::run_stream) is.
    pub fn resume_stream<'a, I, K>(
        &'a mut self,
        conversation: &'a mut Conversation,
        resolutions: I,
    ) -> RunStream<'a, LoopOutput<S>>
    where
        I: IntoIterator<Item = (K, Resolution)>,
        K: Into<String>,
    {
        let resume = Resume::prepare(conversation, resolutions);
        RunStream::new(move |sink| async move {
            match resume {
                Ok(resume) => self.execute(conversation, Some(sink), Some(resume), None).await,
                Err(error) => Err(error),
            }
        })
    }
}

impl<T> RunStream<'_, T> {
    /// The next event, or `None` once the run has ended:
    /// `while let Some(event) = stream.next().await { .. }` needs no trait
    /// in scope. ([`Stream`] is implemented too, for combinators.)
    pub async fn next(&mut self) -> Option<Event> {
        std::future::poll_fn(|cx| Pin::new(&mut *self).poll_next(cx)).await
    }

    /// The run's result, exactly what the non-streamed run returns: runs
    /// it to its end first, dropping the events not read yet.
    pub async fn output(mut self) -> Result<RunOutput<T>, RunError> {
        while self.next().await.is_some() {}
        self.result.take().expect("a run stream that ended holds its result")
    }
}

impl<T> Unpin for RunStream<'_, T> {}

impl<T> Stream for RunStream<'_, T> {
    type Item = Event;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        let event = self.poll_event(cx);
        if let Poll::Ready(Some(Event::RunFinished { .. })) = &event {
            self.finished = true;
        }
        event
    }
}

impl<T> RunStream<'_, T> {
    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        // Events already sent come first: they happened before the end.
        if let Some(event) = self.ready.pop_front() {
            return Poll::Ready(Some(event));
        }
        if let Some(run) = self.run.as_mut()
            && let Poll::Ready(result) = run.as_mut().poll(cx)
        {
            self.run = None;
            self.result = Some(result);
        }
        // What the run sent while polled; when it sent nothing and is still
        // pending, its own wakers wake this stream's consumer.
        self.sink.take_into(&mut self.ready);
        if let Some(event) = self.ready.pop_front() {
            return Poll::Ready(Some(event));
        }
        if self.run.is_some() {
            return Poll::Pending;
        }
        match &self.result {
            Some(Err(error)) if !self.finished => {
                Poll::Ready(Some(Event::RunFinished { termination: error.termination().clone() }))
            }
            _ => Poll::Ready(None),
        }
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
    use crate::run::{Event, RunError, RunOutput};

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

    fn text(event: Poll<Option<Event>>) -> String {
        match event {
            Poll::Ready(Some(Event::TextDelta { text })) => text,
            _ => panic!("expected a text delta"),
        }
    }

    #[test]
    fn events_come_in_order_and_sending_them_wakes_nobody() {
        let mut stream = RunStream::<()>::new(|sink| async move {
            sink.send(Event::TextDelta { text: "a".into() });
            sink.send(Event::TextDelta { text: "b".into() });
            YieldOnce(false).await;
            sink.send(Event::TextDelta { text: "c".into() });
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
