//! The one JSON-schema walker: the constraints of a tool's or an output's
//! schema that deserialisation does not check (ranges, lengths, sizes,
//! `pattern`, `enum`/`const`, `multipleOf`, `uniqueItems`), and, for
//! schemas nothing deserialises against (an MCP server's tools), the whole
//! schema: types, `required`, `additionalProperties`, tuples, the
//! `anyOf`/`oneOf`/`allOf`/`not` combinators. Tool arguments and typed
//! outputs share it, so what the model is told (`#[schemars(range(max =
//! 10))]`) is what is enforced.
//!
//! A small walker over the keywords tool schemas use, instead of a general
//! JSON-schema validator crate: those pull in URL and date parsers and
//! their own schema compilation for the few keywords a tool declares (its
//! tests use the `jsonschema` crate as the oracle). Only local `$ref`s are
//! followed; `format` is not checked; a `pattern` the `regex` crate cannot
//! compile (look-around, back-references) is not checked either.

use std::collections::HashMap;
use std::fmt::{self, Write as _};
use std::sync::{Mutex, OnceLock, PoisonError};

use regex::Regex;
use serde_json::{Map, Value};

/// How deep schemas (through `$ref`s) may nest before a schema is taken as
/// recursive beyond reason.
const MAX_DEPTH: usize = 64;

/// One broken constraint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Violation {
    /// Where, like `filters[0].limit`; empty for the value as a whole.
    pub(crate) path: String,
    /// What is wrong.
    pub(crate) message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "at `{}`: {}", self.path, self.message)
        }
    }
}

/// Every constraint `value` breaks, as `"at `path`: ..."` messages (`"at
/// the output: ..."` for the value as a whole), for output validation.
pub(crate) fn violations(schema: &Value, value: &Value) -> Vec<String> {
    check(schema, value)
        .into_iter()
        .map(|v| if v.path.is_empty() { format!("at the output: {}", v.message) } else { v.to_string() })
        .collect()
}

/// Every constraint `value` breaks, for a value that deserialised (so its
/// types, required fields and closed objects are right already).
pub(crate) fn check(schema: &Value, value: &Value) -> Vec<Violation> {
    Walker::new(schema, Mode::Constraints).run(value)
}

/// Whether a value that deserialised against `schema` can still break one
/// of its constraints ([`check`] can find anything): a keyword [`check`]
/// enforces, or a `false` schema, anywhere the walk can reach. A `$ref` (a
/// nested type's definition) counts, so that nothing behind it is missed.
/// Conservative: a property *named* `minimum` counts too. For a schema of
/// plain fields this is `false`, and a derived tool skips the walk.
pub(crate) fn can_fail(schema: &Value) -> bool {
    let object = match schema {
        Value::Bool(allowed) => return !allowed,
        Value::Object(object) => object,
        _ => return false,
    };
    let node = Node::new(object);
    let nested = |value: &Value| match value {
        Value::Array(schemas) => schemas.iter().any(can_fail),
        schema => can_fail(schema),
    };
    let any_value = |map: Option<&Value>| map.and_then(Value::as_object).is_some_and(|map| map.values().any(can_fail));
    ENFORCED.iter().any(|&keyword| node.get(keyword).is_some())
        || NESTED.iter().filter_map(|&keyword| node.get(keyword)).any(nested)
        || any_value(node.get(PROPERTIES))
        // A closed object is deserialisation's to check; an open one's
        // extra fields are walked with its schema.
        || node.get(ADDITIONAL_PROPERTIES).is_some_and(|extra| extra.is_object() && can_fail(extra))
        || any_value(object.get("$defs"))
        || any_value(object.get("definitions"))
}

/// Every way `value` breaks `schema`, types and structure included, for
/// values nothing deserialises (an MCP tool's arguments).
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
pub(crate) fn validate(schema: &Value, value: &Value) -> Vec<Violation> {
    Walker::new(schema, Mode::Whole).run(value)
}

/// What a walk checks.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// What deserialisation leaves: values, not shapes. Of alternatives,
    /// the one the value is an instance of (when exactly one fits its
    /// shape) is checked.
    Constraints,
    /// The whole schema.
    Whole,
}

/// A keyword the walker reads, by its place in [`KEYWORDS`].
#[derive(Clone, Copy)]
struct Keyword(usize);

