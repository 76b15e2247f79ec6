//! Whether a request is the recorded one, and where it is not.
//!
//! Both sides become one JSON document, `{"method", "path", "headers",
//! "body"}`: the URL's origin is left out, so a cassette recorded through
//! a proxy or a local server replays against the provider's default URL;
//! of the headers, those the recording kept are matched both ways (a
//! header sent now that was not sent then is a difference); a cassette
//! that does not say which it kept (written by hand, or by an earlier
//! toolloop) has the headers its requests hold matched.
//! Ignored fields are removed from both, then the two are compared value
//! by value. Each difference is named by its JSON pointer into that
//! document (`/body/messages/2/content/0/text`), the same pointer
//! [`Cassette::ignore_pointer`](super::Cassette::ignore_pointer)
//! takes.

use std::fmt;

use serde_json::{Map, Value};

use super::file::Request;

/// Fields left out of matching.
#[derive(Clone, Debug, Default)]
pub(crate) struct Ignored {
    /// Object keys of the body, at any depth.
    pub(crate) fields: Vec<String>,
    /// JSON pointers; a `*` segment matches any key or index.
    pub(crate) pointers: Vec<String>,
}

/// One place where the sent request differs from the recorded one.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Difference {
    /// The JSON pointer of the place, in the document
    /// `{"method", "path", "headers", "body"}`.
    pub(crate) pointer: String,
    /// What the cassette holds there (`None`: nothing).
    pub(crate) recorded: Option<Value>,
    /// What was sent there (`None`: nothing).
    pub(crate) sent: Option<Value>,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |value: &Option<Value>| value.as_ref().map_or_else(|| "nothing".to_owned(), excerpt);
        let pointer = if self.pointer.is_empty() { "/" } else { &self.pointer };
        write!(f, "{pointer}: recorded {}, sent {}", show(&self.recorded), show(&self.sent))
    }
}

