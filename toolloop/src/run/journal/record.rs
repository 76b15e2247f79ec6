//! The recorded form of journal steps, and its version.

use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::model::{ModelError, ModelErrorKind};
use crate::usage::Usage;

/// The version of the recorded form ([`encode`]) this toolloop writes and
/// reads. See [the module docs](super#the-recorded-form) for when it changes.
pub const JOURNAL_FORMAT: u32 = 1;

/// A step outcome tagged with the format it is written in.
#[derive(Serialize)]
struct Envelope<'a, T: ?Sized> {
    format: u32,
    value: &'a T,
}

/// A step's outcome in the recorded form of the current [`JOURNAL_FORMAT`]:
/// `{"format": 1, "value": ...}`, the value being the outcome's serde form.
pub fn encode<T: Serialize + ?Sized>(value: &T) -> Result<serde_json::Value, serde_json::Error> {
    serde_json::to_value(Envelope { format: JOURNAL_FORMAT, value })
}

/// Reads the outcome recorded for `step` from `json` (written by
/// [`encode`]): refused when it was written in another format or does not
/// deserialize.
pub fn decode<T: DeserializeOwned>(step: &str, json: &serde_json::Value) -> Result<T, JournalError> {
    let format = json.get("format").and_then(serde_json::Value::as_u64);
    if format != Some(u64::from(JOURNAL_FORMAT)) {
        return Err(JournalError::Format { step: step.to_owned(), found: format });
    }
    let value = json.get("value").unwrap_or(&serde_json::Value::Null);
    serde_path_to_error::deserialize(value)
        .map_err(|error| JournalError::Decode { step: step.to_owned(), message: error.to_string() })
}

/// Reads the outcome recorded for `step` from JSON text, as [`decode`].
pub fn decode_str<T: DeserializeOwned>(step: &str, text: &str) -> Result<T, JournalError> {
    let json: serde_json::Value = serde_json::from_str(text)
        .map_err(|error| JournalError::Decode { step: step.to_owned(), message: error.to_string() })?;
    decode(step, &json)
}

/// A journal entry a run cannot use.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JournalError {
    /// The entry was written in another [`JOURNAL_FORMAT`] (by another
    /// version of toolloop).
    #[error(
        "the journal entry of `{step}` is in format {}, and this toolloop reads format {JOURNAL_FORMAT}",
        found.map_or_else(|| "(none)".to_owned(), |found| found.to_string())
    )]
    Format {
        /// The step.
        step: String,
        /// The format it carries, if any.
        found: Option<u64>,
    },
    /// The entry does not deserialize as the step's outcome.
    #[error("the journal entry of `{step}` does not deserialize: {message}")]
    Decode {
        /// The step.
        step: String,
        /// What serde said, with the path of the field.
        message: String,
    },
}

/// A [`ModelError`] in recorded form: everything it says, so that the run
/// reads back the same error (its kind decides what the run does next).
/// `ModelError`'s serde form (below) is this.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct ModelFailure {
    /// [`ModelErrorKind::as_str`].
    pub kind: String,
    /// The provider.
    pub provider: String,
    /// The error's message.
    pub message: String,
    /// The HTTP status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The provider's `retry-after`, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    /// Attempts the provider made.
    #[serde(default)]
    pub attempts: u32,
    /// The provider's error type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
    /// The provider's request id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// The prompt's size and the limit, for a context overflow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_overflow: Option<(Option<u64>, Option<u64>)>,
    /// The usage the provider reported for the call before it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

const KINDS: [ModelErrorKind; 16] = [
    ModelErrorKind::Authentication,
    ModelErrorKind::PermissionDenied,
    ModelErrorKind::NotFound,
    ModelErrorKind::RateLimited,
    ModelErrorKind::Overloaded,
    ModelErrorKind::InvalidRequest,
    ModelErrorKind::ContextOverflow,
    ModelErrorKind::Server,
    ModelErrorKind::Timeout,
    ModelErrorKind::Connection,
    ModelErrorKind::MalformedResponse,
    ModelErrorKind::ScriptExhausted,
    ModelErrorKind::Redirect,
    ModelErrorKind::ResponseTooLarge,
    ModelErrorKind::Journal,
    ModelErrorKind::Other,
];

impl From<&ModelError> for ModelFailure {
    fn from(error: &ModelError) -> Self {
        Self {
            kind: error.kind().as_str().to_owned(),
            provider: error.provider().to_owned(),
            message: error.message().to_owned(),
            status: error.status(),
            retry_after_ms: error.retry_after().map(|after| u64::try_from(after.as_millis()).unwrap_or(u64::MAX)),
            attempts: error.attempts(),
            error_type: error.error_type().map(str::to_owned),
            request_id: error.request_id().map(str::to_owned),
            context_overflow: (error.kind() == ModelErrorKind::ContextOverflow)
                .then(|| (error.prompt_tokens(), error.context_window())),
            usage: error.usage(),
        }
    }
}

