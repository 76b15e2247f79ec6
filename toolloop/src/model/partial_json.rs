//! Parsing the start of a JSON document, for showing a tool call's
//! arguments while the model is still writing them.

use serde_json::{Map, Value};

/// Parses `prefix`, the start of a JSON document, as far as it goes: open
/// strings, arrays and objects are closed; a key without its value, a
/// half-written `true`/`false`/`null` and an unfinished escape are left out;
/// a number is cut to its longest valid start (`1.` is `1`).
///
/// `None` when nothing is there yet (empty input, `"tr"`). On a complete
/// document the result is what [`serde_json::from_str`] gives; on text that
/// stops being JSON, the value up to that point. Runs in time linear in the
/// input's length.
///
/// ```
/// use serde_json::json;
/// use toolloop::model::parse_partial_json;
///
/// assert_eq!(parse_partial_json(r#"{"city": "Par"#), Some(json!({"city": "Par"})));
/// assert_eq!(parse_partial_json(r#"{"days": [1, 2, tr"#), Some(json!({"days": [1, 2]})));
/// assert_eq!(parse_partial_json(r#"{"units"#), Some(json!({})));
/// assert_eq!(parse_partial_json(""), None);
/// ```
pub fn parse_partial_json(prefix: &str) -> Option<Value> {
    Parser { text: prefix, at: 0, stack: Vec::new() }.run()
}

/// A container being filled.
enum Frame {
    Array(Vec<Value>),
    /// An object and the key whose value comes next.
    Object(Map<String, Value>, Option<String>),
}

/// What may come next.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Expect {
    Value,
    /// A value or `]`, right after `[`.
    ValueOrClose,
    /// A key or `}`, right after `{`.
    KeyOrClose,
    Key,
    Colon,
    CommaOrClose,
}

/// A string or number token.
enum Token {
    Complete(Value),
    /// Cut off by the end of the input; `None` when nothing of it is usable.
    Partial(Option<Value>),
    /// Not JSON: parsing stops before it.
    Invalid,
}

struct Parser<'a> {
    text: &'a str,
    at: usize,
    stack: Vec<Frame>,
}

