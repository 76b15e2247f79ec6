//! `#[serde(...)]` on a tool struct: the container attributes the derive
//! supports (`default`, `default = "..."`, `from`, `try_from`, `rename_all`,
//! `deny_unknown_fields`, `tag`), each through schema and execution, and the
//! loud failure of a conversion whose schema is not an object. The ones it
//! rejects at compile time are pinned in `tests/compile_fail/tests/ui/tool/serde_*.rs`.
#![allow(clippy::unused_async)] // tool handlers are async by contract, even when they never wait

use std::convert::Infallible;

use serde_json::{Value, json};
use toolloop::{CancellationToken, FailureKind, Tool, ToolCall, ToolSet};

async fn run<T: toolloop::tool::Stateless>(input: Value) -> (bool, String) {
    let mut tools = ToolSet::new();
    tools.add::<T>().unwrap();
    let call = ToolCall::new("1", T::NAME, input);
    let execution = tools.execute(&call, &CancellationToken::new()).await.unwrap();
    (execution.result.is_error(), execution.result.content)
}

/// Search the catalogue.
#[derive(Tool, Default)]
#[serde(default)]
struct Search {
    /// Words to look for.
    query: String,
    /// How many results.
    limit: u32,
}

impl Search {
    async fn run(self) -> Result<String, Infallible> {
        Ok(format!("{}:{}", self.query, self.limit))
    }
}

#[tokio::test]
async fn container_default_makes_every_argument_optional_with_the_structs_default() {
    let schema = &Search::definition().input_schema;
    assert_eq!(schema.get("required"), None, "{schema}");
    assert_eq!(run::<Search>(json!({"query": "maps"})).await, (false, "maps:0".to_owned()));
    assert_eq!(run::<Search>(json!({})).await, (false, ":0".to_owned()));
}

/// Page through results.
#[derive(Tool)]
#[serde(default = "Page::first")]
struct Page {
    /// The page number.
    number: u32,
    /// Results per page.
    size: u32,
}

impl Page {
    fn first() -> Self {
        Self { number: 1, size: 20 }
    }

    async fn run(self) -> Result<String, Infallible> {
        Ok(format!("{}x{}", self.number, self.size))
    }
}

#[tokio::test]
async fn container_default_with_a_function_fills_missing_arguments_from_it() {
    assert_eq!(Page::definition().input_schema.get("required"), None);
    assert_eq!(run::<Page>(json!({"number": 3})).await, (false, "3x20".to_owned()));
}

/// The arguments as the model sends them.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct RawRange {
    /// Inclusive start.
    from: u32,
    /// Inclusive end.
    to: u32,
}

/// Sum the numbers of a range.
#[derive(Tool)]
#[serde(from = "RawRange")]
struct SumRange {
    numbers: Vec<u32>,
}

impl From<RawRange> for SumRange {
    fn from(raw: RawRange) -> Self {
        Self { numbers: (raw.from..=raw.to).collect() }
    }
}

impl SumRange {
    async fn run(self) -> Result<u32, Infallible> {
        Ok(self.numbers.iter().sum())
    }
}

#[tokio::test]
async fn from_takes_the_schema_and_the_parsing_of_the_other_type() {
    let schema = &SumRange::definition().input_schema;
    assert_eq!(schema["properties"].as_object().unwrap().keys().collect::<Vec<_>>(), ["from", "to"]);
    assert_eq!(run::<SumRange>(json!({"from": 1, "to": 4})).await, (false, "10".to_owned()));
}

/// Divide two numbers.
#[derive(Tool)]
#[serde(try_from = "RawRange")]
struct Ratio {
    value: f64,
}

impl TryFrom<RawRange> for Ratio {
    type Error = String;

    fn try_from(raw: RawRange) -> Result<Self, String> {
        if raw.to == 0 {
            return Err("`to` must not be zero".to_owned());
        }
        Ok(Self { value: f64::from(raw.from) / f64::from(raw.to) })
    }
}

impl Ratio {
    async fn run(self) -> Result<f64, Infallible> {
        Ok(self.value)
    }
}

#[tokio::test]
async fn try_from_errors_are_invalid_arguments_the_model_can_read() {
    assert_eq!(run::<Ratio>(json!({"from": 1, "to": 4})).await, (false, "0.25".to_owned()));
    let (is_error, content) = run::<Ratio>(json!({"from": 1, "to": 0})).await;
    assert!(is_error);
    assert_eq!(content, "invalid arguments: `to` must not be zero");
}

/// Rename a file.
#[derive(Tool)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(rename = "ignored_by_tools")]
struct RenameFile {
    /// The current path.
    old_path: String,
    /// The new path.
    new_path: String,
}

impl RenameFile {
    async fn run(self) -> Result<String, Infallible> {
        Ok(format!("{} -> {}", self.old_path, self.new_path))
    }
}

#[tokio::test]
async fn rename_all_and_deny_unknown_fields_pass_through() {
    let schema = &RenameFile::definition().input_schema;
    assert_eq!(schema["required"], json!(["oldPath", "newPath"]));
    assert_eq!(schema["additionalProperties"], json!(false));
    assert_eq!(run::<RenameFile>(json!({"oldPath": "a", "newPath": "b"})).await, (false, "a -> b".to_owned()));
    let (is_error, content) = run::<RenameFile>(json!({"oldPath": "a", "newPath": "b", "force": true})).await;
    assert!(is_error);
    assert!(content.contains("unknown field `force`"), "{content}");
}

/// Ping a host.
#[derive(Tool)]
#[serde(tag = "kind")]
struct Ping {
    /// The host.
    host: String,
}

impl Ping {
    async fn run(self) -> Result<String, Infallible> {
        Ok(self.host)
    }
}

#[tokio::test]
async fn a_struct_tag_is_accepted_and_not_required() {
    let schema = &Ping::definition().input_schema;
    assert_eq!(schema["required"], json!(["host"]));
    assert_eq!(run::<Ping>(json!({"kind": "Ping", "host": "example.org"})).await, (false, "example.org".to_owned()));
    assert_eq!(run::<Ping>(json!({"host": "example.org"})).await, (false, "example.org".to_owned()));
}

/// Look up a word.
#[derive(Tool)]
#[serde(from = "String")]
struct Define {
    word: String,
}

impl From<String> for Define {
    fn from(word: String) -> Self {
        Self { word }
    }
}

impl Define {
    async fn run(self) -> Result<String, Infallible> {
        Ok(self.word)
    }
}

#[test]
#[should_panic(expected = "tool `define`: its arguments must be a JSON object")]
fn a_tool_whose_schema_is_not_an_object_fails_when_added() {
    let mut tools = ToolSet::new();
    let _ = tools.add::<Define>();
}

struct Db {
    rows: u64,
}

/// Count rows.
#[derive(Tool)]
#[tool(state = "Db", crate = toolloop)]
struct CountRows {}

impl CountRows {
    async fn run(self, db: &Db) -> Result<u64, Infallible> {
        Ok(db.rows)
    }
}

#[tokio::test]
async fn state_and_crate_may_be_written_as_a_string_or_a_path() {
    let mut tools = ToolSet::new();
    tools.add_with_state::<CountRows>(Db { rows: 7 }).unwrap();
    let call = ToolCall::new("1", "count_rows", json!({}));
    let execution = tools.execute(&call, &CancellationToken::new()).await.unwrap();
    assert_eq!(execution.result.content, "7");
    assert_eq!(execution.result.failure, None::<FailureKind>);
}