impl ModelFailure {
    /// The error again. An unknown kind (from a newer toolloop) reads as
    /// [`ModelErrorKind::Other`].
    fn to_error(&self) -> ModelError {
        let kind = KINDS.into_iter().find(|kind| kind.as_str() == self.kind).unwrap_or(ModelErrorKind::Other);
        let mut error = ModelError::new(kind, self.provider.clone(), self.message.clone())
            .with_retry_after(self.retry_after_ms.map(Duration::from_millis))
            .with_error_type(self.error_type.clone())
            .with_request_id(self.request_id.clone())
            .with_attempts(self.attempts);
        if let Some(status) = self.status {
            error = error.with_status(status);
        }
        if let Some((prompt_tokens, limit)) = self.context_overflow {
            error = error.with_context_overflow(prompt_tokens, limit);
        }
        if let Some(usage) = self.usage {
            error = error.with_usage(usage);
        }
        error
    }
}

/// A model error is recorded with everything it says (kind, provider,
/// message, status, `retry-after`, attempts, the provider's error type and
/// request id, a context overflow's sizes, the usage reported before it
/// failed), so that a run reads back the same error. Its source error, if
/// any, is not recorded.
impl Serialize for ModelError {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        ModelFailure::from(self).serialize(serializer)
    }
}

/// Reads back a recorded model error. An unknown kind (from a newer
/// toolloop) reads as [`ModelErrorKind::Other`].
impl<'de> Deserialize<'de> for ModelError {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        ModelFailure::deserialize(deserializer).map(|failure| failure.to_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ModelResponse;

    #[test]
    fn a_model_error_reads_back_the_same() {
        let error = ModelError::new(ModelErrorKind::ContextOverflow, "openai", "too long")
            .with_status(400)
            .with_retry_after(Some(Duration::from_millis(1_500)))
            .with_request_id(Some("req_1".to_owned()))
            .with_context_overflow(Some(9_000), Some(8_192))
            .with_attempts(2)
            .with_usage(Usage { input_tokens: 12, output_tokens: 3, ..Usage::default() });
        let json = encode(&error).unwrap();
        let again: ModelError = decode("model call 1", &json).unwrap();
        assert_eq!(again.kind(), error.kind());
        assert_eq!(again.status(), Some(400));
        assert_eq!(again.retry_after(), error.retry_after());
        assert_eq!((again.prompt_tokens(), again.context_window()), (Some(9_000), Some(8_192)));
        assert_eq!(again.attempts(), 2);
        // A failed call's reported usage is counted by the run: a replay counts it too.
        assert_eq!(again.usage(), error.usage());
        assert_eq!(again.to_string(), error.to_string());
        for kind in KINDS {
            let json = serde_json::to_value(ModelError::new(kind, "p", "m")).unwrap();
            assert_eq!(serde_json::from_value::<ModelError>(json).unwrap().kind(), kind);
        }
    }

    #[test]
    fn a_model_error_is_recorded_in_the_form_journals_already_hold() {
        // The serde form is the one `ModelFailure` had: journals written
        // before keep reading back (JOURNAL_FORMAT did not change).
        let error = ModelError::new(ModelErrorKind::RateLimited, "anthropic", "slow down").with_status(429);
        let json = encode(&Err::<String, _>(&error)).unwrap();
        let expected = serde_json::json!({"format": 1, "value": {"Err": {
            "kind": "rate_limited", "provider": "anthropic", "message": "slow down", "status": 429, "attempts": 1
        }}});
        assert_eq!(json, expected);
        let back: Result<String, ModelError> = decode("summary 1", &json).unwrap();
        assert_eq!(back.unwrap_err().to_string(), error.to_string());
    }

    #[test]
    fn another_format_or_a_broken_entry_is_refused_with_the_step() {
        let old = serde_json::json!({"format": 0, "value": "x"});
        let error = decode::<String>("summary 1", &old).unwrap_err();
        assert_eq!(error, JournalError::Format { step: "summary 1".to_owned(), found: Some(0) });
        assert!(error.to_string().contains("reads format 1"), "{error}");
        let broken = serde_json::json!({"format": 1, "value": {"content": 3}});
        let error = decode::<ModelResponse>("model call 2", &broken).unwrap_err();
        assert!(matches!(&error, JournalError::Decode { step, .. } if step == "model call 2"), "{error}");
        assert!(error.to_string().contains("content"), "{error}");
        let text = decode_str::<String>("summary 2", "{not json").unwrap_err();
        assert!(matches!(&text, JournalError::Decode { step, .. } if step == "summary 2"), "{text}");
    }
}
