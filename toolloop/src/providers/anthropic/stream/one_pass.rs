//! Reading a stream event (and a block's delta) in one pass. An event's
//! fields are read straight into their types once its `type` is known,
//! which is at once as the API sends it (`type` first); a field that
//! comes before the `type` is held as a JSON value and read when the
//! `type` arrives. Accepts and rejects the objects the derived
//! `#[serde(tag = "type")]` enums with a `#[serde(other)]` catch-all
//! would: a variant's own fields are read and must be there, others are
//! ignored, and an unknown `type` is `Other`.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, DeserializeOwned, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

use super::super::fields::{Name, put};
use super::{Delta, ErrorDetail, Event, MessageDeltaBody, StartBlock, StartMessage, StreamUsage};

/// An event's `type`.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    MessageStart,
    ContentBlockStart,
    ContentBlockDelta,
    ContentBlockStop,
    MessageDelta,
    MessageStop,
    Ping,
    Error,
    Other,
}

/// An event's key.
#[derive(Clone, Copy)]
enum Key {
    Type,
    Message,
    Index,
    ContentBlock,
    Delta,
    Usage,
    Error,
    Other,
}

impl Kind {
    /// Whether an event of this kind has `key` (its other keys are ignored).
    fn has(self, key: Key) -> bool {
        matches!(
            (self, key),
            (Self::MessageStart, Key::Message)
                | (Self::ContentBlockStart | Self::ContentBlockDelta | Self::ContentBlockStop, Key::Index)
                | (Self::ContentBlockStart, Key::ContentBlock)
                | (Self::ContentBlockDelta | Self::MessageDelta, Key::Delta)
                | (Self::MessageDelta, Key::Usage)
                | (Self::Error, Key::Error)
        )
    }
}

/// Where a field's value is read from: the map itself, or a value held
/// while the `type` was not known yet.
trait Source<'de> {
    type Error: de::Error;
    fn read<T: DeserializeOwned>(&mut self) -> Result<T, Self::Error>;
    fn skip(&mut self) -> Result<(), Self::Error>;
}

struct FromMap<'a, A>(&'a mut A);

impl<'de, A: MapAccess<'de>> Source<'de> for FromMap<'_, A> {
    type Error = A::Error;
    fn read<T: DeserializeOwned>(&mut self) -> Result<T, A::Error> {
        self.0.next_value()
    }
    fn skip(&mut self) -> Result<(), A::Error> {
        self.0.next_value::<IgnoredAny>().map(|_| ())
    }
}

struct Held<E>(Option<Value>, PhantomData<E>);

impl<E: de::Error> Source<'_> for Held<E> {
    type Error = E;
    fn read<T: DeserializeOwned>(&mut self) -> Result<T, E> {
        T::deserialize(self.0.take().unwrap_or_default()).map_err(E::custom)
    }
    fn skip(&mut self) -> Result<(), E> {
        Ok(())
    }
}

/// The fields an event may have, each read at most once.
#[derive(Default)]
struct Fields {
    message: Option<StartMessage>,
    index: Option<usize>,
    content_block: Option<StartBlock>,
    delta: Option<Delta>,
    delta_body: Option<MessageDeltaBody>,
    usage: Option<StreamUsage>,
    /// Whether `usage` was there (it may be `null`).
    usage_seen: bool,
    error: Option<ErrorDetail>,
}

impl Fields {
    /// Reads `key`'s value from `source` as an event of `kind` has it.
    fn read<'de, S: Source<'de>>(&mut self, kind: Kind, key: Key, source: &mut S) -> Result<(), S::Error> {
        if !kind.has(key) {
            return source.skip();
        }
        match key {
            Key::Message => put(&mut self.message, source.read()?, "message"),
            Key::Index => put(&mut self.index, source.read()?, "index"),
            Key::ContentBlock => put(&mut self.content_block, source.read()?, "content_block"),
            Key::Delta if kind == Kind::MessageDelta => put(&mut self.delta_body, source.read()?, "delta"),
            Key::Delta => put(&mut self.delta, source.read()?, "delta"),
            Key::Usage => {
                if std::mem::replace(&mut self.usage_seen, true) {
                    return Err(de::Error::duplicate_field("usage"));
                }
                self.usage = source.read()?;
                Ok(())
            }
            Key::Error => put(&mut self.error, source.read()?, "error"),
            Key::Type | Key::Other => source.skip(),
        }
    }

