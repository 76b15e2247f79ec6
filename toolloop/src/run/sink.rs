//! Where the engine reports a streamed run's events: the one subscriber
//! besides hooks and the trace dump (see `Engine::emit`).

use std::collections::VecDeque;
use std::mem;
use std::sync::{Arc, Mutex, PoisonError};

use super::event::Event;

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
    /// The queue of a [`RunStream`](crate::stream::RunStream).
    Stream(Arc<Mutex<VecDeque<Event>>>),
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
    pub(crate) fn send(&self, event: Event) {
        match &self.0 {
            Destination::Stream(queue) => queue.lock().unwrap_or_else(PoisonError::into_inner).push_back(event),
            Destination::SubRun { parent, call_id, agent } => {
                parent.send(Event::SubRun { call_id: call_id.clone(), agent: agent.clone(), event: Box::new(event) });
            }
        }
    }

    /// Where a sub-run started by the tool call `call_id` reports: into
    /// this run's events, each one tagged with the call and the agent.
    pub(crate) fn sub_run(&self, call_id: &str, agent: &str) -> Self {
        Self(Destination::SubRun {
            parent: Box::new(self.clone()),
            call_id: call_id.to_owned(),
            agent: agent.to_owned(),
        })
    }

    /// Moves the events sent so far into `ready` (empty), in order.
    pub(crate) fn take_into(&self, ready: &mut VecDeque<Event>) {
        match &self.0 {
            Destination::Stream(queue) => mem::swap(&mut *queue.lock().unwrap_or_else(PoisonError::into_inner), ready),
            // Only a stream's own sink is read; a sub-run's events went to its parent.
            Destination::SubRun { .. } => {}
        }
    }
}
