//! A fake of Anthropic's prompt cache, billing requests as the Messages API
//! documents it:
//! - the prompt is the tools, then the system prompt, then the messages, as
//!   a sequence of blocks (each tool, each system block, each content block);
//! - `cache_control` marks a breakpoint: the prefix up to and including that
//!   block may be written to the cache and read back by later requests that
//!   start with the same bytes (the marks themselves are not part of it);
//! - at most 4 breakpoints per request, `type` must be `ephemeral`, `ttl` is
//!   `5m` (the default) or `1h`, and a longer TTL may not follow a shorter one
//!   (all rejected with HTTP 400 like the API);
//! - a prefix shorter than the model's minimum (1,024 tokens here, as for the
//!   Sonnet models) is never cached;
//! - a read looks for the longest cached prefix at each breakpoint and at the
//!   block boundaries up to 20 blocks before it, no further;
//! - entries live for their TTL from their last use (on a clock the test
//!   advances: [`AnthropicCache::advance`]);
//! - usage: `cache_read_input_tokens` for the prefix found,
//!   `cache_creation_input_tokens` from there to the last breakpoint (when
//!   that prefix is long enough), `input_tokens` for the rest.
//!
//! Tokens are counted as one per four bytes of each block's JSON.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::time::Duration;

use serde_json::{Value, json};

use crate::{RecordedRequest, Reply};

/// The fewest tokens a cached prefix may have.
pub const MINIMUM_CACHEABLE_TOKENS: u64 = 1024;
/// How many blocks before a breakpoint a read looks back.
pub const LOOKBACK_BLOCKS: usize = 20;
/// The most breakpoints a request may carry.
pub const MAX_BREAKPOINTS: usize = 4;

/// Tokens of one call as the API bills them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Billed {
    /// Billed at the input price.
    pub input: u64,
    /// Read from the cache.
    pub cache_read: u64,
    /// Written to the cache (both TTLs).
    pub cache_write: u64,
    /// Written with the one-hour TTL (billed at twice the input price, not 1.25).
    pub cache_write_1h: u64,
}

impl Billed {
    /// Every prompt token.
    pub fn prompt(&self) -> u64 {
        self.input + self.cache_read + self.cache_write
    }

    /// The cost in input-token units: reads 0.1, five-minute writes 1.25,
    /// one-hour writes 2.
    #[allow(clippy::cast_precision_loss)]
    pub fn weighted(&self) -> f64 {
        let five_minute_writes = self.cache_write - self.cache_write_1h;
        self.input as f64
            + self.cache_read as f64 * 0.1
            + five_minute_writes as f64 * 1.25
            + self.cache_write_1h as f64 * 2.0
    }
}

struct Entry {
    expires: Duration,
    ttl: Duration,
}

/// The cache of one fake server.
#[derive(Default)]
pub struct AnthropicCache {
    now: Duration,
    entries: HashMap<u64, Entry>,
    /// Every successful call's bill, in order.
    pub bills: Vec<Billed>,
}

struct Block {
    tokens: u64,
    /// The TTL of its breakpoint, when it is one.
    breakpoint: Option<Duration>,
}

impl AnthropicCache {
    /// Moves the clock on.
    pub fn advance(&mut self, by: Duration) {
        self.now += by;
    }