/// A value as compact JSON, cut to a readable length.
fn excerpt(value: &Value) -> String {
    const LIMIT: usize = 160;
    let text = value.to_string();
    match text.char_indices().nth(LIMIT) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// The differences between `recorded` and `sent`, in document order. With
/// `kept` (the headers the recording kept), those headers are matched both
/// ways; without, only those `recorded` holds.
pub(crate) fn differences(
    recorded: &Request,
    sent: &Request,
    ignored: &Ignored,
    kept: Option<&[String]>,
) -> Vec<Difference> {
    let mut sent = sent.clone();
    match kept {
        // A header written into a recorded request by hand is matched too.
        Some(kept) => sent.headers.retain(|name, _| kept.contains(name) || recorded.headers.contains_key(name)),
        None => sent.headers.retain(|name, _| recorded.headers.contains_key(name)),
    }
    let (mut recorded, mut sent) = (document(recorded), document(&sent));
    for document in [&mut recorded, &mut sent] {
        // Fields of the body only: a field named `path` or `method` in a
        // tool's arguments must not switch the URL's matching off.
        if let Some(body) = document.get_mut("body") {
            for field in &ignored.fields {
                remove_field(body, field);
            }
        }
        for pointer in &ignored.pointers {
            let segments: Vec<String> = pointer.split('/').skip(1).map(unescape).collect();
            remove_pointer(document, &segments);
        }
    }
    let mut out = Vec::new();
    compare(&recorded, &sent, &mut String::new(), &mut out);
    out
}

/// The document a request is matched as.
fn document(request: &Request) -> Value {
    let path = match reqwest::Url::parse(&request.url) {
        Ok(url) => match url.query() {
            Some(query) => format!("{}?{query}", url.path()),
            None => url.path().to_owned(),
        },
        Err(_) => request.url.clone(),
    };
    let headers: Map<String, Value> =
        request.headers.iter().map(|(name, value)| (name.clone(), Value::String(value.clone()))).collect();
    let mut document = Map::new();
    document.insert("method".into(), Value::String(request.method.clone()));
    document.insert("path".into(), Value::String(path));
    document.insert("headers".into(), Value::Object(headers));
    document.insert("body".into(), request.body.to_value());
    Value::Object(document)
}

fn compare(recorded: &Value, sent: &Value, pointer: &mut String, out: &mut Vec<Difference>) {
    match (recorded, sent) {
        (Value::Object(recorded), Value::Object(sent)) => {
            for (key, value) in recorded {
                let mark = push(pointer, key);
                match sent.get(key) {
                    Some(other) => compare(value, other, pointer, out),
                    None => {
                        out.push(Difference { pointer: pointer.clone(), recorded: Some(value.clone()), sent: None });
                    }
                }
                pointer.truncate(mark);
            }
            for (key, value) in sent.iter().filter(|(key, _)| !recorded.contains_key(*key)) {
                let mark = push(pointer, key);
                out.push(Difference { pointer: pointer.clone(), recorded: None, sent: Some(value.clone()) });
                pointer.truncate(mark);
            }
        }
        (Value::Array(recorded), Value::Array(sent)) => {
            for index in 0..recorded.len().max(sent.len()) {
                let mark = push(pointer, &index.to_string());
                match (recorded.get(index), sent.get(index)) {
                    (Some(a), Some(b)) => compare(a, b, pointer, out),
                    (a, b) => out.push(Difference { pointer: pointer.clone(), recorded: a.cloned(), sent: b.cloned() }),
                }
                pointer.truncate(mark);
            }
        }
        (a, b) if a == b => {}
        (a, b) => out.push(Difference { pointer: pointer.clone(), recorded: Some(a.clone()), sent: Some(b.clone()) }),
    }
}

/// Appends `/key` (escaped) to `pointer`; returns the length to truncate back to.
fn push(pointer: &mut String, key: &str) -> usize {
    let mark = pointer.len();
    pointer.push('/');
    pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
    mark
}

fn unescape(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

fn remove_field(value: &mut Value, field: &str) {
    match value {
        Value::Object(map) => {
            map.shift_remove(field);
            map.values_mut().for_each(|value| remove_field(value, field));
        }
        Value::Array(items) => items.iter_mut().for_each(|value| remove_field(value, field)),
        _ => {}
    }
}

fn remove_pointer(value: &mut Value, segments: &[String]) {
    let Some((first, rest)) = segments.split_first() else { return };
    match value {
        Value::Object(map) if rest.is_empty() => {
            if first == "*" {
                map.clear();
            } else {
                map.shift_remove(first);
            }
        }
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                if first == "*" || key == first {
                    remove_pointer(value, rest);
                }
            }
        }
        Value::Array(items) if rest.is_empty() => {
            // Removing an element would shift the ones after it: it is
            // blanked instead, on both sides alike.
            for (index, item) in items.iter_mut().enumerate() {
                if first == "*" || first.parse() == Ok(index) {
                    *item = Value::Null;
                }
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter_mut().enumerate() {
                if first == "*" || first.parse() == Ok(index) {
                    remove_pointer(item, rest);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Difference, Ignored, differences};
    use crate::testing::cassette::file::{Payload, Request};

    fn request(url: &str, body: serde_json::Value) -> Request {
        Request {
            method: "POST".into(),
            url: url.into(),
            headers: std::collections::BTreeMap::new(),
            body: Payload::Body(body),
        }
    }

    #[test]
    fn differences_are_named_by_json_pointer_with_both_sides() {
        let recorded = request(
            "http://127.0.0.1:9/v1/messages",
            json!({"model": "m", "messages": [{"content": "Paris"}, {"content": "x"}], "a/b": 1, "gone": true}),
        );
        let sent = request(
            "https://api.example.com/v1/messages",
            json!({"model": "m", "messages": [{"content": "Rome"}], "a/b": 2, "new": null}),
        );
        let found = differences(&recorded, &sent, &Ignored::default(), None);
        let shown: Vec<String> = found.iter().map(Difference::to_string).collect();
        assert_eq!(
            shown,
            [
                "/body/messages/0/content: recorded \"Paris\", sent \"Rome\"",
                "/body/messages/1: recorded {\"content\":\"x\"}, sent nothing",
                "/body/a~1b: recorded 1, sent 2",
                "/body/gone: recorded true, sent nothing",
                "/body/new: recorded nothing, sent null",
            ]
        );
    }

    #[test]
    fn paths_are_matched_and_origins_are_not() {
        let recorded = request("http://127.0.0.1:9/v1/messages", json!({}));
        let sent = request("https://api.example.com/v1/chat", json!({}));
        let found = differences(&recorded, &sent, &Ignored::default(), None);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].pointer, "/path");
        assert!(
            differences(&recorded, &request("https://a.example/v1/messages", json!({})), &Ignored::default(), None)
                .is_empty()
        );
    }

    #[test]
    fn headers_the_cassette_recorded_are_matched() {
        let mut recorded = request("http://h/p", json!({}));
        let mut sent = request("http://h/p", json!({}));
        sent.headers.insert("anthropic-version".into(), "2023-06-01".into());
        assert!(differences(&recorded, &sent, &Ignored::default(), None).is_empty(), "not recorded: not matched");
        recorded.headers.insert("anthropic-version".into(), "2023-01-01".into());
        let found = differences(&recorded, &sent, &Ignored::default(), None);
        assert_eq!(found[0].to_string(), "/headers/anthropic-version: recorded \"2023-01-01\", sent \"2023-06-01\"");
        sent.headers.clear();
        assert_eq!(differences(&recorded, &sent, &Ignored::default(), None)[0].sent, None);

        // A recording that kept `anthropic-beta` and saw none: one sent now differs.
        let kept = ["anthropic-beta".to_owned(), "anthropic-version".to_owned()];
        sent.headers.insert("anthropic-version".into(), "2023-01-01".into());
        sent.headers.insert("anthropic-beta".into(), "tools-2024".into());
        sent.headers.insert("x-other".into(), "not kept".into());
        let found = differences(&recorded, &sent, &Ignored::default(), Some(&kept));
        let shown: Vec<String> = found.iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["/headers/anthropic-beta: recorded nothing, sent \"tools-2024\""]);

        // A header written into the recorded request by hand is matched too.
        recorded.headers.insert("anthropic-beta".into(), "tools-2024".into());
        recorded.headers.insert("x-other".into(), "not kept".into());
        assert!(differences(&recorded, &sent, &Ignored::default(), Some(&kept)).is_empty());
    }

    #[test]
    fn ignored_fields_and_pointers_are_left_out() {
        let recorded = request("http://h/p", json!({"user": "a", "items": [{"id": 1, "t": 1}, {"id": 2, "t": 2}]}));
        let sent = request("http://h/p", json!({"user": "b", "items": [{"id": 1, "t": 9}, {"id": 3, "t": 8}]}));
        let ignored = Ignored { fields: vec!["user".into()], pointers: vec!["/body/items/*/t".into()] };
        let found = differences(&recorded, &sent, &ignored, None);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].pointer, "/body/items/1/id");
        let ignored =
            Ignored { fields: vec!["user".into()], pointers: vec!["/body/items/1".into(), "/body/items/0/t".into()] };
        assert!(differences(&recorded, &sent, &ignored, None).is_empty());
    }

    /// An ignored field is a field of the body: one named `path` (a file
    /// tool's argument) leaves the URL matched.
    #[test]
    fn an_ignored_field_leaves_the_path_method_and_headers_matched() {
        let mut recorded = request("http://h/v1/models/a:generateContent", json!({"path": "/tmp/a"}));
        let mut sent = request("http://h/v1/models/b:generateContent", json!({"path": "/tmp/b"}));
        sent.method = "PUT".into();
        recorded.headers.insert("anthropic-version".into(), "1".into());
        sent.headers.insert("anthropic-version".into(), "2".into());
        let ignored =
            Ignored { fields: vec!["path".into(), "method".into(), "anthropic-version".into()], pointers: Vec::new() };
        let found: Vec<String> =
            differences(&recorded, &sent, &ignored, None).iter().map(|d| d.pointer.clone()).collect();
        assert_eq!(found, ["/method", "/path", "/headers/anthropic-version"]);
    }
}
