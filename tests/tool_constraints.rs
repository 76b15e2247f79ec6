//! The constraints a tool's schema shows the model (`#[schemars(range,
//! length, regex, ...)]`) are enforced when its arguments are parsed: a
//! call that breaks one is an `InvalidArguments` error result naming the
//! field and the constraint, and the handler does not run.
#![allow(clippy::unused_async)] // tool handlers are async by contract, even when they never wait

use std::convert::Infallible;

use serde_json::{Value, json};
use toolloop::{CancellationToken, FailureKind, Tool, ToolCall, ToolSet};

/// A shape to draw.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Shape {
    /// A circle.
    Circle {
        /// Its radius.
        #[schemars(range(min = 0.5))]
        radius: f64,
    },
    /// A square.
    Square {
        /// Its side.
        #[schemars(range(max = 10))]
        side: u32,
    },
}

/// Where to draw.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Canvas {
    /// Its name.
    #[schemars(length(min = 1, max = 8))]
    name: String,
}

/// Draw shapes.
#[derive(Tool)]
struct Draw {
    /// How many copies.
    #[schemars(range(min = 1, max = 10))]
    copies: u32,
    /// A currency code such as "EUR".
    #[schemars(regex(pattern = r"^[A-Z]{3}$"))]
    currency: String,
    /// Tags, at most three.
    #[schemars(length(max = 3))]
    tags: Vec<String>,
    /// The stroke width, in tenths.
    #[schemars(extend("multipleOf" = 0.1))]
    stroke: f64,
    /// An optional title.
    #[schemars(length(max = 5))]
    title: Option<String>,
    /// The shape.
    shape: Shape,
    /// The canvas.
    canvas: Canvas,
}

impl Draw {
    async fn run(self) -> Result<String, Infallible> {
        let Self { copies, currency, tags, stroke, title, shape, canvas } = self;
        let area = match shape {
            Shape::Circle { radius } => std::f64::consts::PI * radius * radius,
            Shape::Square { side } => f64::from(side * side),
        };
        Ok(format!("{copies} x {area} on {} in {currency}, {tags:?}, {stroke}, {title:?}", canvas.name))
    }
}

fn valid() -> Value {
    json!({
        "copies": 2,
        "currency": "EUR",
        "tags": ["a"],
        "stroke": 0.3,
        "title": null,
        "shape": {"kind": "square", "side": 4},
        "canvas": {"name": "main"}
    })
}

fn with(path: &str, value: Value) -> Value {
    let mut input = valid();
    *input.pointer_mut(path).unwrap() = value;
    input
}

async fn call(input: Value) -> (Option<FailureKind>, String) {
    let mut tools = ToolSet::new();
    tools.add::<Draw>().unwrap();
    let execution = tools.execute(&ToolCall::new("1", "draw", input), &CancellationToken::new()).await.unwrap();
    (execution.result.failure, execution.result.content)
}

fn invalid(message: &str) -> (Option<FailureKind>, String) {
    (Some(FailureKind::InvalidArguments), message.to_owned())
}

#[tokio::test]
async fn arguments_within_their_constraints_run_the_tool() {
    assert_eq!(call(valid()).await, (None, "2 x 16 on main in EUR, [\"a\"], 0.3, None".to_owned()));
}

#[tokio::test]
async fn a_number_out_of_range_is_rejected_naming_the_field() {
    assert_eq!(
        call(with("/copies", json!(999))).await,
        invalid("invalid arguments at `copies`: 999 is greater than the maximum 10")
    );
    assert_eq!(
        call(with("/copies", json!(0))).await,
        invalid("invalid arguments at `copies`: 0 is less than the minimum 1")
    );
}

#[tokio::test]
async fn lengths_and_patterns_are_enforced() {
    assert_eq!(
        call(with("/currency", json!("euro"))).await,
        invalid("invalid arguments at `currency`: \"euro\" does not match the pattern `^[A-Z]{3}$`")
    );
    assert_eq!(
        call(with("/tags", json!(["a", "b", "c", "d"]))).await,
        invalid("invalid arguments at `tags`: has 4 items, at most 3 allowed")
    );
    assert_eq!(
        call(with("/title", json!("too long"))).await,
        invalid("invalid arguments at `title`: has 8 characters, at most 5 allowed")
    );
    assert_eq!(
        call(with("/canvas/name", json!(""))).await,
        invalid("invalid arguments at `canvas.name`: has 0 characters, at least 1 required")
    );
}

