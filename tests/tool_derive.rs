//! `#[derive(Tool)]` on the happy paths: names, descriptions, serde attributes
//! and schemas in both the plain and the strict shape.
#![allow(clippy::unused_async)] // tool handlers are async by contract, even when they never wait

use serde_json::json;
use toolloop::{CancellationToken, Tool, ToolCall, ToolError, ToolSet};

/// Look up the weather.
///
/// Returns the temperature in Celsius.
#[derive(Tool)]
struct GetWeather {
    /// The city, e.g. "Paris".
    city: String,
}

impl GetWeather {
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok(format!("18 degrees in {}", self.city))
    }
}

#[test]
fn name_is_snake_case_and_docs_are_the_description() {
    let definition = GetWeather::definition();
    assert_eq!(GetWeather::NAME, "get_weather");
    assert_eq!(definition.name, "get_weather");
    assert_eq!(definition.description, "Look up the weather.\n\nReturns the temperature in Celsius.");
    assert_eq!(
        definition.input_schema,
        json!({
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city, e.g. \"Paris\"."}},
            "required": ["city"]
        })
    );
}

#[test]
fn definitions_are_built_once_per_type() {
    assert!(std::ptr::eq(GetWeather::definition(), GetWeather::definition()));
}

#[derive(Tool)]
#[tool(name = "weather-v2", description = "Weather, version two.", timeout = "250ms")]
struct WeatherV2 {
    city: String,
}

impl WeatherV2 {
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok(self.city)
    }
}

#[test]
fn attributes_override_name_and_description_and_set_the_timeout() {
    let definition = WeatherV2::definition();
    assert_eq!(definition.name, "weather-v2");
    assert_eq!(definition.description, "Weather, version two.");
    assert_eq!(definition.timeout, Some(std::time::Duration::from_millis(250)));
}

#[doc = include_str!("support/search_description.txt")]
#[derive(Tool)]
struct SearchDocs {
    query: String,
}

impl SearchDocs {
    async fn run(self) -> Result<Vec<String>, std::convert::Infallible> {
        Ok(vec![self.query])
    }
}

#[test]
fn include_str_docs_work() {
    assert_eq!(SearchDocs::definition().description, "Search the documentation.\nReturns matching titles.");
}

/// How to sort results.
#[derive(serde::Deserialize, schemars::JsonSchema, Debug, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Order {
    Newest,
    Oldest,
}

/// A filter on one field.
#[derive(serde::Deserialize, schemars::JsonSchema, Debug, PartialEq)]
struct Filter {
    field: String,
    value: Option<String>,
}

/// Paging options, flattened into the arguments.
#[derive(serde::Deserialize, schemars::JsonSchema, Debug, PartialEq)]
struct Paging {
    #[serde(default)]
    page: u32,
}

fn default_limit() -> u32 {
    10
}

/// Find tickets.
#[derive(Tool, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
struct FindTickets {
    /// Words to look for.
    #[serde(rename = "q")]
    query: String,
    /// How many to return.
    #[serde(default = "default_limit")]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Sort order.
    order: Option<Order>,
    /// Filters to apply, all of which must match.
    #[serde(default)]
    filters: Vec<Filter>,
    #[serde(flatten)]
    paging: Paging,
    #[serde(skip)]
    internal_counter: u64,
}

impl FindTickets {
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok(format!("{self:?}"))
    }
}

#[test]
fn plain_schema_honours_serde_attributes() {
    let schema = &FindTickets::definition().input_schema;
    assert_eq!(
        *schema,
        json!({
            "type": "object",
            "properties": {
                "q": {"type": "string", "description": "Words to look for."},
                "limit": {
                    "type": "integer", "format": "uint32", "minimum": 1, "maximum": 100,
                    "description": "How many to return.", "default": 10
                },
                "order": {"type": ["string", "null"], "enum": ["newest", "oldest", null], "description": "Sort order."},
                "filters": {
                    "type": "array",
                    "description": "Filters to apply, all of which must match.",
                    "items": {
                        "type": "object",
                        "description": "A filter on one field.",
                        "properties": {"field": {"type": "string"}, "value": {"type": ["string", "null"]}},
                        "required": ["field"]
                    }
                },
                "page": {"type": "integer", "format": "uint32", "minimum": 0, "default": 0}
            },
            "required": ["q"],
            "additionalProperties": false
        }),
        "{}",
        serde_json::to_string_pretty(schema).unwrap()
    );
}

#[test]
fn strict_schema_closes_objects_requires_everything_makes_optional_fields_nullable_and_drops_defaults() {
    let strict = FindTickets::definition().strict_input_schema.as_ref().expect("expressible in strict mode");
    assert_eq!(
        *strict,
        json!({
            "type": "object",
            "properties": {
                "q": {"type": "string", "description": "Words to look for."},
                "limit": {
                    "type": ["integer", "null"], "minimum": 1, "maximum": 100,
                    "description": "How many to return."
                },
                "order": {"type": ["string", "null"], "enum": ["newest", "oldest", null], "description": "Sort order."},
                "filters": {
                    "type": ["array", "null"],
                    "description": "Filters to apply, all of which must match.",
                    "items": {
                        "type": "object",
                        "description": "A filter on one field.",
                        "properties": {"field": {"type": "string"}, "value": {"type": ["string", "null"]}},
                        "required": ["field", "value"],
                        "additionalProperties": false
                    }
                },
                "page": {"type": ["integer", "null"], "minimum": 0}
            },
            "required": ["q", "limit", "order", "filters", "page"],
            "additionalProperties": false
        }),
        "{}",
        serde_json::to_string_pretty(strict).unwrap()
    );
}

