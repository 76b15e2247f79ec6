//! Reading a response's content block in one pass: its fields in any
//! order, the `type` deciding at the end which of them make the block.
//! Accepts and rejects the objects `#[serde(tag = "type", rename_all =
//! "snake_case")]` with a `#[serde(other)]` catch-all would (not its
//! quirk of reading an array as a block, tag first: no API sends one).

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

use super::fields::{Name, put};
use super::wire::OutputBlock;

impl<'de> Deserialize<'de> for OutputBlock {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(BlockVisitor)
    }
}

struct BlockVisitor;

/// The fields any block this crate reads may have. The string ones are
/// read as values: a block of a type this crate does not use may hold
/// anything under the same names, and is accepted whatever it holds.
#[derive(Default)]
struct Fields {
    kind: Option<String>,
    text: Option<Value>,
    id: Option<Value>,
    name: Option<Value>,
    input: Option<Value>,
    thinking: Option<Value>,
    signature: Option<Value>,
    data: Option<Value>,
}

impl<'de> Visitor<'de> for BlockVisitor {
    type Value = OutputBlock;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a content block")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<OutputBlock, A::Error> {
        let mut fields = Fields::default();
        while let Some(key) = map.next_key::<Key>()? {
            let (slot, name) = match key {
                Key::Type => {
                    put(&mut fields.kind, map.next_value()?, "type")?;
                    continue;
                }
                Key::Text => (&mut fields.text, "text"),
                Key::Id => (&mut fields.id, "id"),
                Key::Name => (&mut fields.name, "name"),
                Key::Input => (&mut fields.input, "input"),
                Key::Thinking => (&mut fields.thinking, "thinking"),
                Key::Signature => (&mut fields.signature, "signature"),
                Key::Data => (&mut fields.data, "data"),
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            put(slot, map.next_value()?, name)?;
        }
        fields.into_block()
    }
}

/// A block's key, read without copying it.
enum Key {
    Type,
    Text,
    Id,
    Name,
    Input,
    Thinking,
    Signature,
    Data,
    Other,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_identifier(Name(|key| match key {
            "type" => Key::Type,
            "text" => Key::Text,
            "id" => Key::Id,
            "name" => Key::Name,
            "input" => Key::Input,
            "thinking" => Key::Thinking,
            "signature" => Key::Signature,
            "data" => Key::Data,
            _ => Key::Other,
        }))
    }
}

impl Fields {
    fn into_block<E: de::Error>(self) -> Result<OutputBlock, E> {
        let Some(kind) = self.kind else {
            return Err(E::missing_field("type"));
        };
        Ok(match kind.as_str() {
            "text" => OutputBlock::Text { text: string(self.text, "text")? },
            "tool_use" => OutputBlock::ToolUse {
                id: match self.id {
                    Some(id) => string(Some(id), "id")?,
                    None => String::new(),
                },
                name: string(self.name, "name")?,
                input: self.input.ok_or_else(|| E::missing_field("input"))?,
            },
            "thinking" => OutputBlock::Thinking {
                thinking: string(self.thinking, "thinking")?,
                signature: string(self.signature, "signature")?,
            },
            "redacted_thinking" => OutputBlock::RedactedThinking { data: string(self.data, "data")? },
            _ => OutputBlock::Other,
        })
    }
}

/// The string a block of a known type must hold under `field`.
fn string<E: de::Error>(value: Option<Value>, field: &'static str) -> Result<String, E> {
    match value {
        Some(value) => String::deserialize(value).map_err(E::custom),
        None => Err(E::missing_field(field)),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::OutputBlock;

    /// What the derived, internally tagged enum this replaces read: the
    /// same blocks from the same JSON, the same refusals.
    #[derive(Debug, serde::Deserialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    enum Derived {
        Text {
            text: String,
        },
        ToolUse {
            #[serde(default)]
            id: String,
            name: String,
            input: serde_json::Value,
        },
        Thinking {
            thinking: String,
            signature: String,
        },
        RedactedThinking {
            data: String,
        },
        #[serde(other)]
        Other,
    }

    impl From<Derived> for OutputBlock {
        fn from(block: Derived) -> Self {
            match block {
                Derived::Text { text } => Self::Text { text },
                Derived::ToolUse { id, name, input } => Self::ToolUse { id, name, input },
                Derived::Thinking { thinking, signature } => Self::Thinking { thinking, signature },
                Derived::RedactedThinking { data } => Self::RedactedThinking { data },
                Derived::Other => Self::Other,
            }
        }
    }

    #[test]
    fn reads_and_refuses_what_the_tagged_enum_did() {
        let cases = [
            r#"{"type":"text","text":"hi"}"#,
            r#"{"text":"hi","type":"text","citations":[{"a":1}]}"#,
            r#"{"type":"tool_use","id":"t1","name":"lookup","input":{"q":[1,{"x":null}]}}"#,
            r#"{"input":{},"name":"lookup","type":"tool_use"}"#,
            r#"{"type":"tool_use","id":"","name":"lookup","input":"not an object"}"#,
            r#"{"type":"thinking","thinking":"hmm","signature":"sig"}"#,
            r#"{"type":"redacted_thinking","data":"opaque"}"#,
            r#"{"type":"server_tool_use","id":7,"name":{"n":1},"input":{}}"#,
            r#"{"type":"web_search_tool_result","tool_use_id":"s","content":[]}"#,
            // Refused alike:
            r#"{"text":"no type"}"#,
            r#"{"type":"text"}"#,
            r#"{"type":"text","text":5}"#,
            r#"{"type":"text","text":"a","text":"b"}"#,
            r#"{"type":"tool_use","name":"lookup"}"#,
            r#"{"type":"tool_use","id":3,"name":"lookup","input":{}}"#,
            r#"{"type":"thinking","thinking":"hmm"}"#,
            r#"{"type":"redacted_thinking","data":null}"#,
            r#"{"type":7,"text":"a"}"#,
            r#""text""#,
        ];
        for case in cases {
            let ours = serde_json::from_str::<OutputBlock>(case);
            let derived = serde_json::from_str::<Derived>(case).map(OutputBlock::from);
            match (ours, derived) {
                (Ok(ours), Ok(derived)) => assert_eq!(ours, derived, "{case}"),
                (Err(_), Err(_)) => {}
                (ours, derived) => panic!("{case}: ours {ours:?}, the derived enum's {derived:?}"),
            }
        }
        let blocks: Vec<OutputBlock> = serde_json::from_value(json!([{"type": "text", "text": "a"}])).unwrap();
        assert_eq!(blocks, [OutputBlock::Text { text: "a".into() }]);
    }

    #[test]
    fn names_the_missing_field() {
        let error = serde_json::from_str::<OutputBlock>(r#"{"type":"thinking","thinking":"hmm"}"#).unwrap_err();
        assert!(error.to_string().contains("missing field `signature`"), "{error}");
        let error = serde_json::from_str::<OutputBlock>(r#"{"type":"text","text":5}"#).unwrap_err();
        assert!(error.to_string().contains("invalid type: integer `5`, expected a string"), "{error}");
    }
}
