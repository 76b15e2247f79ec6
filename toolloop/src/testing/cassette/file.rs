//! The cassette file: versioned, pretty-printed JSON, one interaction (a
//! request and its response) after the other, so that a re-recording
//! reads as a diff in review.
//!
//! ```json
//! {
//!   "format": "toolloop-cassette",
//!   "version": 1,
//!   "interactions": [
//!     {
//!       "request": {
//!         "method": "POST",
//!         "url": "https://api.anthropic.com/v1/messages",
//!         "headers": { "anthropic-version": "2023-06-01", ... },
//!         "body": { "model": "...", "messages": [ ... ] }
//!       },
//!       "response": {
//!         "status": 200,
//!         "headers": { "content-type": "text/event-stream" },
//!         "events": [ { "event": "message_start", "data": { ... } }, ... ]
//!       }
//!     }
//!   ]
//! }
//! ```
//!
//! A body that is JSON is kept as JSON (`body`, or `data` of an event);
//! anything else as text (`text`). A streamed response is its list of
//! events (server-sent events: `events`, with their types) or of lines
//! (NDJSON: `lines`).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error;

/// What the `format` field says.
const FORMAT: &str = "toolloop-cassette";

/// The version this toolloop writes, and the newest it reads.
pub(crate) const VERSION: u32 = 1;

/// Request headers kept: how the body is read and which API version and
/// features it asks for.
pub(crate) const REQUEST_HEADERS: &[&str] =
    &["accept", "anthropic-beta", "anthropic-version", "content-type", "openai-beta"];

/// A whole cassette file.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct File {
    pub(crate) format: String,
    pub(crate) version: u32,
    /// The request headers the recording kept when they were sent: a
    /// replay matches these both ways (one sent now but not then is a
    /// difference). Files without it (written by earlier versions, or by
    /// hand) match only the headers their requests hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) request_headers: Option<Vec<String>>,
    pub(crate) interactions: Vec<Interaction>,
}

/// One request and the response it got.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Interaction {
    pub(crate) request: Request,
    pub(crate) response: Response,
}

/// A request as sent, without its secrets.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Request {
    pub(crate) method: String,
    /// The URL without userinfo or key parameters.
    pub(crate) url: String,
    /// The headers that say how the request is read (content type, API
    /// version, beta flags); never credentials.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) headers: BTreeMap<String, String>,
    #[serde(flatten)]
    pub(crate) body: Payload,
}

/// A body: JSON when it parses, else text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Payload {
    Body(Value),
    Text(String),
}

impl Payload {
    /// `bytes` as JSON, or as (lossy) text when they are not JSON.
    pub(crate) fn from_bytes(bytes: &[u8]) -> Self {
        match serde_json::from_slice(bytes) {
            Ok(value) => Self::Body(value),
            Err(_) => Self::Text(String::from_utf8_lossy(bytes).into_owned()),
        }
    }

    /// The body as a JSON value, for matching.
    pub(crate) fn to_value(&self) -> Value {
        match self {
            Self::Body(value) => value.clone(),
            Self::Text(text) => Value::String(text.clone()),
        }
    }
}

/// A response: its status, the headers a client acts on, and its body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Response {
    pub(crate) status: u16,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) headers: BTreeMap<String, String>,
    #[serde(flatten)]
    pub(crate) body: ResponseBody,
}

/// A response body: whole, or the events or lines of a stream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ResponseBody {
    Body(Value),
    Text(String),
    /// Server-sent events.
    Events(Vec<Event>),
    /// NDJSON lines.
    Lines(Vec<Line>),
}

/// One server-sent event: its type (none for the default `message`) and data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Event {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) event: Option<String>,
    #[serde(flatten)]
    pub(crate) data: Data,
}

/// One NDJSON line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Line {
    #[serde(flatten)]
    pub(crate) data: Data,
}

/// What an event or line carries: JSON when it parses, else text (an
/// OpenAI stream's closing `[DONE]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Data {
    Data(Value),
    Text(String),
}