#[test]
fn arguments_parse_with_renames_defaults_flatten_and_skip() {
    let parsed = FindTickets::parse(&json!({"q": "login", "filters": [{"field": "state"}]})).unwrap();
    assert_eq!(
        parsed,
        FindTickets {
            query: "login".into(),
            limit: 10,
            order: None,
            filters: vec![Filter { field: "state".into(), value: None }],
            paging: Paging { page: 0 },
            internal_counter: 0,
        }
    );
}

#[test]
fn strict_mode_nulls_take_the_defaults() {
    // Under the strict shape the model must send every property, writing
    // null for those it leaves out; they must behave like absent ones.
    let input =
        json!({"q": "login", "limit": null, "order": null, "filters": [{"field": "f", "value": null}], "page": null});
    let parsed = FindTickets::parse(&input).unwrap();
    assert_eq!(parsed.limit, 10);
    assert_eq!(parsed.paging.page, 0);
    assert_eq!(parsed.filters, vec![Filter { field: "f".into(), value: None }]);
}

#[test]
fn argument_errors_name_the_field_path() {
    let error = FindTickets::parse(&json!({"q": "x", "filters": [{"field": 7}]})).unwrap_err();
    let ToolError::InvalidArguments { path, .. } = &error else { panic!("not invalid arguments: {error:?}") };
    assert_eq!(path.as_deref(), Some("filters[0].field"));
    assert_eq!(
        error.to_string(),
        "invalid arguments at `filters[0].field`: invalid type: integer `7`, expected a string"
    );

    let error = FindTickets::parse(&json!({"limit": 3})).unwrap_err();
    assert_eq!(error, ToolError::invalid_arguments(None, "missing field `q`"));
    assert_eq!(error.to_string(), "invalid arguments: missing field `q`");

    let error = FindTickets::parse(&json!({"q": "x", "colour": "red"})).unwrap_err();
    assert!(error.to_string().contains("unknown field `colour`"), "{error}");
}

/// Count the rows of a table.
#[derive(Tool)]
#[tool(state = Database)]
struct CountRows {
    table: String,
}

/// The application state a tool reaches without globals.
struct Database {
    tables: Vec<(&'static str, u64)>,
    queries: std::sync::atomic::AtomicUsize,
}

#[derive(Debug, thiserror::Error)]
#[error("no table named `{0}`")]
struct NoSuchTable(String);

#[derive(serde::Serialize)]
struct RowCount {
    table: String,
    rows: u64,
}

impl CountRows {
    async fn run(self, db: &Database) -> Result<RowCount, NoSuchTable> {
        db.queries.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let rows = db.tables.iter().find(|(name, _)| *name == self.table).map(|(_, rows)| *rows);
        rows.map(|rows| RowCount { table: self.table.clone(), rows }).ok_or(NoSuchTable(self.table))
    }
}

#[tokio::test]
async fn state_reaches_the_tool_and_output_is_json_text_while_strings_stay_text() {
    let db =
        std::sync::Arc::new(Database { tables: vec![("users", 42)], queries: std::sync::atomic::AtomicUsize::new(0) });
    let mut tools = ToolSet::new();
    tools.add_with_state::<CountRows>(db.clone()).unwrap().add::<GetWeather>().unwrap();
    let cancel = CancellationToken::new();

    let counted = tools.execute(&ToolCall::new("c1", "count_rows", json!({"table": "users"})), &cancel).await.unwrap();
    assert_eq!(counted.result.content, r#"{"table":"users","rows":42}"#);
    assert_eq!(counted.output.unwrap().value(), &json!({"table": "users", "rows": 42}));

    let missing = tools.execute(&ToolCall::new("c2", "count_rows", json!({"table": "orders"})), &cancel).await.unwrap();
    assert_eq!(missing.result.failure, Some(toolloop::FailureKind::ToolFailed));
    assert_eq!(missing.result.content, "no table named `orders`");
    assert_eq!(db.queries.load(std::sync::atomic::Ordering::Relaxed), 2);

    let weather = tools.execute(&ToolCall::new("c3", "get_weather", json!({"city": "Oslo"})), &cancel).await.unwrap();
    assert_eq!(weather.result.content, "18 degrees in Oslo", "a string output is not quoted");
}

/// Tag documents.
#[derive(Tool)]
struct TagDocuments {
    /// Tags by document id: a map with free-form keys.
    tags: std::collections::BTreeMap<String, String>,
}

impl TagDocuments {
    async fn run(self) -> Result<usize, std::convert::Infallible> {
        Ok(self.tags.len())
    }
}

/// Label documents, optionally.
#[derive(Tool)]
struct LabelDocuments {
    /// Labels by document id, when there are any.
    labels: Option<std::collections::HashMap<String, String>>,
}

impl LabelDocuments {
    async fn run(self) -> Result<usize, std::convert::Infallible> {
        Ok(self.labels.map_or(0, |labels| labels.len()))
    }
}

/// Store a JSON document.
#[derive(Tool)]
struct StoreDocument {
    /// The document, any JSON value.
    document: serde_json::Value,
}

impl StoreDocument {
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok(self.document.to_string())
    }
}

#[test]
fn inputs_strict_mode_cannot_express_have_no_strict_shape() {
    // A closed map would only ever accept `{}`; an untyped value has no `type` strict mode requires.
    for definition in [TagDocuments::definition(), LabelDocuments::definition(), StoreDocument::definition()] {
        assert_eq!(definition.strict_input_schema, None, "{}: {}", definition.name, definition.input_schema);
        assert!(!definition.is_strict(true));
        assert_eq!(definition.schema(true), &definition.input_schema);
    }
    assert!(FindTickets::definition().is_strict(true));
    assert!(GetWeather::definition().is_strict(true));
}