/// Every keyword the walker reads.
const KEYWORDS: [&str; 27] = [
    "$ref",
    "type",
    "enum",
    "const",
    "pattern",
    "required",
    "properties",
    "additionalProperties",
    "uniqueItems",
    "prefixItems",
    "items",
    "additionalItems",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
];
/// The keywords whose check can fail on a value that deserialised (and
/// `$ref`, whose target may hold one): what [`can_fail`] looks for.
const ENFORCED: [Keyword; 16] = [
    REF,
    ENUM,
    CONST,
    PATTERN,
    UNIQUE_ITEMS,
    MINIMUM,
    MAXIMUM,
    EXCLUSIVE_MINIMUM,
    EXCLUSIVE_MAXIMUM,
    MULTIPLE_OF,
    MIN_LENGTH,
    MAX_LENGTH,
    MIN_ITEMS,
    MAX_ITEMS,
    MIN_PROPERTIES,
    MAX_PROPERTIES,
];
/// The keywords holding a subschema, or a list of them, that the
/// constraints walk enters.
const NESTED: [Keyword; 6] = [ITEMS, PREFIX_ITEMS, ADDITIONAL_ITEMS, ALL_OF, ANY_OF, ONE_OF];
const REF: Keyword = Keyword(0);
const TYPE: Keyword = Keyword(1);
const ENUM: Keyword = Keyword(2);
const CONST: Keyword = Keyword(3);
const PATTERN: Keyword = Keyword(4);
const REQUIRED: Keyword = Keyword(5);
const PROPERTIES: Keyword = Keyword(6);
const ADDITIONAL_PROPERTIES: Keyword = Keyword(7);
const UNIQUE_ITEMS: Keyword = Keyword(8);
const PREFIX_ITEMS: Keyword = Keyword(9);
const ITEMS: Keyword = Keyword(10);
const ADDITIONAL_ITEMS: Keyword = Keyword(11);
const ALL_OF: Keyword = Keyword(12);
const ANY_OF: Keyword = Keyword(13);
const ONE_OF: Keyword = Keyword(14);
const NOT: Keyword = Keyword(15);
const MINIMUM: Keyword = Keyword(16);
const MAXIMUM: Keyword = Keyword(17);
const EXCLUSIVE_MINIMUM: Keyword = Keyword(18);
const EXCLUSIVE_MAXIMUM: Keyword = Keyword(19);
const MULTIPLE_OF: Keyword = Keyword(20);
const MIN_LENGTH: Keyword = Keyword(21);
const MAX_LENGTH: Keyword = Keyword(22);
const MIN_ITEMS: Keyword = Keyword(23);
const MAX_ITEMS: Keyword = Keyword(24);
const MIN_PROPERTIES: Keyword = Keyword(25);
const MAX_PROPERTIES: Keyword = Keyword(26);

/// A schema object, and which of [`KEYWORDS`] it has: one pass over its
/// keys, then a keyword it lacks costs no lookup. A tool's schema has a few
/// keys per object; the walker asks each for a dozen keywords or more.
#[derive(Clone, Copy)]
struct Node<'a> {
    map: &'a Map<String, Value>,
    /// Bit `i` set: the object has `KEYWORDS[i]`.
    present: u32,
}

impl<'a> Node<'a> {
    fn new(map: &'a Map<String, Value>) -> Self {
        let present = map
            .keys()
            .filter_map(|key| KEYWORDS.iter().position(|keyword| keyword == key))
            .fold(0, |present, index| present | 1 << index);
        Self { map, present }
    }

    fn get(self, keyword: Keyword) -> Option<&'a Value> {
        if self.present & 1 << keyword.0 == 0 {
            return None;
        }
        self.map.get(KEYWORDS[keyword.0])
    }
}

struct Walker<'a> {
    root: &'a Value,
    mode: Mode,
    errors: Vec<Violation>,
    path: String,
}

impl<'a> Walker<'a> {
    fn new(root: &'a Value, mode: Mode) -> Self {
        Self { root, mode, errors: Vec::new(), path: String::new() }
    }

    fn run(mut self, value: &Value) -> Vec<Violation> {
        self.walk(self.root, value, 0);
        self.errors
    }

    fn fail(&mut self, message: String) {
        self.errors.push(Violation { path: self.path.clone(), message });
    }