#[tokio::test]
async fn decimal_multiples_pass_and_others_do_not() {
    assert_eq!(call(with("/stroke", json!(0.7))).await.0, None);
    assert_eq!(
        call(with("/stroke", json!(0.35))).await,
        invalid("invalid arguments at `stroke`: 0.35 is not a multiple of 0.1")
    );
}

#[tokio::test]
async fn constraints_inside_a_tagged_enum_variant_are_enforced() {
    assert_eq!(
        call(with("/shape", json!({"kind": "square", "side": 11}))).await,
        invalid("invalid arguments at `shape.side`: 11 is greater than the maximum 10")
    );
    assert_eq!(
        call(with("/shape", json!({"kind": "circle", "radius": 0.1}))).await,
        invalid("invalid arguments at `shape.radius`: 0.1 is less than the minimum 0.5")
    );
    assert_eq!(call(with("/shape", json!({"kind": "circle", "radius": 2.0}))).await.0, None);
}

#[tokio::test]
async fn every_broken_constraint_is_listed() {
    let mut input = with("/copies", json!(11));
    input["currency"] = json!("eur");
    assert_eq!(
        call(input).await,
        invalid(
            "invalid arguments: at `copies`: 11 is greater than the maximum 10; \
             at `currency`: \"eur\" does not match the pattern `^[A-Z]{3}$`"
        )
    );
}

#[tokio::test]
async fn type_errors_come_first_with_their_path() {
    assert_eq!(
        call(with("/copies", json!("many"))).await,
        invalid("invalid arguments at `copies`: invalid type: string \"many\", expected u32")
    );
}

#[test]
fn the_schema_shows_the_constraints_that_are_enforced() {
    let schema = &Draw::definition().input_schema;
    assert_eq!(schema["properties"]["copies"]["minimum"], json!(1));
    assert_eq!(schema["properties"]["copies"]["maximum"], json!(10));
    assert_eq!(schema["properties"]["currency"]["pattern"], json!("^[A-Z]{3}$"));
    assert_eq!(schema["properties"]["copies"]["description"], json!("How many copies."));
    // An `Option` stays optional.
    let required: Vec<&str> = schema["required"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert_eq!(required, ["copies", "currency", "tags", "stroke", "shape", "canvas"]);
}

/// An output whose constraints the same checker validates.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Dose {
    /// Millilitres, in tenths.
    #[schemars(extend("multipleOf" = 0.1), range(max = 5))]
    millilitres: f64,
    /// The shape of the cup.
    shape: Shape,
}

#[tokio::test]
async fn outputs_are_validated_by_the_same_checker() {
    use toolloop::testing::ScriptedModel;
    use toolloop::{Agent, Conversation, ModelResponse};

    let output = |id: &str, input: Value| ModelResponse::from_tool_calls([ToolCall::new(id, "final_output", input)]);
    let model = ScriptedModel::from_responses([
        // A square side over its maximum, inside a tagged enum: fed back.
        output("1", json!({"millilitres": 0.3, "shape": {"kind": "square", "side": 11}})),
        // 0.3 is a multiple of 0.1.
        output("2", json!({"millilitres": 0.3, "shape": {"kind": "square", "side": 2}})),
    ]);
    let agent = Agent::builder().model(model.clone()).output::<Dose>().build().unwrap();
    let mut conversation = Conversation::new();
    conversation.push_user("Pour.");
    let done = agent.run(&mut conversation).await.unwrap();
    assert!((done.output.millilitres - 0.3).abs() < f64::EPSILON);
    assert!(matches!(done.output.shape, Shape::Square { side: 2 }));
    assert_eq!(done.metadata.attempts, 2);
    let verdict = model.requests()[1].last_tool_result().unwrap().content.clone();
    assert!(verdict.contains("at `shape.side`: 11 is greater than the maximum 10"), "{verdict}");
}
