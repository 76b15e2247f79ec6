//! A cassette's errors: a cassette is a file, so they are
//! [`std::io::Error`]s, of the kind that says what went wrong and with a
//! message that names the file and says what to do.

use std::fmt::Write as _;
use std::io::{Error, ErrorKind};
use std::path::Path;

use super::RECORD_VARIABLE;

/// Replay found no file ([`ErrorKind::NotFound`]).
pub(super) fn missing(path: &Path) -> Error {
    Error::new(
        ErrorKind::NotFound,
        format!(
            "no cassette at {}: record it by running this test once with {RECORD_VARIABLE}=1 and the provider's API \
             key set (for example `{RECORD_VARIABLE}=1 cargo test NAME`), then commit the file",
            path.display()
        ),
    )
}

/// The file could not be read or written: `cause`'s kind, with the path;
/// `cause` is the error's [`source`](std::error::Error::source).
pub(super) fn io(path: &Path, cause: Error) -> Error {
    let message = format!("cassette {}: {cause}", path.display());
    Error::new(cause.kind(), Caused { message, cause: Box::new(cause) })
}

/// The file is not a cassette this toolloop can read ([`ErrorKind::InvalidData`]).
pub(super) fn invalid(path: &Path, reason: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::InvalidData, format!("cassette {}: {reason}", path.display()))
}

/// The file is not JSON a cassette reads ([`ErrorKind::InvalidData`]);
/// `cause`, with its line and column, is the error's
/// [`source`](std::error::Error::source).
pub(super) fn unreadable(path: &Path, cause: serde_json::Error) -> Error {
    let message = format!("cassette {}: {cause}", path.display());
    Error::new(ErrorKind::InvalidData, Caused { message, cause: Box::new(cause) })
}

/// A message that names the file, and the error behind it.
#[derive(Debug)]
struct Caused {
    message: String,
    cause: Box<dyn std::error::Error + Send + Sync>,
}

impl std::fmt::Display for Caused {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(&self.message)
    }
}

impl std::error::Error for Caused {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.cause)
    }
}

/// The file was written by a newer toolloop, or says no version
/// ([`ErrorKind::InvalidData`]).
pub(super) fn version(path: &Path, version: u64, supported: u32) -> Error {
    Error::new(
        ErrorKind::InvalidData,
        format!(
            "cassette {} is version {version}; this toolloop reads versions 1 to {supported}: a newer toolloop wrote \
             it, or re-record it with {RECORD_VARIABLE}=1",
            path.display()
        ),
    )
}

/// Request `request` (from 1) differs from the one recorded at its place
/// ([`ErrorKind::InvalidInput`]): one line per difference, its JSON pointer
/// (the one [`Cassette::ignore_pointer`](super::Cassette::ignore_pointer)
/// takes), what the cassette holds there and what was sent.
pub(super) fn mismatch(path: &Path, request: usize, differences: &[String]) -> Error {
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
    Error::new(ErrorKind::InvalidInput, message)
}

/// More requests were made than the cassette recorded
/// ([`ErrorKind::UnexpectedEof`]: the replay read past its end).
pub(super) fn exhausted(path: &Path, recorded: usize) -> Error {
    Error::new(
        ErrorKind::UnexpectedEof,
        format!(
            "request {} was made, but the cassette {} recorded only {recorded}: re-record it with {RECORD_VARIABLE}=1",
            recorded + 1,
            path.display()
        ),
    )
}

/// The run ended with interactions not played ([`ErrorKind::Other`]).
pub(super) fn unplayed(path: &Path, played: usize, recorded: usize) -> Error {
    Error::other(format!(
        "the cassette {} recorded {recorded} interactions but only {played} were played: the agent made fewer calls \
         than when it was recorded (re-record it with {RECORD_VARIABLE}=1, or allow it with `allow_unplayed()`)",
        path.display()
    ))
}