    fn walk(&mut self, schema: &'a Value, value: &Value, depth: usize) {
        let schema = match schema {
            Value::Bool(false) => return self.fail("no value is allowed here".to_owned()),
            Value::Object(object) => Node::new(object),
            _ => return,
        };
        if depth > MAX_DEPTH {
            return;
        }
        if let Some(target) = schema.get(REF).and_then(Value::as_str)
            && let Some(resolved) = resolve(self.root, target)
        {
            self.walk(resolved, value, depth + 1);
        }
        if self.mode == Mode::Whole
            && let Some(expected) = schema.get(TYPE)
            && !type_matches(expected, value)
        {
            return self.fail(format!("expected {}, got {}", describe_type(expected), kind_phrase(value)));
        }
        if let Some(allowed) = schema.get(ENUM).and_then(Value::as_array)
            && !allowed.iter().any(|a| json_equal(a, value))
        {
            self.fail(format!("{value} is not one of {}", Value::Array(allowed.clone())));
        }
        if let Some(expected) = schema.get(CONST)
            && !json_equal(expected, value)
        {
            self.fail(format!("must be {expected}"));
        }
        match value {
            Value::Number(number) => {
                if let Some(n) = number.as_f64() {
                    self.numeric(schema, n);
                }
            }
            Value::String(text) => {
                let length = text.chars().count() as u64;
                self.bound(schema, MIN_LENGTH, MAX_LENGTH, length, "characters");
                if let Some(pattern) = schema.get(PATTERN).and_then(Value::as_str)
                    && matches_pattern(pattern, text) == Some(false)
                {
                    self.fail(format!("{value} does not match the pattern `{pattern}`"));
                }
            }
            Value::Array(items) => self.array(schema, items, depth),
            Value::Object(fields) => self.object(schema, fields, depth),
            Value::Null | Value::Bool(_) => {}
        }
        self.combinators(schema, value, depth);
    }

    fn object(&mut self, schema: Node<'a>, fields: &Map<String, Value>, depth: usize) {
        let whole = self.mode == Mode::Whole;
        if whole && let Some(required) = schema.get(REQUIRED).and_then(Value::as_array) {
            for name in required.iter().filter_map(Value::as_str) {
                if !fields.contains_key(name) {
                    self.at(name, |walker| walker.fail("missing required field".to_owned()));
                }
            }
        }
        let properties = schema.get(PROPERTIES).and_then(Value::as_object);
        let additional = schema.get(ADDITIONAL_PROPERTIES).filter(|_| whole);
        for (name, field) in fields {
            match properties.and_then(|p| p.get(name)) {
                Some(property) => self.at(name, |walker| walker.walk(property, field, depth + 1)),
                None => match additional {
                    Some(Value::Bool(false)) => {
                        let known: Vec<&str> =
                            properties.map(|p| p.keys().map(String::as_str).collect()).unwrap_or_default();
                        let message = if known.is_empty() {
                            "unknown field; this tool takes no fields".to_owned()
                        } else {
                            format!("unknown field; the fields are: {}", known.join(", "))
                        };
                        self.at(name, |walker| walker.fail(message));
                    }
                    Some(extra @ Value::Object(_)) => self.at(name, |walker| walker.walk(extra, field, depth + 1)),
                    _ => {}
                },
            }
        }
        self.bound(schema, MIN_PROPERTIES, MAX_PROPERTIES, fields.len() as u64, "properties");
    }

    fn array(&mut self, schema: Node<'a>, items: &[Value], depth: usize) {
        self.bound(schema, MIN_ITEMS, MAX_ITEMS, items.len() as u64, "items");
        if schema.get(UNIQUE_ITEMS) == Some(&Value::Bool(true))
            && items.iter().enumerate().any(|(i, item)| items[..i].iter().any(|earlier| json_equal(earlier, item)))
        {
            self.fail("items must be unique".to_owned());
        }
        // `prefixItems` (2020-12) or an array `items` (older drafts) fix the
        // first positions; `items` (or `additionalItems`) covers the rest.
        let (prefix, rest) = match (schema.get(PREFIX_ITEMS), schema.get(ITEMS)) {
            (Some(Value::Array(prefix)), rest) => (prefix.as_slice(), rest),
            (None, Some(Value::Array(prefix))) => (prefix.as_slice(), schema.get(ADDITIONAL_ITEMS)),
            (_, rest) => (&[][..], rest),
        };
        for (index, item) in items.iter().enumerate() {
            if let Some(item_schema) = prefix.get(index).or(rest) {
                let len = self.path.len();
                let _ = write!(self.path, "[{index}]");
                self.walk(item_schema, item, depth + 1);
                self.path.truncate(len);
            }
        }
    }

