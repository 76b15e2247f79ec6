//! Where the engine reports a streamed run's events.

use tokio::sync::mpsc;

use super::event::Progress;

/// Where the engine reports a streamed run's events.
#[derive(Clone, Debug)]
pub(crate) struct EventSink(Destination);

#[derive(Clone, Debug)]
enum Destination {
    /// The consumer of a [`RunStream`](crate::stream::RunStream).
    Stream(mpsc::UnboundedSender<Progress>),
    /// A sub-run's events, reported to its parent run tagged with the tool call.
    SubRun { parent: Box<EventSink>, call_id: String, agent: String },
}

impl EventSink {
    /// A sink whose events go to the consumer of a run stream through `sender`.
    pub(crate) fn to_stream(sender: mpsc::UnboundedSender<Progress>) -> Self {
        Self(Destination::Stream(sender))
    }

    /// Reports `event`; a consumer that went away is no error: the run goes
    /// on to its end, as a non-streamed one would.
    pub(crate) fn send(&self, event: Progress) {
        match &self.0 {
            Destination::Stream(sender) => {
                let _ = sender.send(event);
            }
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
        Self(Destination::SubRun {
            parent: Box::new(self.clone()),
            call_id: call_id.to_owned(),
            agent: agent.to_owned(),
        })
    }
}