impl Parser<'_> {
    fn run(mut self) -> Option<Value> {
        let mut expect = Expect::Value;
        // A value cut off by the end of the input, to attach when closing up.
        let mut partial = None;
        loop {
            self.skip_whitespace();
            let Some(&byte) = self.text.as_bytes().get(self.at) else { break };
            match expect {
                Expect::Value | Expect::ValueOrClose => {
                    if expect == Expect::ValueOrClose && byte == b']' {
                        self.at += 1;
                        let Some(Frame::Array(items)) = self.stack.pop() else { unreachable!("inside an array") };
                        match self.attach(Value::Array(items)) {
                            Some(done) => return Some(done),
                            None => expect = Expect::CommaOrClose,
                        }
                        continue;
                    }
                    let value = match byte {
                        b'{' => {
                            self.at += 1;
                            self.stack.push(Frame::Object(Map::new(), None));
                            expect = Expect::KeyOrClose;
                            continue;
                        }
                        b'[' => {
                            self.at += 1;
                            self.stack.push(Frame::Array(Vec::new()));
                            expect = Expect::ValueOrClose;
                            continue;
                        }
                        b'"' => self.string(),
                        b'-' | b'0'..=b'9' => self.number(),
                        b't' | b'f' | b'n' => self.literal(),
                        _ => Token::Invalid,
                    };
                    match value {
                        Token::Complete(value) => match self.attach(value) {
                            Some(done) => return Some(done),
                            None => expect = Expect::CommaOrClose,
                        },
                        Token::Partial(value) => {
                            partial = value;
                            break;
                        }
                        Token::Invalid => break,
                    }
                }
                Expect::KeyOrClose | Expect::Key => {
                    if expect == Expect::KeyOrClose && byte == b'}' {
                        self.at += 1;
                        let Some(Frame::Object(map, _)) = self.stack.pop() else { unreachable!("inside an object") };
                        match self.attach(Value::Object(map)) {
                            Some(done) => return Some(done),
                            None => expect = Expect::CommaOrClose,
                        }
                        continue;
                    }
                    if byte != b'"' {
                        break;
                    }
                    // A key cut off by the end of the input is dropped.
                    let Token::Complete(Value::String(key)) = self.string() else { break };
                    if let Some(Frame::Object(_, pending)) = self.stack.last_mut() {
                        *pending = Some(key);
                    }
                    expect = Expect::Colon;
                }
                Expect::Colon => {
                    if byte != b':' {
                        break;
                    }
                    self.at += 1;
                    expect = Expect::Value;
                }
                Expect::CommaOrClose => {
                    let closed = match (self.stack.last(), byte) {
                        (Some(Frame::Array(_)), b',') => {
                            expect = Expect::Value;
                            None
                        }
                        (Some(Frame::Object(..)), b',') => {
                            expect = Expect::Key;
                            None
                        }
                        (Some(Frame::Array(_)), b']') | (Some(Frame::Object(..)), b'}') => self.stack.pop(),
                        _ => break,
                    };
                    self.at += 1;
                    if let Some(frame) = closed
                        && let Some(done) = self.attach(frame.into_value())
                    {
                        return Some(done);
                    }
                }
            }
        }
        self.close_up(partial)
    }

    /// Adds a finished value to the open container, or returns it when it is
    /// the whole document.
    fn attach(&mut self, value: Value) -> Option<Value> {
        match self.stack.last_mut() {
            None => Some(value),
            Some(Frame::Array(items)) => {
                items.push(value);
                None
            }
            Some(Frame::Object(map, key)) => {
                if let Some(key) = key.take() {
                    map.insert(key, value);
                }
                None
            }
        }
    }

    /// Closes every open container at the end of the input, attaching the
    /// cut-off value (when there is one) where it began.
    fn close_up(mut self, partial: Option<Value>) -> Option<Value> {
        let mut value = partial;
        while let Some(mut frame) = self.stack.pop() {
            if let Some(value) = value.take() {
                match &mut frame {
                    Frame::Array(items) => items.push(value),
                    Frame::Object(map, key) => {
                        if let Some(key) = key.take() {
                            map.insert(key, value);
                        }
                    }
                }
            }
            value = Some(frame.into_value());
        }
        value
    }

    fn skip_whitespace(&mut self) {
        let bytes = self.text.as_bytes();
        while matches!(bytes.get(self.at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// The string starting at the current `"`. A complete one is decoded by
    /// `serde_json`, so escapes come out exactly as in a full parse.
    fn string(&mut self) -> Token {
        let bytes = self.text.as_bytes();
        let start = self.at;
        let mut i = start + 1;
        let mut last_escape = None;
        // Without escapes and control characters the text is the value:
        // taken as it is, without `serde_json` going over it again.
        let mut plain = true;
        while let Some(found) = special_byte(bytes, i) {
            match bytes[found] {
                b'"' => {
                    self.at = found + 1;
                    if plain {
                        return Token::Complete(Value::String(self.text[start + 1..found].to_owned()));
                    }
                    return match serde_json::from_str(&self.text[start..=found]) {
                        Ok(text) => Token::Complete(Value::String(text)),
                        Err(_) => Token::Invalid,
                    };
                }
                b'\\' => {
                    plain = false;
                    last_escape = Some(found);
                    i = found + 2;
                }
                // A control character, which JSON strings may not hold
                // raw: `serde_json` rejects it.
                _ => {
                    plain = false;
                    i = found + 1;
                }
            }
        }
        self.at = bytes.len();
        if plain {
            return Token::Partial(Some(Value::String(self.text[start + 1..].to_owned())));
        }
        Token::Partial(partial_string(&self.text[start..], last_escape.map(|at| at - start)))
    }

    /// The number starting here; one cut off by the end of the input is
    /// shortened to its longest valid start.
    fn number(&mut self) -> Token {
        let bytes = self.text.as_bytes();
        let start = self.at;
        let mut end = start;
        while matches!(bytes.get(end), Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')) {
            end += 1;
        }
        self.at = end;
        let token = &self.text[start..end];
        if end < bytes.len() {
            return match serde_json::from_str::<Value>(token) {
                Ok(number) => Token::Complete(number),
                Err(_) => Token::Invalid,
            };
        }
        let mut token = token;
        loop {
            if let Ok(number) = serde_json::from_str::<Value>(token) {
                return Token::Partial(Some(number));
            }
            match token.char_indices().last() {
                Some((cut, _)) if cut > 0 => token = &token[..cut],
                _ => return Token::Partial(None),
            }
        }
    }

    fn literal(&mut self) -> Token {
        let rest = &self.text[self.at..];
        for (word, value) in [("true", Value::Bool(true)), ("false", Value::Bool(false)), ("null", Value::Null)] {
            if rest.starts_with(word) {
                self.at += word.len();
                return Token::Complete(value);
            }
            if word.starts_with(rest) {
                self.at = self.text.len();
                return Token::Partial(None);
            }
        }
        Token::Invalid
    }
}

impl Frame {
    fn into_value(self) -> Value {
        match self {
            Self::Array(items) => Value::Array(items),
            Self::Object(map, _) => Value::Object(map),
        }
    }
}

/// The position of the first byte at or after `from` that ends a plain run
/// of string text: `"`, `\\` or a control character. Streamed arguments are
/// parsed again at every delta, and long strings (a document in an output
/// tool) dominate that: eight bytes are tested at once (the classic borrow
/// tests, exact about whether a word holds a byte equal to, or less than, a
/// given one); the byte loop then finds where.
fn special_byte(bytes: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGHS: u64 = ONES << 7;
    let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS != 0;
    let has_below = |word: u64, byte: u8| word.wrapping_sub(ONES * u64::from(byte)) & !word & HIGHS != 0;
    let is_special = |byte: u8| byte == b'"' || byte == b'\\' || byte < 0x20;
    let mut at = from;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let word = u64::from_ne_bytes(<[u8; 8]>::try_from(chunk).ok()?);
        if has_zero(word ^ (ONES * u64::from(b'"')))
            || has_zero(word ^ (ONES * u64::from(b'\\')))
            || has_below(word, 0x20)
        {
            break;
        }
        at += 8;
    }
    let position = bytes.get(at..)?.iter().position(|&byte| is_special(byte))?;
    Some(at + position)
}

/// An unterminated string (`text` starts with its `"`), closed: an
/// unfinished escape at the end (`\`, `\u12`) is dropped, and so is a lone
/// high surrogate waiting for its pair.
fn partial_string(text: &str, last_escape: Option<usize>) -> Option<Value> {
    let mut body = text;
    if let Some(at) = last_escape {
        let escape = &text[at..];
        let complete = match escape.as_bytes().get(1) {
            None => false,
            Some(b'u') => escape.len() >= 6,
            Some(_) => true,
        };
        if !complete {
            body = &text[..at];
        }
    }
    let close = |body: &str| serde_json::from_str::<String>(&format!("{body}\"")).ok();
    let parsed = close(body).or_else(|| {
        // `\uD83D` whose low surrogate has not arrived yet.
        let at = last_escape.filter(|at| body.len() == at + 6)?;
        close(&text[..at])
    });
    parsed.map(Value::String)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::parse_partial_json;

    fn parse(text: &str) -> Option<Value> {
        parse_partial_json(text)
    }

    #[test]
    fn open_containers_and_strings_close() {
        assert_eq!(parse("{"), Some(json!({})));
        assert_eq!(parse("[1, [2, {\"a\": \"x"), Some(json!([1, [2, {"a": "x"}]])));
        assert_eq!(parse("{\"a\": 1,"), Some(json!({"a": 1})));
        assert_eq!(parse("[1,"), Some(json!([1])));
        assert_eq!(parse("\"ab"), Some(json!("ab")));
    }

    #[test]
    fn dangling_keys_and_half_literals_are_dropped() {
        assert_eq!(parse("{\"a\""), Some(json!({})));
        assert_eq!(parse("{\"a\":"), Some(json!({})));
        assert_eq!(parse("{\"ab"), Some(json!({})));
        assert_eq!(parse("{\"a\": tr"), Some(json!({})));
        assert_eq!(parse("[nul"), Some(json!([])));
        assert_eq!(parse("fals"), None);
        assert_eq!(parse("  "), None);
    }

    #[test]
    fn numbers_are_cut_to_their_valid_start() {
        assert_eq!(parse("[1."), Some(json!([1])));
        assert_eq!(parse("[1.5e"), Some(json!([1.5])));
        assert_eq!(parse("[1e+"), Some(json!([1])));
        assert_eq!(parse("[-"), Some(json!([])));
        assert_eq!(parse("-12"), Some(json!(-12)));
    }

    #[test]
    fn unfinished_escapes_are_dropped() {
        assert_eq!(parse(r#""a\"#), Some(json!("a")));
        assert_eq!(parse(r#""a\u00"#), Some(json!("a")));
        assert_eq!(parse(r#""a\u00e9"#), Some(json!("aé")));
        assert_eq!(parse(r#""a\"b"#), Some(json!("a\"b")));
        assert_eq!(parse(r#""a\uD83D"#), Some(json!("a")));
        assert_eq!(parse(r#""a\uD83D\uDE00"#), Some(json!("a😀")));
    }

    #[test]
    fn text_that_stops_being_json_keeps_what_came_before() {
        assert_eq!(parse("{\"a\": [1, x]}"), Some(json!({"a": [1]})));
        assert_eq!(parse("{a: 1}"), Some(json!({})));
        assert_eq!(parse("[1 2]"), Some(json!([1])));
        assert_eq!(parse("[01]"), Some(json!([])));
        assert_eq!(parse("}"), None);
    }

    #[test]
    fn complete_documents_parse_as_serde_json_parses_them() {
        for text in [
            r#"{"a": [1, -2.5e3, true, false, null, "x\n\u00e9\"", {}], "b": {"c": []}, "a": 0}"#,
            "  [ ]  ",
            "\"\"",
            "0",
        ] {
            assert_eq!(parse(text), serde_json::from_str::<Value>(text).ok(), "{text}");
        }
    }

    #[test]
    fn special_bytes_are_found_at_every_offset() {
        // Bytes next to `"` (0x22), `\` (0x5C) and 0x20 in value, and
        // above 0x80, so that the word tests meet every near miss.
        let alphabet = [b'a', b'"', b'\\', 0x23, 0x21, 0x5D, 0xA2, 0xDC, 0x00, 0x80, 0x1F, 0x20, 0x9F, 0xFF];
        let mut state = 0x2545_f491_u32;
        for length in 0..40 {
            for _ in 0..50 {
                let bytes: Vec<u8> = (0..length)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 17;
                        state ^= state << 5;
                        // Mostly plain bytes, so that long runs without a hit occur.
                        let pick = (state % 40) as usize;
                        if pick < alphabet.len() { alphabet[pick] } else { b'x' }
                    })
                    .collect();
                for from in 0..=length + 2 {
                    let naive = bytes
                        .iter()
                        .enumerate()
                        .skip(from)
                        .find(|(_, b)| matches!(b, b'"' | b'\\' | 0..0x20))
                        .map(|(i, _)| i);
                    assert_eq!(super::special_byte(&bytes, from), naive, "{bytes:?} from {from}");
                }
            }
        }
    }

    #[test]
    fn plain_strings_are_taken_as_they_are_and_raw_control_characters_are_not_json() {
        let text = "{\"a\": \"caf\u{e9} \u{7f} \u{1F600} long enough to take the word loop\"}";
        assert_eq!(parse(text), serde_json::from_str(text).ok());
        assert_eq!(
            parse(&text[..text.len() - 3]),
            Some(json!({"a": "caf\u{e9} \u{7f} \u{1F600} long enough to take the word loo"}))
        );
        // A raw control character ends the JSON: the string is dropped, as `serde_json` rejects it.
        assert!(serde_json::from_str::<Value>("{\"a\": \"x\u{1}y\"}").is_err());
        assert_eq!(parse("{\"a\": \"x\u{1}y\"}"), Some(json!({})));
        assert_eq!(parse("{\"a\": \"x\u{1}y"), Some(json!({})));
    }
}