    fn combinators(&mut self, schema: Node<'a>, value: &Value, depth: usize) {
        if let Some(all) = schema.get(ALL_OF).and_then(Value::as_array) {
            for part in all {
                self.walk(part, value, depth + 1);
            }
        }
        for (keyword, exactly_one) in [(ANY_OF, false), (ONE_OF, true)] {
            let Some(alternatives) = schema.get(keyword).and_then(Value::as_array) else { continue };
            match self.mode {
                // `Option<T>` and enums put constraints one level down.
                Mode::Constraints => {
                    let fitting: Vec<&Value> =
                        alternatives.iter().filter(|alt| fits_shape(self.root, alt, value)).collect();
                    if let [only] = fitting[..] {
                        self.walk(only, value, depth + 1);
                    }
                }
                Mode::Whole => self.alternatives(alternatives, exactly_one, value, depth),
            }
        }
        if self.mode == Mode::Whole
            && let Some(not) = schema.get(NOT)
            && self.sub_walk(not, value, depth).is_empty()
        {
            self.fail(format!("{value} is not allowed here"));
        }
    }

    /// `anyOf` (or, `exactly_one`, `oneOf`) over the whole schema.
    fn alternatives(&mut self, alternatives: &'a [Value], exactly_one: bool, value: &Value, depth: usize) {
        let outcomes: Vec<Vec<Violation>> =
            alternatives.iter().map(|alternative| self.sub_walk(alternative, value, depth)).collect();
        let matching = outcomes.iter().filter(|errors| errors.is_empty()).count();
        if matching == 0 {
            // When only one alternative is meant for this kind of value,
            // its own errors say best what is wrong.
            let fitting: Vec<usize> =
                (0..alternatives.len()).filter(|&i| fits_type(self.root, &alternatives[i], value)).collect();
            match fitting[..] {
                [only] => self.errors.extend(outcomes.into_iter().nth(only).unwrap_or_default()),
                _ => self.fail(format!("{value} matches none of the allowed alternatives")),
            }
        } else if exactly_one && matching > 1 {
            self.fail(format!("{value} matches more than one of the alternatives, but must match exactly one"));
        }
    }

    /// The violations of `schema` alone, without recording them.
    fn sub_walk(&self, schema: &'a Value, value: &Value, depth: usize) -> Vec<Violation> {
        let mut walker = Walker { root: self.root, mode: self.mode, errors: Vec::new(), path: self.path.clone() };
        walker.walk(schema, value, depth + 1);
        walker.errors
    }

    fn at(&mut self, field: &str, then: impl FnOnce(&mut Self)) {
        let len = self.path.len();
        if !self.path.is_empty() {
            self.path.push('.');
        }
        self.path.push_str(field);
        then(self);
        self.path.truncate(len);
    }

    fn numeric(&mut self, schema: Node<'_>, n: f64) {
        let limit = |keyword: Keyword| schema.get(keyword).and_then(Value::as_f64);
        if let Some(min) = limit(MINIMUM).filter(|min| n < *min) {
            self.fail(format!("{n} is less than the minimum {min}"));
        }
        if let Some(max) = limit(MAXIMUM).filter(|max| n > *max) {
            self.fail(format!("{n} is greater than the maximum {max}"));
        }
        if let Some(min) = limit(EXCLUSIVE_MINIMUM).filter(|min| n <= *min) {
            self.fail(format!("{n} must be greater than {min}"));
        }
        if let Some(max) = limit(EXCLUSIVE_MAXIMUM).filter(|max| n >= *max) {
            self.fail(format!("{n} must be less than {max}"));
        }
        if let Some(step) = limit(MULTIPLE_OF).filter(|step| *step > 0.0 && !is_multiple(n, *step)) {
            self.fail(format!("{n} is not a multiple of {step}"));
        }
    }

    fn bound(&mut self, schema: Node<'_>, min_key: Keyword, max_key: Keyword, size: u64, unit: &str) {
        if let Some(min) = schema.get(min_key).and_then(Value::as_u64).filter(|min| size < *min) {
            self.fail(format!("has {size} {unit}, at least {min} required"));
        }
        if let Some(max) = schema.get(max_key).and_then(Value::as_u64).filter(|max| size > *max) {
            self.fail(format!("has {size} {unit}, at most {max} allowed"));
        }
    }
}

