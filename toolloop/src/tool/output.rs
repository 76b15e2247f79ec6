//! What a tool returns.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

/// A tool's output: any serialisable value.
///
/// The model sees text: a string output stays the string itself (not a
/// quoted JSON string), anything else is rendered as compact JSON. The
/// structured value stays available to terminal checks and hooks.
///
/// A derived tool whose `run` returns `Ok(())` (or a unit struct) has
/// nothing to show, and JSON would show the model `null`, which reads like
/// a failure: its output is the text [`ToolOutput::DONE`] instead.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct ToolOutput {
    value: Value,
}

impl ToolOutput {
    /// What the model is sent for a derived tool that returned `Ok(())`.
    pub const DONE: &'static str = "Done: the tool succeeded and returned no output.";

    /// Output holding `value`.
    pub fn new(value: Value) -> Self {
        Self { value }
    }

    /// Serialises `output`; `()` and unit structs become [`ToolOutput::DONE`].
    pub fn from_serialize<T: Serialize + ?Sized>(output: &T) -> Result<Self, serde_json::Error> {
        let value = serde_json::to_value(output)?;
        // `None` is `null` too, and means "nothing found": only unit is "done".
        if value.is_null() && output.serialize(unit::IsUnit).unwrap_or(false) {
            return Ok(Self::from(Self::DONE));
        }
        Ok(Self::new(value))
    }

    /// The output as a JSON value.
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// The output as a JSON value, by value.
    pub fn into_value(self) -> Value {
        self.value
    }

    /// The text the model sees.
    pub fn text(&self) -> Cow<'_, str> {
        match &self.value {
            Value::String(text) => Cow::Borrowed(text),
            other => Cow::Owned(other.to_string()),
        }
    }
}

impl From<String> for ToolOutput {
    fn from(text: String) -> Self {
        Self::new(Value::String(text))
    }
}

impl From<&str> for ToolOutput {
    fn from(text: &str) -> Self {
        Self::new(Value::from(text))
    }
}

impl From<Value> for ToolOutput {
    fn from(value: Value) -> Self {
        Self::new(value)
    }
}

/// Tells `()` and unit structs from the other values JSON writes as `null`.
mod unit {
    use std::fmt;

    use serde::Serializer;
    use serde::ser::Impossible;

    /// A serializer that answers whether the value is unit.
    pub(super) struct IsUnit;

    /// Any value that is not unit.
    #[derive(Debug)]
    pub(super) struct NotUnit;

    impl fmt::Display for NotUnit {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("not unit")
        }
    }

    impl std::error::Error for NotUnit {}

    impl serde::ser::Error for NotUnit {
        fn custom<T: fmt::Display>(_: T) -> Self {
            Self
        }
    }

    macro_rules! not_unit {
        ($($method:ident($($arg:ty),*);)*) => {
            $(fn $method(self, $(_: $arg),*) -> Result<bool, NotUnit> { Ok(false) })*
        };
    }

    impl Serializer for IsUnit {
        type Ok = bool;
        type Error = NotUnit;
        type SerializeSeq = Impossible<bool, NotUnit>;
        type SerializeTuple = Impossible<bool, NotUnit>;
        type SerializeTupleStruct = Impossible<bool, NotUnit>;
        type SerializeTupleVariant = Impossible<bool, NotUnit>;
        type SerializeMap = Impossible<bool, NotUnit>;
        type SerializeStruct = Impossible<bool, NotUnit>;
        type SerializeStructVariant = Impossible<bool, NotUnit>;

        fn serialize_unit(self) -> Result<bool, NotUnit> {
            Ok(true)
        }

        fn serialize_unit_struct(self, _: &'static str) -> Result<bool, NotUnit> {
            Ok(true)
        }

        not_unit! {
            serialize_bool(bool);
            serialize_i8(i8);
            serialize_i16(i16);
            serialize_i32(i32);
            serialize_i64(i64);
            serialize_u8(u8);
            serialize_u16(u16);
            serialize_u32(u32);
            serialize_u64(u64);
            serialize_f32(f32);
            serialize_f64(f64);
            serialize_char(char);
            serialize_str(&str);
            serialize_bytes(&[u8]);
            serialize_none();
            serialize_unit_variant(&'static str, u32, &'static str);
        }

        fn serialize_some<T: serde::Serialize + ?Sized>(self, _: &T) -> Result<bool, NotUnit> {
            Ok(false)
        }

        fn serialize_newtype_struct<T: serde::Serialize + ?Sized>(
            self,
            _: &'static str,
            value: &T,
        ) -> Result<bool, NotUnit> {
            value.serialize(self)
        }

        fn serialize_newtype_variant<T: serde::Serialize + ?Sized>(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: &T,
        ) -> Result<bool, NotUnit> {
            Ok(false)
        }

        fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, NotUnit> {
            Err(NotUnit)
        }

        fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, NotUnit> {
            Err(NotUnit)
        }

        fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct, NotUnit> {
            Err(NotUnit)
        }

        fn serialize_tuple_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeTupleVariant, NotUnit> {
            Err(NotUnit)
        }

        fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, NotUnit> {
            Err(NotUnit)
        }

        fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, NotUnit> {
            Err(NotUnit)
        }

        fn serialize_struct_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeStructVariant, NotUnit> {
            Err(NotUnit)
        }
    }

    #[cfg(test)]
    mod tests {
        use super::super::ToolOutput;

        #[derive(serde::Serialize)]
        struct Saved;

        #[test]
        fn unit_is_done_and_none_stays_null() {
            assert_eq!(ToolOutput::from_serialize(&()).unwrap().text(), ToolOutput::DONE);
            assert_eq!(ToolOutput::from_serialize(&Saved).unwrap().text(), ToolOutput::DONE);
            assert_eq!(ToolOutput::from_serialize(&None::<u32>).unwrap().text(), "null");
            // JSON `null` serialises as unit too.
            assert_eq!(ToolOutput::from_serialize(&serde_json::Value::Null).unwrap().text(), ToolOutput::DONE);
            assert_eq!(ToolOutput::from_serialize(&3).unwrap().text(), "3");
        }
    }
}