    fn into_event<E: de::Error>(self, kind: Kind) -> Result<Event, E> {
        fn need<T, E: de::Error>(value: Option<T>, name: &'static str) -> Result<T, E> {
            value.ok_or_else(|| E::missing_field(name))
        }
        Ok(match kind {
            Kind::MessageStart => Event::MessageStart { message: need(self.message, "message")? },
            Kind::ContentBlockStart => Event::ContentBlockStart {
                index: need(self.index, "index")?,
                content_block: need(self.content_block, "content_block")?,
            },
            Kind::ContentBlockDelta => {
                Event::ContentBlockDelta { index: need(self.index, "index")?, delta: need(self.delta, "delta")? }
            }
            Kind::ContentBlockStop => Event::ContentBlockStop { index: need(self.index, "index")? },
            Kind::MessageDelta => Event::MessageDelta { delta: need(self.delta_body, "delta")?, usage: self.usage },
            Kind::MessageStop => Event::MessageStop,
            Kind::Ping => Event::Ping,
            Kind::Error => Event::Error { error: need(self.error, "error")? },
            Kind::Other => Event::Other,
        })
    }
}

impl<'de> Deserialize<'de> for Event {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(EventVisitor)
    }
}

struct EventVisitor;

impl<'de> Visitor<'de> for EventVisitor {
    type Value = Event;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a stream event")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Event, A::Error> {
        let mut kind = None;
        let mut fields = Fields::default();
        // Fields before the `type` (not as the API sends them).
        let mut early: Vec<(Key, Value)> = Vec::new();
        while let Some(key) = map.next_key::<Key>()? {
            match (key, kind) {
                (Key::Type, Some(_)) => return Err(de::Error::duplicate_field("type")),
                (Key::Type, None) => {
                    let known: Kind = map.next_value()?;
                    for (key, value) in early.drain(..) {
                        fields.read(known, key, &mut Held(Some(value), PhantomData))?;
                    }
                    kind = Some(known);
                }
                (Key::Other, _) => {
                    map.next_value::<IgnoredAny>()?;
                }
                (key, Some(known)) => fields.read(known, key, &mut FromMap(&mut map))?,
                (key, None) => early.push((key, map.next_value()?)),
            }
        }
        let kind = kind.ok_or_else(|| de::Error::missing_field("type"))?;
        fields.into_event(kind)
    }
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_identifier(Name(|name| match name {
            "type" => Key::Type,
            "message" => Key::Message,
            "index" => Key::Index,
            "content_block" => Key::ContentBlock,
            "delta" => Key::Delta,
            "usage" => Key::Usage,
            "error" => Key::Error,
            _ => Key::Other,
        }))
    }
}

impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(Name(|name| match name {
            "message_start" => Kind::MessageStart,
            "content_block_start" => Kind::ContentBlockStart,
            "content_block_delta" => Kind::ContentBlockDelta,
            "content_block_stop" => Kind::ContentBlockStop,
            "message_delta" => Kind::MessageDelta,
            "message_stop" => Kind::MessageStop,
            "ping" => Kind::Ping,
            "error" => Kind::Error,
            _ => Kind::Other,
        }))
    }
}

/// A delta's key.
#[derive(Clone, Copy)]
enum DeltaKey {
    Type,
    Text,
    PartialJson,
    Thinking,
    Signature,
    Other,
}

/// A delta's `type`.
#[derive(Clone, Copy, PartialEq)]
enum DeltaKind {
    Text,
    InputJson,
    Thinking,
    Signature,
    Other,
}

