//! The state one cassette shares with the models it is given to, and the
//! transport each of those models sends through.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::{Stream, stream};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use super::capture::{self, Secrets};
use super::file::{File, Interaction, Request, Response, ResponseBody};
use super::matching::{self, Ignored};
use super::{Mode, error};
use crate::model::{BoxFuture, ModelError, ModelErrorKind};
use crate::providers::{BodyStream, Framing, Incoming, Network, Outgoing, Recorder, Secret, Transport};

/// A cassette's state: its file, mode and what has been played or
/// recorded so far. Models hold it through their transport.
pub(crate) struct Tape {
    pub(super) path: PathBuf,
    mode: Mode,
    /// What matching leaves out; set before the tape is shared.
    ignored: Mutex<Ignored>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Replay: the recorded interactions, which of them were played; the
    /// request headers the recording kept, when it says.
    recorded: Vec<Interaction>,
    kept_headers: Option<Vec<String>>,
    played: Vec<bool>,
    /// Replay: requests that did not match, or found nothing left to play.
    failures: Vec<std::io::Error>,
    /// Record: one slot per request sent, in order.
    slots: Vec<Slot>,
    /// Record: the first write that failed.
    write_error: Option<std::io::Error>,
}

impl State {
    /// Replay: how many interactions were played.
    fn played_count(&self) -> usize {
        self.played.iter().filter(|played| **played).count()
    }
}

enum Slot {
    /// Sent; its response is being read.
    Pending,
    Done(Box<Interaction>),
    /// No response came (a transport error): nothing to replay.
    Failed,
}

impl fmt::Debug for Tape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cassette").field("path", &self.path).field("mode", &self.mode).finish_non_exhaustive()
    }
}

impl Recorder for Tape {
    fn is_replaying(&self) -> bool {
        Tape::is_replaying(self)
    }

    fn transport(self: Arc<Self>, network: Network, secrets: Vec<Secret>) -> Arc<dyn Transport> {
        Arc::new(Tape::transport(&self, network, secrets))
    }
}

impl Tape {
    /// A tape for `path`: in replay, the file's interactions; in record,
    /// none yet.
    pub(super) fn new(path: PathBuf, mode: Mode) -> std::io::Result<Self> {
        let (recorded, kept_headers) = match mode {
            Mode::Replay => {
                let file = File::load(&path)?;
                (file.interactions, file.request_headers)
            }
            Mode::Record => (Vec::new(), None),
        };
        let state = Mutex::new(State { recorded, kept_headers, ..State::default() });
        Ok(Self { path, mode, ignored: Mutex::default(), state })
    }

    pub(crate) fn is_replaying(&self) -> bool {
        self.mode == Mode::Replay
    }

