//! Cassettes: record an agent's HTTP exchanges with a real provider once,
//! replay them offline in every later run.
//!
//! A [`Cassette`] is given to a model's builder
//! ([`HttpModelBuilder::cassette`](crate::providers::HttpModelBuilder::cassette)).
//! It sits where the HTTP core sends a request and gets its answer back,
//! below every wire format, so each provider (streamed or not) records and
//! replays the same way; retries, error mapping and stream decoding run on
//! the replayed bytes exactly as on the network's.
//!
//! - **Record** (`TOOLLOOP_RECORD=1`, or [`Cassette::record`]): calls
//!   go to the API and each exchange is kept: the request body as JSON,
//!   the response status, a safe subset of headers, and the response body
//!   as JSON or a stream as its list of events. The file is written, whole,
//!   when the test [finishes](Cassette::finish) the cassette or drops it
//!   without panicking; a test that panics keeps the file it had.
//! - **Replay** (the default, or [`Cassette::replay`]): each request gets
//!   the response of the first recorded exchange not played yet that it
//!   equals; nothing is sent, no key is needed, and a retry waits for
//!   nothing. A request that equals none fails the call, and the test,
//!   with its differences from the first one not played, by JSON pointer.
//!   Interactions left unplayed fail the test when the cassette is dropped
//!   or finished.
//!
//! See the guide's [Test your agents](crate::guide#test-your-agents) section.

mod capture;
mod error;
mod file;
mod matching;
mod tape;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::providers::{HttpModelBuilder, WireFormat};

pub(crate) use tape::Tape;

/// The environment variable that switches cassettes to recording.
pub const RECORD_VARIABLE: &str = "TOOLLOOP_RECORD";

/// Whether a cassette records or replays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Calls go to the API; the file is written anew with what they
    /// exchanged.
    Record,
    /// Calls are answered from the file; nothing is sent.
    Replay,
}

impl Mode {
    /// [`Record`](Self::Record) when `TOOLLOOP_RECORD` is set to `1`,
    /// `true`, `yes` or `on`; [`Replay`](Self::Replay) otherwise.
    fn from_env() -> Self {
        let value = std::env::var(RECORD_VARIABLE).unwrap_or_default();
        if matches!(value.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on") {
            Self::Record
        } else {
            Self::Replay
        }
    }
}

/// Records a test's HTTP exchanges with a provider into a file, or replays
/// them from it; give it to a model with
/// [`HttpModelBuilder::cassette`](crate::providers::HttpModelBuilder::cassette).
///
/// Dropping it checks the replay (unless the test is already failing): a
/// request that did not match, or an interaction left unplayed, panics
/// with the reason. [`finish`](Self::finish) returns the same as an error.
///
/// A cassette is a file, so its errors are [`std::io::Error`]s whose message
/// names the file and says what to do, of the kind that says what went
/// wrong: [`NotFound`](std::io::ErrorKind::NotFound) (replay found no file:
/// the message says how to record it), the kind of a read or write that
/// failed, [`InvalidData`](std::io::ErrorKind::InvalidData) (not a cassette,
/// or one a newer toolloop wrote), and from a replay
/// [`InvalidInput`](std::io::ErrorKind::InvalidInput) (a request differs
/// from the recorded one: the differences by JSON pointer),
/// [`UnexpectedEof`](std::io::ErrorKind::UnexpectedEof) (more requests than
/// recorded) or [`Other`](std::io::ErrorKind::Other) (interactions left
/// unplayed). A read or write that failed, and a file that is not JSON a
/// cassette reads, have the error behind them as their
/// [`source`](std::error::Error::source) (the `std::io::Error`, or the
/// `serde_json::Error` with its line and column). During a run, a replay
/// that fails fails the model call, with a
/// [`ModelError`](crate::ModelError) that says the same.
///
/// ```no_run
/// use toolloop::providers::anthropic::Anthropic;
/// use toolloop::testing::Cassette;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let cassette = Cassette::open(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cassettes/weather.json"))?;
/// let model = Anthropic::builder().cassette(&cassette).build()?; // no key needed to replay
/// // ... run the agent with `model` and assert on its output ...
/// cassette.finish()?;
/// # Ok(()) }
/// ```
///
/// Its options are methods:
///
/// ```no_run
/// use toolloop::testing::Cassette;
///
/// # fn main() -> std::io::Result<()> {
/// let cassette = Cassette::replay("tests/cassettes/weather.json")?
///     .ignore_field("user_id")
///     .ignore_pointer("/headers/anthropic-beta")
///     .allow_unplayed();
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Cassette {
    tape: Arc<Tape>,
    allow_unplayed: bool,
    finished: bool,
}