impl DeltaKind {
    /// The one string field a delta of this kind has.
    fn field(self) -> Option<DeltaKey> {
        match self {
            Self::Text => Some(DeltaKey::Text),
            Self::InputJson => Some(DeltaKey::PartialJson),
            Self::Thinking => Some(DeltaKey::Thinking),
            Self::Signature => Some(DeltaKey::Signature),
            Self::Other => None,
        }
    }

    fn field_name(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::InputJson => "partial_json",
            Self::Thinking => "thinking",
            Self::Signature => "signature",
            Self::Other => "",
        }
    }
}

impl<'de> Deserialize<'de> for Delta {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(DeltaVisitor)
    }
}

struct DeltaVisitor;

impl<'de> Visitor<'de> for DeltaVisitor {
    type Value = Delta;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a delta")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Delta, A::Error> {
        let mut kind: Option<DeltaKind> = None;
        let mut text: Option<String> = None;
        // The fields before the `type`, held as values (not as the API sends them).
        let mut early: Vec<(DeltaKey, Value)> = Vec::new();
        while let Some(key) = map.next_key::<DeltaKey>()? {
            match (key, kind) {
                (DeltaKey::Type, Some(_)) => return Err(de::Error::duplicate_field("type")),
                (DeltaKey::Type, None) => {
                    let known: DeltaKind = map.next_value()?;
                    for (key, value) in early.drain(..) {
                        if known.field().is_some_and(|field| same(field, key)) {
                            put(&mut text, String::deserialize(value).map_err(de::Error::custom)?, known.field_name())?;
                        }
                    }
                    kind = Some(known);
                }
                (DeltaKey::Other, _) => {
                    map.next_value::<IgnoredAny>()?;
                }
                (key, Some(known)) if known.field().is_some_and(|field| same(field, key)) => {
                    put(&mut text, map.next_value()?, known.field_name())?;
                }
                (_, Some(_)) => {
                    map.next_value::<IgnoredAny>()?;
                }
                (key, None) => early.push((key, map.next_value()?)),
            }
        }
        let kind = kind.ok_or_else(|| de::Error::missing_field("type"))?;
        let text = || text.ok_or_else(|| de::Error::missing_field(kind.field_name()));
        Ok(match kind {
            DeltaKind::Text => Delta::Text { text: text()? },
            DeltaKind::InputJson => Delta::InputJson { partial_json: text()? },
            DeltaKind::Thinking => Delta::Thinking { thinking: text()? },
            DeltaKind::Signature => Delta::Signature { signature: text()? },
            DeltaKind::Other => Delta::Other,
        })
    }
}

fn same(a: DeltaKey, b: DeltaKey) -> bool {
    std::mem::discriminant(&a) == std::mem::discriminant(&b)
}

impl<'de> Deserialize<'de> for DeltaKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_identifier(Name(|name| match name {
            "type" => DeltaKey::Type,
            "text" => DeltaKey::Text,
            "partial_json" => DeltaKey::PartialJson,
            "thinking" => DeltaKey::Thinking,
            "signature" => DeltaKey::Signature,
            _ => DeltaKey::Other,
        }))
    }
}

