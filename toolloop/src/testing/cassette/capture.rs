//! What of an exchange is written down, and what never is.
//!
//! Headers are kept by name from a short list of those that say how a body
//! is read or how a client should retry; everything else (`authorization`,
//! `x-api-key`, `x-goog-api-key`, cookies, the user's own gateway headers)
//! never reaches the file. The URL loses its userinfo and every parameter
//! whose name marks a credential. The known secrets (the API key, the values of extra headers
//! named as credentials, the URL's password) are then searched for in
//! every string that is kept and
//! replaced by [`REDACTED`]. Request ids are volatile: they are written as
//! [`NORMALISED`]. Bodies are otherwise kept byte for byte in meaning:
//! signatures, encrypted reasoning, tool-call ids and timestamps the client
//! derives ids from must come back exactly.

use std::collections::BTreeMap;

use reqwest::header::HeaderMap;
use serde_json::Value;

use super::file::{Data, Event, Line, Payload, REQUEST_HEADERS, Request, Response, ResponseBody};
use crate::providers::{Framing, Outgoing, Secret, is_credential};

/// What a secret found in a kept string is replaced with.
pub(crate) const REDACTED: &str = "<redacted>";

/// What a volatile value (a request id) is written as.
pub(crate) const NORMALISED: &str = "<normalised>";

/// Response headers kept: how the body is read and what the retry logic
/// acts on; request ids are normalised.
const RESPONSE_HEADERS: &[&str] = &["content-type", "retry-after", "retry-after-ms", "x-should-retry"];
const REQUEST_ID_HEADERS: &[&str] = &["request-id", "x-request-id"];

/// Secrets shorter than this are not searched for in bodies: a test key of
/// one letter would otherwise blank that letter everywhere. Real keys are
/// far longer; the headers carrying any key are never written at all.
const MIN_SECRET_LEN: usize = 8;

/// The secrets of one model, to keep out of its cassette.
#[derive(Clone, Default)]
pub(crate) struct Secrets(Vec<Secret>);

impl Secrets {
    pub(crate) fn new(secrets: Vec<Secret>) -> Self {
        Self(secrets.into_iter().filter(|secret| secret.expose().len() >= MIN_SECRET_LEN).collect())
    }

    /// `text` with every secret replaced by [`REDACTED`].
    fn scrub_text(&self, text: &str) -> Option<String> {
        let mut scrubbed: Option<String> = None;
        for secret in &self.0 {
            let current = scrubbed.as_deref().unwrap_or(text);
            if current.contains(secret.expose()) {
                scrubbed = Some(current.replace(secret.expose(), REDACTED));
            }
        }
        scrubbed
    }

