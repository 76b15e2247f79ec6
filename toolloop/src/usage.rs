//! Token usage that adds up across model calls.

use std::iter::Sum;
use std::ops::{Add, AddAssign};

use serde::{Deserialize, Serialize};

/// Tokens consumed by one or more model calls.
///
/// `Usage` adds up with `+`, `+=` and `Iterator::sum`, so a run reports the
/// sum over every iteration and attempt.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Usage {
    /// Input (prompt) tokens billed at the normal rate.
    pub input_tokens: u64,
    /// Output (completion) tokens.
    pub output_tokens: u64,
    /// Input tokens read from the provider's prompt cache.
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// Input tokens written to the provider's prompt cache.
    #[serde(default)]
    pub cache_write_tokens: u64,
    /// The part of [`output_tokens`](Self::output_tokens) the model spent
    /// reasoning, where the provider reports it (OpenAI
    /// `output_tokens_details.reasoning_tokens`). Already counted in the
    /// output tokens, so [`total`](Self::total) leaves it out.
    #[serde(default)]
    pub reasoning_tokens: u64,
}

impl Usage {
    /// Usage with the given input and output tokens and no cache traffic.
    pub const fn new(input_tokens: u64, output_tokens: u64) -> Self {
        Self { input_tokens, output_tokens, cache_read_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 }
    }

    /// Every input (prompt) token, however billed: normal, read from the
    /// cache and written to it.
    pub const fn prompt_tokens(&self) -> u64 {
        self.input_tokens + self.cache_read_tokens + self.cache_write_tokens
    }

    /// The share of prompt tokens read from the provider's cache, from 0 to
    /// 1; `None` when no prompt token was counted.
    #[allow(clippy::cast_precision_loss)] // token counts stay far below 2^52
    pub fn cache_hit_share(&self) -> Option<f64> {
        let prompt = self.prompt_tokens();
        (prompt > 0).then(|| self.cache_read_tokens as f64 / prompt as f64)
    }

    /// All tokens of every kind (reasoning tokens are part of the output tokens).
    pub const fn total(&self) -> u64 {
        self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_write_tokens
    }
}

impl Add for Usage {
    type Output = Self;

    fn add(mut self, rhs: Self) -> Self {
        self += rhs;
        self
    }
}

impl AddAssign for Usage {
    fn add_assign(&mut self, rhs: Self) {
        self.input_tokens += rhs.input_tokens;
        self.output_tokens += rhs.output_tokens;
        self.cache_read_tokens += rhs.cache_read_tokens;
        self.cache_write_tokens += rhs.cache_write_tokens;
        self.reasoning_tokens += rhs.reasoning_tokens;
    }
}

impl Sum for Usage {
    fn sum<I: Iterator<Item = Self>>(iter: I) -> Self {
        iter.fold(Self::default(), Add::add)
    }
}

impl<'a> Sum<&'a Usage> for Usage {
    fn sum<I: Iterator<Item = &'a Usage>>(iter: I) -> Self {
        iter.copied().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::Usage;

    #[test]
    fn usage_adds_every_field() {
        let a = Usage {
            input_tokens: 1,
            output_tokens: 2,
            cache_read_tokens: 3,
            cache_write_tokens: 4,
            reasoning_tokens: 1,
        };
        let b = Usage {
            input_tokens: 10,
            output_tokens: 20,
            cache_read_tokens: 30,
            cache_write_tokens: 40,
            reasoning_tokens: 5,
        };
        let sum: Usage = [a, b].iter().sum();
        assert_eq!(
            sum,
            Usage {
                input_tokens: 11,
                output_tokens: 22,
                cache_read_tokens: 33,
                cache_write_tokens: 44,
                reasoning_tokens: 6
            }
        );
        assert_eq!(sum.total(), 110);
        assert_eq!(sum.prompt_tokens(), 11 + 33 + 44);
        assert_eq!(Usage { cache_read_tokens: 3, input_tokens: 1, ..Usage::default() }.cache_hit_share(), Some(0.75));
        assert_eq!(Usage::new(0, 5).cache_hit_share(), None);
        let mut c = a;
        c += b;
        assert_eq!(c, a + b);
    }

    #[test]
    fn usage_saved_before_reasoning_tokens_existed_still_loads() {
        let old: Usage = serde_json::from_str(r#"{"input_tokens":1,"output_tokens":2}"#).unwrap();
        assert_eq!(old, Usage::new(1, 2));
    }
}