/// Whether `n` is a whole number of `step`s, within the rounding error of
/// decimal fractions in binary (`0.3 / 0.1` is `2.9999999999999996`).
fn is_multiple(n: f64, step: f64) -> bool {
    let quotient = n / step;
    (quotient - quotient.round()).abs() <= 1e-9 * quotient.abs().max(1.0)
}

/// Whether `text` matches `pattern` (anywhere, as JSON schema says); `None`
/// when the pattern is not one the `regex` crate compiles. Patterns are
/// compiled once per process.
fn matches_pattern(pattern: &str, text: &str) -> Option<bool> {
    static COMPILED: OnceLock<Mutex<HashMap<String, Option<Regex>>>> = OnceLock::new();
    let mut compiled = COMPILED.get_or_init(Mutex::default).lock().unwrap_or_else(PoisonError::into_inner);
    let regex = compiled.entry(pattern.to_owned()).or_insert_with(|| Regex::new(pattern).ok());
    regex.as_ref().map(|regex| regex.is_match(text))
}

/// JSON equality where `1` and `1.0` are the same number, as JSON schema says.
#[allow(clippy::float_cmp)] // exact equality is what JSON schema asks for
fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64().zip(y.as_f64()).is_some_and(|(x, y)| x == y),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_equal(x, y)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(key, x)| y.get(key).is_some_and(|y| json_equal(x, y)))
        }
        _ => a == b,
    }
}

fn type_matches(expected: &Value, value: &Value) -> bool {
    match expected {
        Value::String(name) => is_of_type(name, value),
        Value::Array(names) => names.iter().filter_map(Value::as_str).any(|name| is_of_type(name, value)),
        _ => true,
    }
}

fn is_of_type(name: &str, value: &Value) -> bool {
    match (name, value) {
        ("null", Value::Null)
        | ("boolean", Value::Bool(_))
        | ("number", Value::Number(_))
        | ("string", Value::String(_))
        | ("array", Value::Array(_))
        | ("object", Value::Object(_)) => true,
        ("integer", Value::Number(n)) => n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0),
        _ => false,
    }
}

fn describe_type(expected: &Value) -> String {
    match expected {
        Value::String(name) => article(name).to_owned(),
        Value::Array(names) => names.iter().filter_map(Value::as_str).map(article).collect::<Vec<_>>().join(" or "),
        other => other.to_string(),
    }
}

fn article(name: &str) -> &str {
    match name {
        "null" => "null",
        "boolean" => "a boolean",
        "number" => "a number",
        "integer" => "an integer",
        "string" => "a string",
        "array" => "an array",
        "object" => "an object",
        other => other,
    }
}

fn kind_phrase(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) if s.chars().count() <= 40 => format!("the string {value}", value = Value::from(s.as_str())),
        Value::String(_) => "a string".to_owned(),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}

/// `schema`, or what its local `$ref` points to.
fn dereferenced<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(target) => resolve(root, target).unwrap_or(schema),
        None => schema,
    }
}

/// Whether `schema` is meant for values of `value`'s JSON type.
fn fits_type(root: &Value, schema: &Value, value: &Value) -> bool {
    let schema = dereferenced(root, schema);
    match schema.get("type") {
        Some(expected) => type_matches(expected, value),
        None => schema.get("const").is_none_or(|c| json_equal(c, value)),
    }
}

/// Whether `schema` is meant for values of `value`'s shape: its JSON type,
/// and for objects the tag or keys that tell an enum's variants apart.
fn fits_shape(root: &Value, schema: &Value, value: &Value) -> bool {
    let schema = dereferenced(root, schema);
    let type_fits = fits_type(root, schema, value);
    let Value::Object(fields) = value else { return type_fits };
    type_fits && object_fits(schema, fields)
}

/// Whether an object has what `schema` requires of its keys: every
/// required key, a tag property's one value, and no key a closed schema
/// does not list.
fn object_fits(schema: &Value, fields: &Map<String, Value>) -> bool {
    let required = schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str);
    if required.into_iter().any(|key| !fields.contains_key(key)) {
        return false;
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    if schema.get("additionalProperties") == Some(&Value::Bool(false))
        && fields.keys().any(|key| !properties.is_some_and(|p| p.contains_key(key)))
    {
        return false;
    }
    properties.into_iter().flatten().all(|(key, property)| {
        let single = match (property.get("const"), property.get("enum").and_then(Value::as_array)) {
            (Some(constant), _) => Some(constant),
            (None, Some(values)) if values.len() == 1 => values.first(),
            _ => None,
        };
        match (single, fields.get(key)) {
            (Some(expected), Some(actual)) => expected == actual,
            _ => true,
        }
    })
}