impl<'de> Deserialize<'de> for DeltaKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(Name(|name| match name {
            "text_delta" => DeltaKind::Text,
            "input_json_delta" => DeltaKind::InputJson,
            "thinking_delta" => DeltaKind::Thinking,
            "signature_delta" => DeltaKind::Signature,
            _ => DeltaKind::Other,
        }))
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::super::{Delta, ErrorDetail, Event, MessageDeltaBody, StartBlock, StartMessage, StreamUsage};

    /// The derived enums this replaces, to read the same JSON beside it
    /// (compared by their `Debug` text).
    #[allow(dead_code)]
    #[derive(Debug, Deserialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    enum DerivedEvent {
        MessageStart {
            message: StartMessage,
        },
        ContentBlockStart {
            index: usize,
            content_block: StartBlock,
        },
        ContentBlockDelta {
            index: usize,
            delta: DerivedDelta,
        },
        ContentBlockStop {
            index: usize,
        },
        MessageDelta {
            delta: MessageDeltaBody,
            #[serde(default)]
            usage: Option<StreamUsage>,
        },
        MessageStop,
        Ping,
        Error {
            error: ErrorDetail,
        },
        #[serde(other)]
        Other,
    }

    #[allow(dead_code)]
    #[derive(Debug, Deserialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    enum DerivedDelta {
        #[serde(rename = "text_delta")]
        Text { text: String },
        #[serde(rename = "input_json_delta")]
        InputJson { partial_json: String },
        #[serde(rename = "thinking_delta")]
        Thinking { thinking: String },
        #[serde(rename = "signature_delta")]
        Signature { signature: String },
        #[serde(other)]
        Other,
    }

    /// Both read as the same `Debug` text (the derived one's names mapped).
    fn same(case: &str) {
        let ours = serde_json::from_str::<Event>(case).map(|event| format!("{event:?}"));
        let derived = serde_json::from_str::<DerivedEvent>(case)
            .map(|event| format!("{event:?}").replace("DerivedDelta", "Delta").replace("DerivedEvent", "Event"));
        match (ours, derived) {
            (Ok(ours), Ok(derived)) => assert_eq!(ours, derived, "{case}"),
            (Err(_), Err(_)) => {}
            (ours, derived) => panic!("{case}: ours {ours:?}, the derived enum's {derived:?}"),
        }
    }

    #[test]
    fn reads_and_refuses_what_the_tagged_enums_did() {
        let cases = [
            r#"{"type":"message_start","message":{"id":"m1","model":"claude","usage":{"input_tokens":5}}}"#,
            r#"{"message":{"id":"m1"},"type":"message_start"}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t","name":"n","input":{}}}"#,
            r#"{"index":2,"content_block":{"type":"thinking","thinking":""},"type":"content_block_start"}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}"#,
            r#"{"delta":{"text":"lo","type":"text_delta"},"index":0,"type":"content_block_delta"}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a"}}"#,
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"thinking_delta","thinking":"hm"}}"#,
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"signature_delta","signature":"s"}}"#,
            r#"{"type":"content_block_delta","index":3,"delta":{"type":"citations_delta","citation":{"x":1}}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a","thinking":5}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":null},"usage":null}"#,
            r#"{"usage":{"output_tokens":9},"delta":{"stop_reason":"end_turn"},"type":"message_delta"}"#,
            r#"{"type":"message_stop"}"#,
            r#"{"type":"ping"}"#,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            r#"{"type":"some_new_event","index":"not a number","delta":7}"#,
            r#"{"index":"x","type":"message_stop"}"#,
            // Refused alike:
            r#"{"index":0}"#,
            r#"{"type":"content_block_stop"}"#,
            r#"{"type":"content_block_stop","index":"0"}"#,
            r#"{"type":"content_block_delta","index":0}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"text":"a"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":1}}"#,
            r#"{"delta":{"type":"text_delta","text":1},"index":0,"type":"content_block_delta"}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a","text":"b"}}"#,
            r#"{"type":"content_block_stop","index":0,"index":1}"#,
            r#"{"type":"ping","type":"ping"}"#,
            r#"{"type":"message_delta","usage":{}}"#,
            r#"{"type":"error"}"#,
            r#"{"type":5}"#,
            r#""ping""#,
        ];
        for case in cases {
            same(case);
        }
    }

    #[test]
    fn a_delta_alone_reads_as_before() {
        let delta: Delta = serde_json::from_str(r#"{"type":"input_json_delta","partial_json":"[1"}"#).unwrap();
        assert_eq!(delta, Delta::InputJson { partial_json: "[1".into() });
        let error = serde_json::from_str::<Delta>(r#"{"type":"thinking_delta"}"#).unwrap_err();
        assert!(error.to_string().contains("missing field `thinking`"), "{error}");
    }
}