    /// Replaces every secret in the strings (and object keys) of `value`.
    pub(crate) fn scrub(&self, value: &mut Value) {
        if self.0.is_empty() {
            return;
        }
        match value {
            Value::String(text) => {
                if let Some(scrubbed) = self.scrub_text(text) {
                    *text = scrubbed;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| self.scrub(item)),
            Value::Object(map) => {
                if map.keys().any(|key| self.scrub_text(key).is_some()) {
                    *map = std::mem::take(map)
                        .into_iter()
                        .map(|(key, value)| (self.scrub_text(&key).unwrap_or(key), value))
                        .collect();
                }
                map.values_mut().for_each(|item| self.scrub(item));
            }
            _ => {}
        }
    }

    fn scrub_string(&self, text: String) -> String {
        self.scrub_text(&text).unwrap_or(text)
    }

    fn scrub_payload(&self, payload: Payload) -> Payload {
        match payload {
            Payload::Body(mut value) => {
                self.scrub(&mut value);
                Payload::Body(value)
            }
            Payload::Text(text) => Payload::Text(self.scrub_string(text)),
        }
    }

    fn scrub_data(&self, data: Data) -> Data {
        match data {
            Data::Data(mut value) => {
                self.scrub(&mut value);
                Data::Data(value)
            }
            Data::Text(text) => Data::Text(self.scrub_string(text)),
        }
    }
}

/// The record of `request`, as a cassette writes it and matches it.
pub(crate) fn request(request: &Outgoing<'_>, secrets: &Secrets) -> Request {
    let headers = REQUEST_HEADERS
        .iter()
        .filter_map(|name| Some(((*name).to_owned(), header_text(&request.headers, name)?)))
        .map(|(name, value)| (name, secrets.scrub_string(value)))
        .collect();
    Request {
        method: "POST".to_owned(),
        url: secrets.scrub_string(safe_url(request.url)),
        headers,
        body: secrets.scrub_payload(Payload::from_bytes(&request.body.to_vec())),
    }
}

/// The headers of a response a cassette keeps.
pub(crate) fn response_headers(headers: &HeaderMap, secrets: &Secrets) -> BTreeMap<String, String> {
    let kept = RESPONSE_HEADERS
        .iter()
        .filter_map(|name| Some(((*name).to_owned(), secrets.scrub_string(header_text(headers, name)?))));
    let ids = REQUEST_ID_HEADERS
        .iter()
        .filter(|name| headers.contains_key(**name))
        .map(|name| ((*name).to_owned(), NORMALISED.to_owned()));
    kept.chain(ids).collect()
}

/// The record of a response whose body was `bytes`: its events or lines
/// when it is a stream (by its content type, else by the wire format's
/// framing for a streamed call's success), else the whole body.
pub(crate) fn response(
    status: u16,
    headers: BTreeMap<String, String>,
    bytes: &[u8],
    streamed: Option<Framing>,
    secrets: &Secrets,
) -> Response {
    let content_type = headers.get("content-type").map(|value| value.to_ascii_lowercase()).unwrap_or_default();
    let framing = if content_type.starts_with("text/event-stream") {
        Some(Framing::Sse)
    } else if content_type.starts_with("application/x-ndjson") {
        Some(Framing::Ndjson)
    } else if content_type.starts_with("application/json") {
        None
    } else {
        streamed.filter(|_| (200..300).contains(&status))
    };
    let text = String::from_utf8_lossy(bytes);
    let body = match framing {
        Some(Framing::Sse) => ResponseBody::Events(
            sse_events(&text)
                .into_iter()
                .map(|(event, data)| Event { event, data: secrets.scrub_data(Data::from_text(&data)) })
                .collect(),
        ),
        Some(Framing::Ndjson) => ResponseBody::Lines(
            text.lines()
                .filter(|line| !line.trim().is_empty())
                .map(|line| Line { data: secrets.scrub_data(Data::from_text(line)) })
                .collect(),
        ),
        None => match secrets.scrub_payload(Payload::from_bytes(bytes)) {
            Payload::Body(value) => ResponseBody::Body(value),
            Payload::Text(text) => ResponseBody::Text(text),
        },
    };
    Response { status, headers, body }
}

fn header_text(headers: &HeaderMap, name: &str) -> Option<String> {
    let values: Vec<&str> = headers.get_all(name).iter().filter_map(|value| value.to_str().ok()).collect();
    (!values.is_empty()).then(|| values.join(", "))
}

/// `url` without its userinfo, and with the parameters whose names mark
/// credentials taken out.
pub(crate) fn safe_url(url: &reqwest::Url) -> String {
    let mut url = url.clone();
    let _ = url.set_username("");
    let _ = url.set_password(None);
    if url.query().is_some() {
        let kept: Vec<(String, String)> = url
            .query_pairs()
            .filter(|(name, _)| !is_credential(name))
            .map(|(name, value)| (name.into_owned(), value.into_owned()))
            .collect();
        if kept.is_empty() {
            url.set_query(None);
        } else {
            url.query_pairs_mut().clear().extend_pairs(kept);
        }
    }
    url.to_string()
}

/// The events of a server-sent event stream, each its type (`None` for
/// the default) and data, as the SSE specification reads them: lines end
/// at CR, LF or CRLF; `data:` lines join with LF; a blank line ends an
/// event; comments and other fields are ignored; an event without data is
/// not dispatched.
pub(crate) fn sse_events(text: &str) -> Vec<(Option<String>, String)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut events = Vec::new();
    let (mut name, mut data): (Option<String>, Option<String>) = (None, None);
    for line in text.split("\r\n").flat_map(|line| line.split(['\r', '\n'])) {
        if line.is_empty() {
            if let Some(data) = data.take() {
                let name = name.take().filter(|name| name != "message");
                events.push((name, data));
            }
            name = None;
            continue;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => name = Some(value.to_owned()),
            "data" => match &mut data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => data = Some(value.to_owned()),
            },
            _ => {}
        }
    }
    // A stream cut before its blank line still gave what it said.
    if let Some(data) = data {
        events.push((name.filter(|name| name != "message"), data));
    }
    events
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Secret, Secrets, safe_url, sse_events};

    #[test]
    fn sse_events_read_as_the_specification_says() {
        let text = "\u{feff}: comment\r\nevent: a\r\ndata: {\"x\":1}\r\n\r\ndata:one\ndata: two\nid: 3\n\n\
                    event: message\ndata: m\n\nevent: empty\n\ndata: [DONE]";
        assert_eq!(
            sse_events(text),
            vec![
                (Some("a".into()), "{\"x\":1}".into()),
                (None, "one\ntwo".into()),
                (None, "m".into()),
                (None, "[DONE]".into()),
            ]
        );
    }

    #[test]
    fn urls_lose_userinfo_and_key_parameters() {
        let url = reqwest::Url::parse("https://user:pw@h.example/v1/models/m:generate?key=k1&alt=sse").unwrap();
        assert_eq!(safe_url(&url), "https://h.example/v1/models/m:generate?alt=sse");
        let url = reqwest::Url::parse("http://127.0.0.1:1/api/chat?API_KEY=x").unwrap();
        assert_eq!(safe_url(&url), "http://127.0.0.1:1/api/chat");
    }

    #[test]
    fn secrets_are_replaced_in_every_string_and_key() {
        let secrets = Secrets::new(vec![Secret::new("sk-canary-123"), Secret::new("k")]);
        let mut value = json!({"a": ["x sk-canary-123 y"], "sk-canary-123": 1, "k": "keep k"});
        secrets.scrub(&mut value);
        assert_eq!(value, json!({"a": ["x <redacted> y"], "<redacted>": 1, "k": "keep k"}));
    }
}