impl Data {
    pub(crate) fn from_text(text: &str) -> Self {
        match serde_json::from_str(text) {
            Ok(value) => Self::Data(value),
            Err(_) => Self::Text(text.to_owned()),
        }
    }

    pub(crate) fn to_text(&self) -> String {
        match self {
            Self::Data(value) => value.to_string(),
            Self::Text(text) => text.clone(),
        }
    }
}

impl File {
    pub(crate) fn new(interactions: Vec<Interaction>) -> Self {
        let request_headers = Some(REQUEST_HEADERS.iter().map(|name| (*name).to_owned()).collect());
        Self { format: FORMAT.to_owned(), version: VERSION, request_headers, interactions }
    }

    /// Reads the cassette at `path`.
    pub(crate) fn load(path: &Path) -> std::io::Result<Self> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Err(error::missing(path)),
            Err(cause) => return Err(error::io(path, cause)),
        };
        // The version first, so that a newer file says so rather than
        // failing on a field this version does not know.
        let head: Value = serde_json::from_str(&text).map_err(|cause| error::unreadable(path, cause))?;
        if head.get("format").and_then(Value::as_str) != Some(FORMAT) {
            return Err(error::invalid(path, format_args!("not a toolloop cassette (no `\"format\": \"{FORMAT}\"`)")));
        }
        let version = head.get("version").and_then(Value::as_u64).unwrap_or(0);
        if version == 0 || version > u64::from(VERSION) {
            return Err(error::version(path, version, VERSION));
        }
        serde_json::from_value(head).map_err(|cause| error::unreadable(path, cause))
    }

    /// Writes the cassette to `path` (creating its folder), pretty-printed
    /// with a final newline: into a file beside it (beside the file a link
    /// points to), then renamed over it, so that a process stopped while
    /// writing leaves the old file whole. Where no file can be made beside
    /// it (a folder that is not writable), the file is written in place.
    pub(crate) fn save(&self, path: &Path) -> std::io::Result<()> {
        let io = |cause| error::io(path, cause);
        if let Some(folder) = path.parent().filter(|folder| !folder.as_os_str().is_empty()) {
            std::fs::create_dir_all(folder).map_err(io)?;
        }
        let mut text = serde_json::to_string_pretty(self).expect("a cassette serialises");
        text.push('\n');
        let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
        let mut partial = target.as_os_str().to_owned();
        partial.push(".partial");
        let partial = std::path::PathBuf::from(partial);
        match std::fs::write(&partial, &text).and_then(|()| std::fs::rename(&partial, &target)) {
            Ok(()) => Ok(()),
            // No file can be made beside it: written in place.
            Err(cause) if cause.kind() == std::io::ErrorKind::PermissionDenied => {
                let _ = std::fs::remove_file(&partial);
                std::fs::write(&target, text).map_err(io)
            }
            // Anything else (a full disk) leaves the old file as it was.
            Err(cause) => {
                let _ = std::fs::remove_file(&partial);
                Err(io(cause))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::ErrorKind;

    use serde_json::json;

    use super::{Data, Event, File, Interaction, Line, Payload, Request, Response, ResponseBody};

    fn interaction(body: ResponseBody) -> Interaction {
        Interaction {
            request: Request {
                method: "POST".into(),
                url: "http://h/v1".into(),
                headers: [("content-type".to_owned(), "application/json".to_owned())].into(),
                body: Payload::Body(json!({"model": "m"})),
            },
            response: Response { status: 200, headers: std::collections::BTreeMap::new(), body },
        }
    }

    /// A cassette behind a link is written where the link points, and the
    /// link stays; no partial file is left.
    #[cfg(unix)]
    #[test]
    fn a_linked_cassette_is_written_through_its_link() {
        let folder = std::env::temp_dir().join(format!("toolloop-cassette-link-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&folder);
        std::fs::create_dir_all(&folder).unwrap();
        let (target, link) = (folder.join("target.json"), folder.join("link.json"));
        std::fs::write(&target, "old").unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
        super::File::new(Vec::new()).save(&link).unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert!(std::fs::read_to_string(&target).unwrap().contains("toolloop-cassette"));
        let left: Vec<_> = std::fs::read_dir(&folder).unwrap().map(|entry| entry.unwrap().file_name()).collect();
        assert_eq!(left.len(), 2, "{left:?}");
        std::fs::remove_dir_all(&folder).unwrap();
    }

    #[test]
    fn the_format_reads_as_documented_and_round_trips() {
        let file = File::new(vec![
            interaction(ResponseBody::Body(json!({"id": "x"}))),
            interaction(ResponseBody::Events(vec![
                Event { event: Some("message_start".into()), data: Data::Data(json!({"a": 1})) },
                Event { event: None, data: Data::Text("[DONE]".into()) },
            ])),
            interaction(ResponseBody::Lines(vec![Line { data: Data::Data(json!({"done": true})) }])),
        ]);
        let value = serde_json::to_value(&file).unwrap();
        assert_eq!(value["format"], "toolloop-cassette");
        assert_eq!(value["version"], 1);
        assert_eq!(value["interactions"][0]["request"]["body"], json!({"model": "m"}));
        assert_eq!(value["interactions"][0]["response"]["body"], json!({"id": "x"}));
        assert_eq!(
            value["interactions"][1]["response"]["events"],
            json!([{"event": "message_start", "data": {"a": 1}}, {"text": "[DONE]"}])
        );
        assert_eq!(value["interactions"][2]["response"]["lines"], json!([{"data": {"done": true}}]));
        let back: File = serde_json::from_value(value).unwrap();
        assert_eq!(back.interactions, file.interactions);
    }

    #[test]
    fn newer_versions_and_other_files_are_refused_with_the_reason() {
        let folder = std::env::temp_dir().join(format!("toolloop-cassette-file-{}", std::process::id()));
        std::fs::create_dir_all(&folder).unwrap();
        let newer = folder.join("newer.json");
        std::fs::write(&newer, r#"{"format": "toolloop-cassette", "version": 9, "interactions": [], "new": 1}"#)
            .unwrap();
        let error = File::load(&newer).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidData);
        let message = error.to_string();
        assert!(message.contains("version 9") && message.contains("newer toolloop"), "{message}");
        let other = folder.join("other.json");
        std::fs::write(&other, r#"{"interactions": []}"#).unwrap();
        let error = File::load(&other).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidData);
        assert!(error.to_string().contains("not a toolloop cassette") && error.to_string().contains("other.json"));
        let broken = folder.join("broken.json");
        std::fs::write(&broken, "{").unwrap();
        let error = File::load(&broken).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidData);
        assert!(error.to_string().contains("broken.json: EOF while parsing"), "{error}");
        // The parser's error is the source, with where the file broke.
        let json = std::error::Error::source(&error).and_then(|source| source.downcast_ref::<serde_json::Error>());
        assert_eq!(json.map(|json| (json.line(), json.column())), Some((1, 1)), "{error:?}");
        let missing = File::load(&folder.join("missing.json")).unwrap_err();
        assert_eq!(missing.kind(), ErrorKind::NotFound);
        assert!(missing.to_string().contains("missing.json") && missing.to_string().contains("TOOLLOOP_RECORD=1"));
        // A folder where the file should be cannot be read: the read's own
        // error, with the path.
        let unreadable = File::load(&folder).unwrap_err();
        assert!(unreadable.to_string().starts_with(&format!("cassette {}: ", folder.display())), "{unreadable}");
        let read = std::error::Error::source(&unreadable).and_then(|source| source.downcast_ref::<std::io::Error>());
        assert_eq!(read.map(std::io::Error::kind), Some(unreadable.kind()), "the read's own error is the source");
        let save = File::new(Vec::new()).save(&folder).unwrap_err();
        assert!(save.to_string().starts_with(&format!("cassette {}: ", folder.display())), "{save}");
        std::fs::remove_dir_all(folder).unwrap();
    }
}
