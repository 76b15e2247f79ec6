//! `#[derive(Tool)]` configurations that used to compile and then surprise
//! (issue 27): each now does what its author expects.
//!
//! - A `run` returning `Ok(())` reaches the model as a short success text,
//!   not as `null`.
//! - A doc comment written for people (`# Examples`, code, `# Errors`) is
//!   sent as its summary; `#[tool(full_doc)]` sends all of it.
//! - Argument types named like what the derive generates internally (`D`,
//!   `Value`, `Result`...) work.
#![allow(clippy::unused_async)] // tool handlers are async by contract, even when they never wait

use serde_json::json;
use toolloop::{CancellationToken, Tool, ToolCall, ToolOutput, ToolSet};

/// Save a note.
#[derive(Tool)]
struct SaveNote {
    /// The note.
    text: String,
}

impl SaveNote {
    async fn run(self) -> Result<(), std::convert::Infallible> {
        assert!(!self.text.is_empty());
        Ok(())
    }
}

/// Find a note by its title.
#[derive(Tool)]
struct FindNote {
    /// The title.
    title: String,
}

impl FindNote {
    async fn run(self) -> Result<Option<String>, std::convert::Infallible> {
        Ok((self.title == "groceries").then(|| "milk, eggs".to_owned()))
    }
}

#[tokio::test]
async fn a_tool_that_returns_unit_tells_the_model_it_succeeded_while_none_stays_null() {
    let mut tools = ToolSet::new();
    tools.add::<SaveNote>().unwrap().add::<FindNote>().unwrap();
    let cancel = CancellationToken::new();

    let saved = tools.execute(&ToolCall::new("c1", "save_note", json!({"text": "call Ann"})), &cancel).await.unwrap();
    assert_eq!(saved.result.failure, None);
    assert_eq!(saved.result.content, ToolOutput::DONE);
    assert_eq!(saved.result.content, "Done: the tool succeeded and returned no output.");

    // `None` means "nothing found", which the model must not read as "done".
    let found = tools.execute(&ToolCall::new("c2", "find_note", json!({"title": "taxes"})), &cancel).await.unwrap();
    assert_eq!(found.result.content, "null");
}

/// Convert an amount between currencies, at today's rate.
///
/// Rates come from the central bank.
///
/// # Examples
///
/// ```ignore
/// Convert { amount: 10.0, from: "EUR".into(), to: "USD".into() }.run().await?;
/// ```
///
/// # Errors
///
/// When a currency is unknown. (Internal: the cache is refreshed hourly.)
#[derive(Tool)]
struct Convert {
    /// The amount.
    amount: f64,
}

impl Convert {
    async fn run(self) -> Result<f64, std::convert::Infallible> {
        Ok(self.amount)
    }
}

/// Convert an amount between currencies.
///
/// # Rates
///
/// Today's, from the central bank.
#[derive(Tool)]
#[tool(name = "convert_all", full_doc)]
struct ConvertAll {
    /// The amount.
    amount: f64,
}

impl ConvertAll {
    async fn run(self) -> Result<f64, std::convert::Infallible> {
        Ok(self.amount)
    }
}

#[test]
fn the_model_is_sent_the_doc_comments_summary_unless_full_doc_is_asked_for() {
    assert_eq!(
        Convert::definition().description,
        "Convert an amount between currencies, at today's rate.\n\nRates come from the central bank."
    );
    assert_eq!(
        ConvertAll::definition().description,
        "Convert an amount between currencies.\n\n# Rates\n\nToday's, from the central bank."
    );
}

mod shadowing {
    //! Types named like the derive's own generic parameters and the types
    //! its code names.
    #![allow(clippy::upper_case_acronyms)]

    use toolloop::Tool;

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    pub(super) struct D {
        pub(super) name: String,
    }

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    pub(super) struct Value(pub(super) u32);

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    pub(super) struct Result {
        pub(super) ok: bool,
    }

    /// Use arguments whose types are named `D`, `Value` and `Result`.
    #[derive(Tool)]
    pub(super) struct Shadowed {
        pub(super) d: D,
        pub(super) value: Value,
        pub(super) result: Option<Result>,
    }

    impl Shadowed {
        pub(super) async fn run(self) -> std::result::Result<String, std::convert::Infallible> {
            Ok(format!("{} {} {}", self.d.name, self.value.0, self.result.is_some_and(|result| result.ok)))
        }
    }
}

#[tokio::test]
async fn argument_types_named_like_the_derives_internals_work() {
    let schema = &shadowing::Shadowed::definition().input_schema;
    assert_eq!(schema["required"], json!(["d", "value"]), "an `Option` field stays optional: {schema}");
    let mut tools = ToolSet::new();
    tools.add::<shadowing::Shadowed>().unwrap();
    let call = ToolCall::new("c1", "shadowed", json!({"d": {"name": "x"}, "value": 3, "result": {"ok": true}}));
    let done = tools.execute(&call, &CancellationToken::new()).await.unwrap();
    assert_eq!(done.result.content, "x 3 true");
}