/// A local reference (`#/$defs/Name`); remote ones are not followed.
fn resolve<'a>(root: &'a Value, target: &str) -> Option<&'a Value> {
    let pointer = target.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(root);
    }
    root.pointer(pointer)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{can_fail, check, is_multiple, validate, violations};

    #[test]
    fn only_a_schema_with_something_to_check_can_fail() {
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Plain {
            /// A doc comment is a description, not a constraint.
            key: String,
            count: Option<i64>,
            tags: Vec<String>,
            flag: bool,
        }
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Ranged {
            #[schemars(range(max = 10))]
            limit: i64,
        }
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        #[allow(dead_code)]
        enum Color {
            Red,
            Blue,
        }
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Nested {
            color: Color,
        }
        let schema_of = |schema: serde_json::Value| can_fail(&schema);
        assert!(!schema_of(crate::tool::schema::input_schema_for::<Plain>()));
        assert!(schema_of(crate::tool::schema::input_schema_for::<Ranged>()));
        assert!(schema_of(crate::tool::schema::input_schema_for::<Nested>()), "a $ref, an enum");
        // Every keyword the walk enforces, at any depth it reaches.
        for keyword in [
            json!({"enum": [1]}),
            json!({"const": 1}),
            json!({"pattern": "a"}),
            json!({"uniqueItems": true}),
            json!({"minimum": 1}),
            json!({"maximum": 1}),
            json!({"exclusiveMinimum": 1}),
            json!({"exclusiveMaximum": 1}),
            json!({"multipleOf": 2}),
            json!({"minLength": 1}),
            json!({"maxLength": 1}),
            json!({"minItems": 1}),
            json!({"maxItems": 1}),
            json!({"minProperties": 1}),
            json!({"maxProperties": 1}),
            json!({"$ref": "#/$defs/x"}),
            json!(false),
        ] {
            let deep = json!({"type": "object", "properties": {"a": {"type": "array", "items": {"anyOf": [
                {"type": "null"}, {"allOf": [{"additionalProperties": {"oneOf": [{"prefixItems": [keyword]}]}}]}
            ]}}}});
            assert!(can_fail(&deep), "{deep}");
            let defined = json!({"type": "object", "$defs": {"x": keyword}});
            assert!(can_fail(&defined), "{defined}");
        }
        // What deserialisation checks alone: types, required fields, a closed object.
        let closed = json!({"type": "object", "properties": {"a": {"type": ["string", "null"], "title": "A",
            "default": null, "format": "email"}}, "required": ["a"], "additionalProperties": false});
        assert!(!can_fail(&closed));
        // And what cannot fail does not: the walk finds nothing in any value.
        assert!(check(&closed, &json!({"a": "not an email"})).is_empty());
    }

    #[test]
    fn reports_every_broken_constraint_with_its_path() {
        let schema = json!({
            "type": "object",
            "properties": {
                "title": {"type": "string", "minLength": 3},
                "score": {"type": "integer", "minimum": 1, "maximum": 10},
                "tags": {"type": "array", "maxItems": 1, "items": {"type": "string", "enum": ["a", "b"]}},
                "note": {"anyOf": [{"type": "string", "maxLength": 2}, {"type": "null"}]},
                "inner": {"$ref": "#/$defs/Inner"}
            },
            "$defs": {"Inner": {"type": "object", "properties": {"ratio": {"type": "number", "exclusiveMaximum": 1.0}}}}
        });
        let value = json!({"title": "ab", "score": 11, "tags": ["a", "c"], "note": "long", "inner": {"ratio": 1.0}});
        let errors = violations(&schema, &value);
        assert_eq!(
            errors,
            [
                "at `title`: has 2 characters, at least 3 required",
                "at `score`: 11 is greater than the maximum 10",
                "at `tags`: has 2 items, at most 1 allowed",
                "at `tags[1]`: \"c\" is not one of [\"a\",\"b\"]",
                "at `note`: has 4 characters, at most 2 allowed",
                "at `inner.ratio`: 1 must be less than 1",
            ]
        );
        assert!(violations(&schema, &json!({"title": "abc", "score": 5, "note": null})).is_empty());
        assert_eq!(violations(&json!({"maximum": 1}), &json!(2)), ["at the output: 2 is greater than the maximum 1"]);
    }

    #[test]
    fn decimal_multiples_are_multiples() {
        for (n, step) in [(0.3, 0.1), (0.7, 0.1), (1.1, 0.1), (2.5, 0.5), (1e6, 0.01), (-0.3, 0.1), (0.0, 0.1)] {
            assert!(is_multiple(n, step), "{n} / {step}");
        }
        for (n, step) in [(0.35, 0.1), (1.0, 0.3), (7.0, 2.0)] {
            assert!(!is_multiple(n, step), "{n} / {step}");
        }
        let schema = json!({"type": "number", "multipleOf": 0.1});
        assert!(check(&schema, &json!(0.3)).is_empty());
        assert_eq!(check(&schema, &json!(0.35))[0].message, "0.35 is not a multiple of 0.1");
    }

    #[test]
    fn constraints_inside_tagged_enum_variants_are_checked() {
        // The shapes schemars gives internally, externally and adjacently tagged enums.
        let internally = json!({"oneOf": [
            {"type": "object", "properties": {"kind": {"type": "string", "const": "circle"},
                "radius": {"type": "number", "minimum": 0}}, "required": ["kind", "radius"]},
            {"type": "object", "properties": {"kind": {"type": "string", "const": "square"},
                "side": {"type": "number", "maximum": 10}}, "required": ["kind", "side"]}
        ]});
        assert_eq!(check(&internally, &json!({"kind": "circle", "radius": -1}))[0].path, "radius");
        assert_eq!(check(&internally, &json!({"kind": "square", "side": 11}))[0].path, "side");
        assert!(check(&internally, &json!({"kind": "square", "side": 3})).is_empty());

        let externally = json!({"oneOf": [
            {"type": "string", "enum": ["none"]},
            {"type": "object", "properties": {"circle": {"type": "object",
                "properties": {"radius": {"type": "number", "minimum": 0}}}},
                "required": ["circle"], "additionalProperties": false},
            {"type": "object", "properties": {"square": {"type": "object",
                "properties": {"side": {"type": "number", "maximum": 10}}}},
                "required": ["square"], "additionalProperties": false}
        ]});
        assert_eq!(check(&externally, &json!({"square": {"side": 12}}))[0].path, "square.side");
        assert!(check(&externally, &json!("none")).is_empty());

        let adjacently = json!({"oneOf": [
            {"type": "object", "properties": {"t": {"type": "string", "enum": ["count"]},
                "c": {"type": "integer", "minimum": 1}}, "required": ["t", "c"]},
            {"type": "object", "properties": {"t": {"type": "string", "enum": ["name"]},
                "c": {"type": "string", "minLength": 2}}, "required": ["t", "c"]}
        ]});
        assert_eq!(check(&adjacently, &json!({"t": "count", "c": 0}))[0].path, "c");
        assert_eq!(check(&adjacently, &json!({"t": "name", "c": "x"}))[0].path, "c");
    }

    #[test]
    fn patterns_are_checked_when_the_regex_crate_compiles_them() {
        let schema = json!({"type": "string", "pattern": "^[A-Z]{3}$"});
        assert!(check(&schema, &json!("EUR")).is_empty());
        assert_eq!(check(&schema, &json!("euro"))[0].message, "\"euro\" does not match the pattern `^[A-Z]{3}$`");
        // Unanchored patterns match anywhere, as JSON schema says.
        assert!(check(&json!({"pattern": "[0-9]"}), &json!("a1b")).is_empty());
        // Look-around is not supported by the regex crate: not checked.
        assert!(check(&json!({"pattern": "^(?=a)"}), &json!("b")).is_empty());
    }

    /// Schemas over the keywords the walker knows, as tool schemas use them.
    fn oracle_schemas() -> Vec<serde_json::Value> {
        vec![
            json!({"type": "integer", "minimum": 1, "maximum": 10}),
            json!({"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1.5, "multipleOf": 0.5}),
            json!({"type": "integer", "multipleOf": 3}),
            json!({"type": "string", "minLength": 2, "maxLength": 4}),
            json!({"type": "string", "pattern": "^[a-c]+$"}),
            json!({"enum": ["a", 1, null, [1, 2]]}),
            json!({"const": {"k": 1}}),
            json!({"type": ["string", "null"], "maxLength": 1}),
            json!({"type": "array", "items": {"type": "integer", "minimum": 0}, "minItems": 1, "maxItems": 3}),
            json!({"type": "array", "uniqueItems": true}),
            json!({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": false}),
            json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer", "maximum": 5}},
                "required": ["a"], "additionalProperties": false}),
            json!({"type": "object", "additionalProperties": {"type": "integer"}, "minProperties": 1,
                "maxProperties": 2}),
            json!({"anyOf": [{"type": "string", "maxLength": 2}, {"type": "null"}]}),
            json!({"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 2}]}),
            json!({"allOf": [{"type": "integer", "minimum": 0}, {"maximum": 5}]}),
            json!({"not": {"type": "string"}}),
            json!({"$ref": "#/$defs/Small", "$defs": {"Small": {"type": "integer", "maximum": 2}}}),
            json!({"type": "object", "properties": {"shape": {"oneOf": [
                {"type": "object", "properties": {"kind": {"const": "circle"}, "radius": {"type": "number",
                    "minimum": 0}}, "required": ["kind", "radius"]},
                {"type": "object", "properties": {"kind": {"const": "square"}, "side": {"type": "number",
                    "maximum": 10}}, "required": ["kind", "side"]}
            ]}}}),
            json!(false),
            json!(true),
        ]
    }

    fn oracle_instances() -> Vec<serde_json::Value> {
        vec![
            json!(null),
            json!(true),
            json!(0),
            json!(1),
            json!(1.0),
            json!(2),
            json!(3),
            json!(1.5),
            json!(0.5),
            json!(11),
            json!(-1),
            json!(""),
            json!("a"),
            json!("ab"),
            json!("abcd"),
            json!("abcde"),
            json!("xyz"),
            json!([]),
            json!([1, 2]),
            json!([1, 1.0]),
            json!(["a", 1]),
            json!(["a", "b"]),
            json!(["a", 1, 2]),
            json!([0, 1, 2, 3]),
            json!([-1]),
            json!({}),
            json!({"k": 1}),
            json!({"a": "x"}),
            json!({"a": "x", "b": 6}),
            json!({"a": "x", "c": 1}),
            json!({"b": 1}),
            json!({"x": 1, "y": 2, "z": 3}),
            json!({"x": "1"}),
            json!({"shape": {"kind": "circle", "radius": -1}}),
            json!({"shape": {"kind": "square", "side": 3}}),
            json!({"shape": {"kind": "square"}}),
        ]
    }

    /// The oracle's verdict: the `jsonschema` crate, draft 2020-12.
    fn oracle_accepts(schema: &serde_json::Value, instance: &serde_json::Value) -> bool {
        jsonschema::draft202012::new(schema).expect("a valid schema").is_valid(instance)
    }

    /// Over the whole schema the walker agrees with the oracle; checking
    /// constraints alone, it never rejects what the oracle accepts.
    #[test]
    fn the_walker_agrees_with_the_jsonschema_crate() {
        for schema in oracle_schemas() {
            for instance in oracle_instances() {
                let accepted = oracle_accepts(&schema, &instance);
                let whole = validate(&schema, &instance);
                assert_eq!(whole.is_empty(), accepted, "schema {schema}, instance {instance}: {whole:?}");
                if accepted {
                    assert!(check(&schema, &instance).is_empty(), "schema {schema}, instance {instance}");
                }
            }
        }
    }

    fn any_value() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(json!(null)),
            any::<bool>().prop_map(|b| json!(b)),
            (-4i64..14).prop_map(|n| json!(n)),
            (-8i32..24).prop_map(|n| json!(f64::from(n) / 4.0)),
            "[a-d]{0,5}".prop_map(|s| json!(s)),
        ];
        leaf.prop_recursive(3, 12, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::Array),
                proptest::collection::btree_map("[a-c]|kind|radius|side|shape", inner, 0..4)
                    .prop_map(|map| serde_json::Value::Object(map.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        #[test]
        fn random_instances_get_the_oracles_verdict(instance in any_value()) {
            for schema in oracle_schemas() {
                let accepted = oracle_accepts(&schema, &instance);
                let whole = validate(&schema, &instance);
                proptest::prop_assert_eq!(whole.is_empty(), accepted, "schema {}, instance {}: {:?}", schema, instance, whole);
                if accepted {
                    proptest::prop_assert!(check(&schema, &instance).is_empty(), "schema {}, instance {}", schema, instance);
                }
            }
        }
    }
}
