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
//!   go to the API and each exchange is written to the file: the request
//!   body as JSON, the response status, a safe subset of headers, and the
//!   response body as JSON or a stream as its list of events.
//! - **Replay** (the default, or [`Cassette::replay`]): each request must equal the next recorded
//!   one, and gets its recorded response; nothing is sent, no key is
//!   needed. A request that differs fails the call, and the test, with the
//!   differences by JSON pointer. Interactions left unplayed fail the test
//!   when the cassette is dropped or [finished](Cassette::finish).
//!
//! See the guide's [Test your agents](crate::guide#test-your-agents) section.

mod capture;
mod file;
mod matching;
mod tape;

use std::fmt::Write as _;
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

/// A cassette could not be used, or its replay went wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CassetteError {
    /// Replay found no file.
    #[error(
        "no cassette at {}: record it by running this test once with {RECORD_VARIABLE}=1 and the provider's API key \
         set (for example `{RECORD_VARIABLE}=1 cargo test NAME`), then commit the file",
        path.display()
    )]
    Missing {
        /// Where it was looked for.
        path: PathBuf,
    },
    /// The file could not be read or written.
    #[error("cassette {}: {error}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        #[source]
        error: std::io::Error,
    },
    /// The file is not a cassette this toolloop can read.
    #[error("cassette {}: {reason}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The file was written by a newer toolloop (or says no version).
    #[error(
        "cassette {} is version {version}; this toolloop reads versions 1 to {supported}: a newer toolloop wrote it, \
         or re-record it with {RECORD_VARIABLE}=1",
        path.display()
    )]
    Version {
        /// The file.
        path: PathBuf,
        /// The version it says.
        version: u64,
        /// The newest version this toolloop reads.
        supported: u32,
    },
    /// A request differs from the one recorded at its place.
    #[error("{}", mismatch(path, *request, differences))]
    Mismatch {
        /// The file.
        path: PathBuf,
        /// The request's place in the run, from 1.
        request: usize,
        /// Where the request differs, one line per place: its JSON pointer
        /// (the one [`Cassette::ignore_pointer`] takes), what the cassette
        /// holds there and what was sent (`/body/model: recorded "a", sent
        /// "b"`; a side that holds nothing reads `nothing`).
        differences: Vec<String>,
    },
    /// More requests were made than the cassette recorded.
    #[error(
        "request {} was made, but the cassette {} recorded only {recorded}: re-record it with {RECORD_VARIABLE}=1",
        recorded + 1,
        path.display()
    )]
    Exhausted {
        /// The file.
        path: PathBuf,
        /// How many interactions it holds.
        recorded: usize,
    },
    /// The run ended with interactions not played.
    #[error(
        "the cassette {} recorded {recorded} interactions but only {played} were played: the agent made fewer \
         calls than when it was recorded (re-record it with {RECORD_VARIABLE}=1, or allow it with \
         `allow_unplayed()`)",
        path.display()
    )]
    Unplayed {
        /// The file.
        path: PathBuf,
        /// How many were played.
        played: usize,
        /// How many it holds.
        recorded: usize,
    },
}

/// The message of [`CassetteError::Mismatch`]: one line per difference.
fn mismatch(path: &Path, request: usize, differences: &[String]) -> String {
    const SHOWN: usize = 20;
    let mut message = format!(
        "request {request} does not match the one recorded in the cassette {} (re-record it with \
         {RECORD_VARIABLE}=1, or ignore a field with `ignore_field` / `ignore_pointer`):",
        path.display()
    );
    for difference in differences.iter().take(SHOWN) {
        message.push_str("\n  ");
        message.push_str(difference);
    }
    if differences.len() > SHOWN {
        let _ = write!(message, "\n  … and {} more", differences.len() - SHOWN);
    }
    message
}

/// Records a test's HTTP exchanges with a provider into a file, or replays
/// them from it; give it to a model with
/// [`HttpModelBuilder::cassette`](crate::providers::HttpModelBuilder::cassette).
///
/// Dropping it checks the replay (unless the test is already failing): a
/// request that did not match, or an interaction left unplayed, panics
/// with the reason. [`finish`](Self::finish) returns the same as an error.
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
/// # fn main() -> Result<(), toolloop::testing::CassetteError> {
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
    pub fn open(path: impl Into<PathBuf>) -> Result<Self, CassetteError> {
        Self::with_mode(path.into(), Mode::from_env())
    }

    /// The cassette at `path`, recording whatever `TOOLLOOP_RECORD` says:
    /// calls go to the API, and the file is written anew with what they
    /// exchanged.
    pub fn record(path: impl Into<PathBuf>) -> Result<Self, CassetteError> {
        Self::with_mode(path.into(), Mode::Record)
    }

    /// The cassette at `path`, replaying whatever `TOOLLOOP_RECORD` says:
    /// reads the file (an error when it is missing, saying how to record
    /// it); calls are answered from it and nothing is sent.
    pub fn replay(path: impl Into<PathBuf>) -> Result<Self, CassetteError> {
        Self::with_mode(path.into(), Mode::Replay)
    }

    fn with_mode(path: PathBuf, mode: Mode) -> Result<Self, CassetteError> {
        let tape = Tape::new(path, mode)?;
        Ok(Self { tape: Arc::new(tape), allow_unplayed: false, finished: false })
    }

    /// Leaves the object key `name` out of matching, wherever it appears
    /// (a request field whose value changes from run to run: a timestamp
    /// or a random id in a prompt). The recorded response is still served.
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

    /// Ends the test's use of it: in record mode, writes the file; in
    /// replay, fails when a request did not match (the first such) or, unless
    /// allowed, when interactions were left unplayed.
    pub fn finish(mut self) -> Result<(), CassetteError> {
        self.finished = true;
        self.check()
    }

    fn check(&self) -> Result<(), CassetteError> {
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
        if self.finished {
            return;
        }
        let verdict = self.check();
        if let Err(error) = verdict
            && !std::thread::panicking()
        {
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
    /// needs no API key. Any number of models may share one cassette; their
    /// exchanges are played in the order they were recorded.
    pub fn cassette(self, cassette: &Cassette) -> Self {
        self.recorder(cassette.tape())
    }
}