    /// Bills `request`, or the API's 400 error for one breaking the rules.
    ///
    /// # Errors
    /// The error reply the API would send.
    pub fn bill(&mut self, request: &RecordedRequest) -> Result<Billed, Reply> {
        let body = request.json();
        let blocks = blocks(&body).map_err(|message| invalid(&message))?;
        let breakpoints: Vec<(usize, Duration)> =
            blocks.iter().enumerate().filter_map(|(index, block)| Some((index, block.breakpoint?))).collect();
        if breakpoints.len() > MAX_BREAKPOINTS {
            return Err(invalid(&format!(
                "A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {}.",
                breakpoints.len()
            )));
        }
        if breakpoints.windows(2).any(|pair| pair[1].1 > pair[0].1) {
            return Err(invalid("a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block"));
        }
        // Prefix keys and sizes at every block boundary.
        let model = body["model"].as_str().unwrap_or_default().to_owned();
        let mut keys = Vec::with_capacity(blocks.len());
        let mut sizes = Vec::with_capacity(blocks.len());
        let mut hasher = DefaultHasher::new();
        model.hash(&mut hasher);
        let mut size = 0;
        for (index, block) in blocks.iter().enumerate() {
            canonical(&body, index).hash(&mut hasher);
            keys.push(hasher.finish());
            size += block.tokens;
            sizes.push(size);
        }
        let total = size;
        self.entries.retain(|_, entry| entry.expires > self.now);

        // The longest cached prefix within the lookback of any breakpoint.
        let mut hit: Option<usize> = None;
        for &(at, _) in &breakpoints {
            let earliest = at.saturating_sub(LOOKBACK_BLOCKS);
            if let Some(found) = (earliest..=at).rev().find(|&index| self.entries.contains_key(&keys[index])) {
                hit = Some(hit.map_or(found, |hit| hit.max(found)));
            }
        }
        let read = hit.map_or(0, |index| sizes[index]);
        if let Some(index) = hit {
            let entry = self.entries.get_mut(&keys[index]).expect("found above");
            entry.expires = self.now + entry.ttl;
        }
        // Writes at every breakpoint past the hit whose prefix is long enough.
        let mut written_to = hit;
        let mut write_1h = 0;
        for &(at, ttl) in &breakpoints {
            if sizes[at] < MINIMUM_CACHEABLE_TOKENS || hit.is_some_and(|hit| at <= hit) {
                continue;
            }
            let from = written_to.map_or(0, |index| sizes[index]);
            if ttl > Duration::from_secs(300) {
                write_1h += sizes[at].saturating_sub(from);
            }
            self.entries.insert(keys[at], Entry { expires: self.now + ttl, ttl });
            written_to = Some(written_to.map_or(at, |index| index.max(at)));
        }
        let written = written_to.map_or(0, |index| sizes[index]) - read;
        let billed =
            Billed { input: total - read - written, cache_read: read, cache_write: written, cache_write_1h: write_1h };
        self.bills.push(billed);
        Ok(billed)
    }

    /// A Messages API response with `content` and `stop_reason`, billed for `request`.
    pub fn respond(&mut self, request: &RecordedRequest, content: &Value, stop_reason: &str) -> Reply {
        match self.bill(request) {
            Ok(billed) => Reply::json(
                200,
                &json!({
                    "id": format!("msg_{}", self.bills.len()), "type": "message", "role": "assistant",
                    "model": request.json()["model"], "content": content, "stop_reason": stop_reason,
                    "usage": {
                        "input_tokens": billed.input, "output_tokens": 20,
                        "cache_read_input_tokens": billed.cache_read,
                        "cache_creation_input_tokens": billed.cache_write,
                    }
                }),
            ),
            Err(reply) => reply,
        }
    }
}

fn invalid(message: &str) -> Reply {
    Reply::json(400, &json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}}))
}

/// The prompt's blocks in cache order: tools, system, messages.
fn blocks(body: &Value) -> Result<Vec<Block>, String> {
    let mut blocks = Vec::new();
    for value in prompt_values(body) {
        let breakpoint = match value.get("cache_control") {
            None => None,
            Some(mark) => {
                if mark["type"] != "ephemeral" {
                    return Err(format!("cache_control.type: Input should be 'ephemeral', got {}", mark["type"]));
                }
                Some(match mark.get("ttl").and_then(Value::as_str) {
                    None | Some("5m") => Duration::from_secs(300),
                    Some("1h") => Duration::from_secs(3600),
                    Some(other) => return Err(format!("cache_control.ttl: Input should be '5m' or '1h', got {other}")),
                })
            }
        };
        blocks.push(Block { tokens: tokens(&strip(value)), breakpoint });
    }
    Ok(blocks)
}

fn prompt_values(body: &Value) -> Vec<&Value> {
    let mut values: Vec<&Value> = body["tools"].as_array().map(|tools| tools.iter().collect()).unwrap_or_default();
    match &body["system"] {
        Value::Array(system) => values.extend(system),
        system @ Value::String(_) => values.push(system),
        _ => {}
    }
    for message in body["messages"].as_array().into_iter().flatten() {
        values.extend(message["content"].as_array().into_iter().flatten());
    }
    values
}

/// The block without its mark: what the cache key is made of.
fn strip(value: &Value) -> Value {
    let mut value = value.clone();
    if let Some(object) = value.as_object_mut() {
        object.remove("cache_control");
    }
    value
}

fn canonical(body: &Value, index: usize) -> String {
    strip(prompt_values(body)[index]).to_string()
}

fn tokens(value: &Value) -> u64 {
    (value.to_string().len() as u64).div_ceil(4)
}