    /// Changes what matching leaves out.
    pub(super) fn ignore(&self, change: impl FnOnce(&mut Ignored)) {
        change(&mut self.ignored.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere while holding it leaves the state usable.
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The transport of one model: `network` behind the tape, and the
    /// model's `secrets` kept out of it.
    pub(crate) fn transport(self: &Arc<Self>, network: Network, secrets: Vec<Secret>) -> CassetteTransport {
        CassetteTransport { tape: Arc::clone(self), network, secrets: Secrets::new(secrets) }
    }

    /// (Recorded or played, in the cassette) interactions.
    pub(super) fn counts(&self) -> (usize, usize) {
        let state = self.state();
        match self.mode {
            Mode::Replay => (state.played_count(), state.recorded.len()),
            Mode::Record => {
                let done = state.slots.iter().filter(|slot| matches!(slot, Slot::Done(_))).count();
                (done, done)
            }
        }
    }

    /// What is wrong with the cassette's use so far: a write that failed,
    /// a request that did not match, or (unless `allow_unplayed`)
    /// interactions left unplayed.
    pub(super) fn verdict(&self, allow_unplayed: bool) -> std::io::Result<()> {
        let mut state = self.state();
        if let Some(error) = state.write_error.take() {
            return Err(error);
        }
        if !state.failures.is_empty() {
            return Err(state.failures.remove(0));
        }
        let (played, recorded) = (state.played_count(), state.recorded.len());
        if self.mode == Mode::Replay && played < recorded && !allow_unplayed {
            return Err(error::unplayed(&self.path, played, recorded));
        }
        Ok(())
    }

    /// Record: writes the interactions that are complete, in order, in
    /// place of the file's (whole, or not at all: see [`File::save`]). A
    /// recording with none leaves a file that is there as it is.
    pub(super) fn save(&self) {
        let mut state = self.state();
        let interactions: Vec<_> = state
            .slots
            .iter()
            .filter_map(|slot| match slot {
                Slot::Done(interaction) => Some((**interaction).clone()),
                Slot::Pending | Slot::Failed => None,
            })
            .collect();
        if interactions.is_empty() && self.path.exists() {
            return;
        }
        if let Err(error) = File::new(interactions).save(&self.path)
            && state.write_error.is_none()
        {
            state.write_error = Some(error);
        }
    }

    fn reserve(&self) -> usize {
        let mut state = self.state();
        state.slots.push(Slot::Pending);
        state.slots.len() - 1
    }

    fn fill(&self, slot: usize, filled: Slot) {
        self.state().slots[slot] = filled;
    }

    /// Replay: the response recorded for `sent`: the first interaction not
    /// played yet whose request matches it (requests of models sharing the
    /// cassette may come in another order than they were recorded in); a
    /// mismatch names the differences from the first one not played.
    fn play(&self, sent: &Request, provider: &'static str) -> Result<Response, ModelError> {
        let mut state = self.state();
        let state = &mut *state;
        state.played.resize(state.recorded.len(), false);
        let ignored = self.ignored.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let kept = state.kept_headers.as_deref();
        let unplayed = |index: &usize| !state.played[*index];
        let matching = (0..state.recorded.len())
            .filter(unplayed)
            .find(|index| matching::differences(&state.recorded[*index].request, sent, &ignored, kept).is_empty());
        if let Some(index) = matching {
            state.played[index] = true;
            return Ok(state.recorded[index].response.clone());
        }
        let failure = match (0..state.recorded.len()).find(unplayed) {
            None => error::exhausted(&self.path, state.recorded.len()),
            Some(index) => {
                let differences = matching::differences(&state.recorded[index].request, sent, &ignored, kept);
                let differences: Vec<String> = differences.iter().map(ToString::to_string).collect();
                error::mismatch(&self.path, index + 1, &differences)
            }
        };
        drop(ignored);
        let error = ModelError::new(ModelErrorKind::Other, provider, failure.to_string());
        state.failures.push(failure);
        Err(error)
    }
}

/// The transport of a model given a cassette.
pub(crate) struct CassetteTransport {
    tape: Arc<Tape>,
    network: Network,
    secrets: Secrets,
}

impl Transport for CassetteTransport {
    fn send<'a>(&'a self, request: Outgoing<'a>) -> BoxFuture<'a, Result<Incoming, ModelError>> {
        Box::pin(async move {
            let record = capture::request(&request, &self.secrets);
            if self.tape.is_replaying() {
                return Ok(replay(self.tape.play(&record, request.provider)?));
            }
            let streamed = request.stream.then_some(request.framing);
            let slot = self.tape.reserve();
            let incoming = match self.network.send(request).await {
                Ok(incoming) => incoming,
                Err(error) => {
                    self.tape.fill(slot, Slot::Failed);
                    return Err(error);
                }
            };
            let recording = Recording {
                tape: Arc::clone(&self.tape),
                slot,
                request: Some(record),
                status: incoming.status,
                headers: capture::response_headers(&incoming.headers, &self.secrets),
                streamed,
                secrets: self.secrets.clone(),
                body: Vec::new(),
            };
            Ok(Incoming { body: Box::pin(Tee { inner: incoming.body, recording }), ..incoming })
        })
    }
}

/// The recorded `response` as it came over the wire: a stream's events or
/// lines each a chunk of their own.
fn replay(response: Response) -> Incoming {
    let mut headers = HeaderMap::new();
    for (name, value) in &response.headers {
        if let (Ok(name), Ok(value)) = (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(value)) {
            headers.insert(name, value);
        }
    }
    let chunks: Vec<Bytes> = match response.body {
        ResponseBody::Body(value) => vec![Bytes::from(value.to_string())],
        ResponseBody::Text(text) => vec![Bytes::from(text)],
        ResponseBody::Events(events) => events
            .into_iter()
            .map(|event| {
                let mut text = String::new();
                if let Some(name) = &event.event {
                    text.push_str("event: ");
                    text.push_str(name);
                    text.push('\n');
                }
                for line in event.data.to_text().split('\n') {
                    text.push_str("data: ");
                    text.push_str(line);
                    text.push('\n');
                }
                text.push('\n');
                Bytes::from(text)
            })
            .collect(),
        ResponseBody::Lines(lines) => lines.into_iter().map(|line| Bytes::from(line.data.to_text() + "\n")).collect(),
    };
    let body: BodyStream = Box::pin(stream::iter(chunks.into_iter().map(Ok)));
    Incoming { status: response.status, headers, content_length: None, body }
}

/// One response being recorded as its body is read.
struct Recording {
    tape: Arc<Tape>,
    slot: usize,
    /// Taken when the interaction is written.
    request: Option<Request>,
    status: u16,
    headers: BTreeMap<String, String>,
    streamed: Option<Framing>,
    secrets: Secrets,
    body: Vec<u8>,
}

impl Recording {
    /// Writes the interaction with the body read so far: all of it, or the
    /// events a stream's reader took before it stopped.
    fn finish(&mut self) {
        let Some(request) = self.request.take() else { return };
        let headers = std::mem::take(&mut self.headers);
        let response = capture::response(self.status, headers, &self.body, self.streamed, &self.secrets);
        self.tape.fill(self.slot, Slot::Done(Box::new(Interaction { request, response })));
    }

    /// Records nothing for a response whose body failed (the connection
    /// was cut, the call gave up on it): replaying a part of it as a whole
    /// response would answer what the recorded run never got.
    fn fail(&mut self) {
        if self.request.take().is_some() {
            self.tape.fill(self.slot, Slot::Failed);
        }
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        // A body left unread to its end was given up on (too large, too
        // slow, the call cancelled), a stream's as a whole one's; only a
        // redirect's body is never read.
        if (300..400).contains(&self.status) { self.finish() } else { self.fail() }
    }
}

/// A body passed through as it is read, and kept for the cassette.
struct Tee {
    inner: BodyStream,
    recording: Recording,
}

impl Stream for Tee {
    type Item = Result<Bytes, ModelError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let polled = self.inner.as_mut().poll_next(cx);
        match &polled {
            Poll::Ready(Some(Ok(chunk))) => self.recording.body.extend_from_slice(chunk),
            Poll::Ready(None) => self.recording.finish(),
            Poll::Ready(Some(Err(_))) => self.recording.fail(),
            Poll::Pending => {}
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use futures_util::StreamExt as _;

    use super::replay;
    use crate::providers::Framing;
    use crate::testing::cassette::capture::{self, Secrets};

    /// Records `body`, replays the record, and returns the replayed bytes.
    async fn round_trip(content_type: &str, body: &str, framing: Framing) -> (String, super::Response) {
        let headers = BTreeMap::from([("content-type".to_owned(), content_type.to_owned())]);
        let response = capture::response(200, headers, body.as_bytes(), Some(framing), &Secrets::default());
        let incoming = replay(response.clone());
        assert_eq!(incoming.headers["content-type"], content_type);
        let chunks: Vec<_> = incoming.body.collect().await;
        let bytes: Vec<u8> = chunks.into_iter().flat_map(|chunk| chunk.unwrap().to_vec()).collect();
        (String::from_utf8(bytes).unwrap(), response)
    }

    #[tokio::test]
    async fn a_replayed_event_stream_reads_as_the_recorded_one() {
        let body = "event: a\r\ndata: {\"x\": 1}\r\n\r\n: ping\n\ndata: line one\ndata: line two\n\ndata: [DONE]\n\n";
        let (replayed, response) = round_trip("text/event-stream", body, Framing::Sse).await;
        assert!(matches!(response.body, super::ResponseBody::Events(ref events) if events.len() == 3));
        // The same events, JSON data written compact (the same value).
        assert_eq!(replayed, "event: a\ndata: {\"x\":1}\n\ndata: line one\ndata: line two\n\ndata: [DONE]\n\n");
    }

    #[tokio::test]
    async fn replayed_ndjson_lines_and_whole_bodies_read_as_recorded() {
        let body = "{\"a\":1}\n\n{\"done\":true}\n";
        let (replayed, _) = round_trip("application/x-ndjson", body, Framing::Ndjson).await;
        assert_eq!(replayed, "{\"a\":1}\n{\"done\":true}\n");
        // An error body of a streamed call is kept whole, by its content type.
        let (replayed, response) = round_trip("application/json", "{\"error\": \"no\"}", Framing::Sse).await;
        assert!(matches!(response.body, super::ResponseBody::Body(_)));
        assert_eq!(replayed, "{\"error\":\"no\"}");
    }
}