impl Cassette {
    /// The cassette at `path`, recording when `TOOLLOOP_RECORD=1` and
    /// replaying otherwise. Replay fails when there is no file, with how
    /// to record it.
    pub fn open(path: impl Into<PathBuf>) -> std::io::Result<Self> {
        Self::with_mode(path.into(), Mode::from_env())
    }

    /// The cassette at `path`, recording whatever `TOOLLOOP_RECORD` says:
    /// calls go to the API, and the file is written anew with what they
    /// exchanged.
    pub fn record(path: impl Into<PathBuf>) -> std::io::Result<Self> {
        Self::with_mode(path.into(), Mode::Record)
    }

    /// The cassette at `path`, replaying whatever `TOOLLOOP_RECORD` says:
    /// reads the file (an error when it is missing, saying how to record
    /// it); calls are answered from it and nothing is sent.
    pub fn replay(path: impl Into<PathBuf>) -> std::io::Result<Self> {
        Self::with_mode(path.into(), Mode::Replay)
    }

    fn with_mode(path: PathBuf, mode: Mode) -> std::io::Result<Self> {
        let tape = Tape::new(path, mode)?;
        Ok(Self { tape: Arc::new(tape), allow_unplayed: false, finished: false })
    }

    /// Leaves the object key `name` out of matching, wherever it appears in
    /// the request's body (a field whose value changes from run to run: a
    /// timestamp or a random id in a prompt); the method, the path and the
    /// headers are still matched (leave them out with
    /// [`ignore_pointer`](Self::ignore_pointer)). The recorded response is
    /// still served.
    pub fn ignore_field(self, name: impl Into<String>) -> Self {
        self.tape.ignore(|ignored| ignored.fields.push(name.into()));
        self
    }

    /// Leaves the value at `pointer` out of matching: a JSON pointer into
    /// `{"method", "path", "headers", "body"}`, as a mismatch names it
    /// (`/body/metadata/user_id`, `/headers/anthropic-beta`); a `*` segment
    /// stands for any key or index (`/body/messages/*/content`).
    pub fn ignore_pointer(self, pointer: impl Into<String>) -> Self {
        self.tape.ignore(|ignored| ignored.pointers.push(pointer.into()));
        self
    }

    /// Lets the run end with recorded interactions left unplayed (an agent
    /// that may stop early); by default that fails the test.
    pub fn allow_unplayed(mut self) -> Self {
        self.allow_unplayed = true;
        self
    }

    /// Whether it records (`false`: it replays).
    pub fn is_recording(&self) -> bool {
        !self.tape.is_replaying()
    }

    /// Its file.
    pub fn path(&self) -> &Path {
        &self.tape.path
    }

    /// How many interactions were played (replay) or recorded (record) so far.
    pub fn played(&self) -> usize {
        self.tape.counts().0
    }

    /// Ends the test's use of it: in record mode, writes the file (in place
    /// of the old one, whole; a recording with no interaction leaves an
    /// old file as it is); in replay, fails when a request did not match
    /// (the first such) or, unless allowed, when interactions were left
    /// unplayed. Dropped without it, a cassette does the same, unless the
    /// test is panicking: then a recording is not written.
    pub fn finish(mut self) -> std::io::Result<()> {
        self.finished = true;
        self.check()
    }

    fn check(&self) -> std::io::Result<()> {
        if !self.tape.is_replaying() {
            self.tape.save();
        }
        self.tape.verdict(self.allow_unplayed)
    }

    pub(crate) fn tape(&self) -> Arc<Tape> {
        Arc::clone(&self.tape)
    }
}

impl Drop for Cassette {
    fn drop(&mut self) {
        // A test that panics keeps the file it had: a failed recording
        // (a missing key, an API error) never replaces a good one.
        if self.finished || std::thread::panicking() {
            return;
        }
        let verdict = self.check();
        if let Err(error) = verdict {
            panic!("{error}");
        }
    }
}

// The builder's setter lives with the cassette, so the providers need not
// know the testing module (they see a `Recorder`).
impl<W: WireFormat> HttpModelBuilder<W> {
    /// Records every HTTP exchange of the model into `cassette`, or replays
    /// them from it without sending anything, as the cassette says
    /// ([`Cassette::open`], [`Cassette::record`], [`Cassette::replay`]): for testing agents
    /// against a real API once and offline ever after. A replaying model
    /// needs no API key. Any number of models may share one cassette: a
    /// request replays the first recorded exchange not played yet that
    /// matches it, so runs sharing it at once may send in another order
    /// than they were recorded in.
    pub fn cassette(self, cassette: &Cassette) -> Self {
        self.recorder(cassette.tape())
    }
}
