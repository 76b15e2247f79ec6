//! Native and prompted structured output over HTTP, on every wire, against
//! fakes that enforce each API's structured-output rules
//! (`toolloop_workspace::output_rules`): the schema each wire writes is one
//! the API accepts, helper tools stay callable while it is set, and what
//! an API would reject is a typed error before anything is sent.

#![allow(clippy::unused_async)] // tool handlers are async by contract

use serde_json::{Value, json};
use toolloop::agent::OutputMode;
use toolloop::model::{ModelErrorKind, ResponseSchema};
use toolloop::providers::anthropic::Anthropic;
use toolloop::providers::gemini::Gemini;
use toolloop::providers::ollama::Ollama;
use toolloop::providers::openai::{OpenAi, OpenAiResponses};
use toolloop::run::Event;
use toolloop::run::Termination;
use toolloop::{Agent, BuildError, Conversation, Model, ModelRequest};
use toolloop_workspace::output_rules::{Api, Turn, fake};
use toolloop_workspace::{RecordedRequest, TestServer};

/// Look up the population of a city, in millions.
#[derive(toolloop::Tool)]
struct Population {
    /// The city's name.
    city: String,
}

impl Population {
    async fn run(self) -> Result<f64, String> {
        match self.city.as_str() {
            "Paris" => Ok(2.1),
            other => Err(format!("no data for {other}")),
        }
    }
}

/// The comparison.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Report {
    /// The largest city compared.
    largest: String,
    /// How sure, from 1 to 5.
    #[schemars(range(min = 1, max = 5))]
    confidence: u8,
    /// Anything worth adding.
    note: Option<String>,
}

fn agent(model: impl Model + 'static, mode: OutputMode) -> Result<Agent<Report>, BuildError> {
    let builder = Agent::builder().model(model).system("Compare cities.").tool::<Population>().output::<Report>();
    match mode {
        OutputMode::Native => builder.native_output().build(),
        OutputMode::Prompted => builder.prompted_output().build(),
        OutputMode::Auto => builder.auto_output().build(),
        _ => builder.build(),
    }
}

fn question() -> Conversation {
    let mut conversation = Conversation::new();
    conversation.push_user("Which is larger, Paris or Rome?");
    conversation
}

/// A tool call, then the answer, with `note` left out as strict mode writes it (null).
fn tool_then_answer() -> Vec<Turn> {
    vec![
        Turn::Call("c1", "population", json!({"city": "Paris"})),
        Turn::answer(r#"{"largest": "Paris", "confidence": 4, "note": null}"#),
    ]
}

async fn native_run(api: Api, model: impl Model + 'static, server: &TestServer) -> Vec<RecordedRequest> {
    let agent = agent(model, OutputMode::Native).unwrap();
    assert_eq!(agent.output_mode(), OutputMode::Native);
    let mut conversation = question();
    let done = agent.run(&mut conversation).await.unwrap();
    assert_eq!((done.output.largest.as_str(), done.output.confidence, done.output.note), ("Paris", 4, None));
    assert_eq!(done.metadata.termination, Termination::Output);
    assert_eq!(done.metadata.iterations, 2, "{api:?}: the tool was called, then the answer came");
    assert!(conversation.unanswered_tool_calls().is_empty());
    server.requests()
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|tool| tool["function"]["name"].as_str().or(tool["name"].as_str()).unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn native_on_openai_chat_is_a_strict_response_format_beside_callable_tools() {
    let server = TestServer::respond_with(fake(Api::Chat, tool_then_answer())).await;
    let model = OpenAi::builder().api_key("k").base_url(server.url()).build().unwrap();
    let requests = native_run(Api::Chat, model, &server).await;
    let first = requests[0].json();
    assert_eq!(tool_names(&first), ["population"], "no output tool in native mode");
    let format = &first["response_format"];
    assert_eq!((&format["type"], &format["json_schema"]["name"]), (&json!("json_schema"), &json!("final_output")));
    assert_eq!(format["json_schema"]["strict"], json!(true));
    assert_eq!(format["json_schema"]["description"], json!("The comparison."), "the output type's doc comment");
    let schema = &format["json_schema"]["schema"];
    assert_eq!(schema["required"], json!(["largest", "confidence", "note"]));
    assert_eq!(schema["properties"]["note"]["type"], json!(["string", "null"]));
    // The tool's result went back, with the schema still set.
    let second = requests[1].json();
    assert_eq!(second["messages"].as_array().unwrap().last().unwrap()["role"], json!("tool"));
    assert_eq!(second["response_format"], first["response_format"]);
}

#[tokio::test]
async fn native_on_openai_responses_is_a_strict_text_format_beside_callable_tools() {
    let server = TestServer::respond_with(fake(Api::Responses, tool_then_answer())).await;
    let model = OpenAiResponses::builder().api_key("k").base_url(server.url()).build().unwrap();
    let requests = native_run(Api::Responses, model, &server).await;
    let first = requests[0].json();
    assert_eq!(tool_names(&first), ["population"]);
    let format = &first["text"]["format"];
    assert_eq!(
        (&format["type"], &format["name"], &format["strict"]),
        (&json!("json_schema"), &json!("final_output"), &json!(true))
    );
    assert_eq!(format["schema"]["additionalProperties"], json!(false));
    assert_eq!(requests[1].json()["input"].as_array().unwrap().last().unwrap()["type"], json!("function_call_output"));
}

#[tokio::test]
async fn native_on_anthropic_closes_objects_and_keeps_bounds_as_words() {
    let server = TestServer::respond_with(fake(Api::Anthropic, tool_then_answer())).await;
    let model = Anthropic::builder().api_key("k").model("claude-sonnet-4-5").base_url(server.url()).build().unwrap();
    let requests = native_run(Api::Anthropic, model, &server).await;
    let first = requests[0].json();
    assert_eq!(tool_names(&first), ["population"]);
    let format = &first["output_config"]["format"];
    assert_eq!(format["type"], json!("json_schema"));
    assert_eq!(format["schema"]["additionalProperties"], json!(false));
    let confidence = &format["schema"]["properties"]["confidence"];
    assert!(confidence.get("maximum").is_none(), "Anthropic rejects numeric bounds: {confidence}");
    assert!(confidence["description"].as_str().unwrap().contains("maximum: 5"), "{confidence}");
}

#[tokio::test]
async fn bounds_the_provider_does_not_enforce_are_still_checked_and_fed_back() {
    let server = TestServer::respond_with(fake(
        Api::Anthropic,
        vec![
            Turn::answer(r#"{"largest": "Paris", "confidence": 9}"#),
            Turn::answer(r#"{"largest": "Paris", "confidence": 5}"#),
        ],
    ))
    .await;
    let model = Anthropic::builder().api_key("k").model("claude-opus-4-6").base_url(server.url()).build().unwrap();
    let mut conversation = question();
    let done = agent(model, OutputMode::Native).unwrap().run(&mut conversation).await.unwrap();
    assert_eq!((done.output.confidence, done.metadata.attempts), (5, 2));
    // The verdict went back as a user message, after the rejected answer.
    let second = server.requests()[1].json();
    let messages = second["messages"].as_array().unwrap();
    let feedback = messages.last().unwrap();
    assert_eq!(feedback["role"], json!("user"));
    let text = feedback["content"].to_string();
    assert!(text.contains("confidence") && text.contains("rejected"), "{text}");
}

#[tokio::test]
async fn anthropic_models_without_structured_outputs_fail_before_anything_is_sent() {
    let server = TestServer::respond_with(fake(Api::Anthropic, tool_then_answer())).await;
    let old =
        || Anthropic::builder().api_key("k").model("claude-3-5-haiku-20241022").base_url(server.url()).build().unwrap();
    // At build time, naming the modes to use instead.
    let error = agent(old(), OutputMode::Native).unwrap_err();
    assert!(matches!(error, BuildError::NativeOutputUnsupported { .. }), "{error}");
    assert!(error.to_string().contains("OutputMode::Tool"), "{error}");
    // Auto picks the output tool.
    assert_eq!(agent(old(), OutputMode::Auto).unwrap().output_mode(), OutputMode::Tool);
    // A request built by hand is stopped at request time, with no HTTP status.
    let schema = ResponseSchema::new("report", json!({"type": "object", "properties": {}}));
    let history = [toolloop::Message::user("hi")];
    let error = old().complete(ModelRequest::new(&history).with_response_schema(&schema)).await.unwrap_err();
    assert_eq!((error.kind(), error.status()), (ModelErrorKind::InvalidRequest, None));
    assert!(error.to_string().contains("prompted"), "{error}");
    assert!(server.requests().is_empty(), "nothing reached the API");
}

#[tokio::test]
async fn ollama_takes_a_format_only_without_tools() {
    // No helper tools: the schema goes in `format`.
    let server =
        TestServer::respond_with(fake(Api::Ollama, vec![Turn::answer(r#"{"largest": "Rome", "confidence": 2}"#)]))
            .await;
    let model = || Ollama::builder().base_url(server.url()).build().unwrap();
    let agent_without_tools = Agent::builder().model(model()).output::<Report>().native_output().build().unwrap();
    let mut conversation = question();
    assert_eq!(agent_without_tools.run(&mut conversation).await.unwrap().output.largest, "Rome");
    let body = server.requests()[0].json();
    assert_eq!(body["format"]["properties"]["largest"]["type"], json!("string"));
    assert!(body.get("tools").is_none());

    // With tools the server's grammar would leave no room for a call:
    // native mode is refused at build time, and auto falls back to the tool.
    let error = agent(model(), OutputMode::Native).unwrap_err();
    assert!(error.to_string().contains("cannot call tools while it follows a response schema"), "{error}");
    assert_eq!(agent(model(), OutputMode::Auto).unwrap().output_mode(), OutputMode::Tool);
    // Reflection offers `submit`, a tool too.
    let reflective = Agent::builder()
        .model(model())
        .output::<Report>()
        .native_output()
        .reflection(|report: &Report| format!("{report:?}"))
        .build();
    assert!(matches!(reflective, Err(BuildError::NativeOutputUnsupported { .. })));
    // A request built by hand with both fails before it is sent.
    let schema = ResponseSchema::new("report", json!({"type": "object", "properties": {}}));
    let tools = [toolloop::tool::ToolDefinition::from_schema("t", "A tool.", json!({"type": "object"}))];
    let history = [toolloop::Message::user("hi")];
    let request = ModelRequest::new(&history).with_tools(&tools).with_response_schema(&schema);
    let error = model().complete(request).await.unwrap_err();
    assert_eq!((error.kind(), error.status()), (ModelErrorKind::InvalidRequest, None));
    assert_eq!(server.requests().len(), 1, "only the first run's request was sent");
}

/// A Gemini model named `name`, at `server`.
fn gemini(name: &str, server: &TestServer) -> Gemini {
    Gemini::builder().api_key("k").model(name).base_url(server.url()).build().unwrap()
}

#[tokio::test]
async fn native_on_gemini_3_is_a_json_schema_beside_callable_functions() {
    let server = TestServer::respond_with(fake(Api::Gemini, tool_then_answer())).await;
    let requests = native_run(Api::Gemini, gemini("gemini-3-flash-preview", &server), &server).await;
    let first = requests[0].json();
    let declared: Vec<&Value> =
        first["tools"][0]["functionDeclarations"].as_array().unwrap().iter().map(|f| &f["name"]).collect();
    assert_eq!(declared, [&json!("population")], "no output tool in native mode");
    let config = &first["generationConfig"];
    assert_eq!(config["responseMimeType"], json!("application/json"));
    assert!(config.get("responseSchema").is_none(), "only one of the two schema fields");
    let schema = &config["responseJsonSchema"];
    // The type's own schema, not the strict shape: `note` stays optional.
    assert_eq!(schema["required"], json!(["largest", "confidence"]));
    assert_eq!(schema["properties"]["confidence"]["maximum"], json!(5), "Gemini reads numeric bounds");
    // The function's result went back (after the signed call), with the schema still set.
    let second = requests[1].json();
    let contents = second["contents"].as_array().unwrap();
    assert!(contents[1]["parts"][0]["thoughtSignature"].is_string(), "the call's signature went back");
    assert!(contents.last().unwrap()["parts"][0]["functionResponse"].is_object());
    assert_eq!(second["generationConfig"], first["generationConfig"]);
}

#[tokio::test]
async fn gemini_before_3_takes_a_schema_only_without_functions() {
    let server =
        TestServer::respond_with(fake(Api::Gemini, vec![Turn::answer(r#"{"largest": "Rome", "confidence": 2}"#)]))
            .await;
    let model = || gemini("gemini-2.5-flash", &server);
    let without_tools = Agent::builder().model(model()).output::<Report>().native_output().build().unwrap();
    let mut conversation = question();
    assert_eq!(without_tools.run(&mut conversation).await.unwrap().output.largest, "Rome");
    let body = server.requests()[0].json();
    assert_eq!(body["generationConfig"]["responseJsonSchema"]["properties"]["largest"]["type"], json!("string"));
    assert!(body.get("tools").is_none());
    // With tools the API answers 400: refused at build time, and auto picks the output tool.
    let error = agent(model(), OutputMode::Native).unwrap_err();
    assert!(matches!(error, BuildError::NativeOutputUnsupported { .. }), "{error}");
    assert_eq!(agent(model(), OutputMode::Auto).unwrap().output_mode(), OutputMode::Tool);
    assert_eq!(
        agent(gemini("gemini-3-pro-preview", &server), OutputMode::Auto).unwrap().output_mode(),
        OutputMode::Native,
        "auto is native on Gemini 3"
    );
    // A request built by hand with both fails before it is sent, naming the modes to use.
    let schema = ResponseSchema::new("report", json!({"type": "object", "properties": {}}));
    let tools = [toolloop::tool::ToolDefinition::from_schema("t", "A tool.", json!({"type": "object"}))];
    let history = [toolloop::Message::user("hi")];
    let request = ModelRequest::new(&history).with_tools(&tools).with_response_schema(&schema);
    let error = model().complete(request).await.unwrap_err();
    assert_eq!((error.kind(), error.status()), (ModelErrorKind::InvalidRequest, None));
    assert!(error.to_string().contains("prompted output mode"), "{error}");
    assert_eq!(server.requests().len(), 1, "only the first run's request was sent");
}

#[tokio::test]
async fn a_gemini_answer_blocked_for_safety_is_a_typed_ending() {
    let server = TestServer::respond_with(fake(Api::Gemini, vec![Turn::Refusal(String::new())])).await;
    let mut conversation = question();
    let agent = agent(gemini("gemini-3-flash-preview", &server), OutputMode::Native).unwrap();
    let error = agent.run(&mut conversation).await.unwrap_err();
    assert_eq!(
        error.termination(),
        &Termination::Refused { attempt: 1, message: "the provider's content filter blocked the answer".into() }
    );
    assert_eq!(server.requests().len(), 1, "a blocked answer is not retried");
    assert_eq!(error.metadata().usage.output_tokens, 50, "usage is still reported");
    assert!(conversation.unanswered_tool_calls().is_empty());
}

#[tokio::test]
async fn a_gemini_answer_cut_off_mid_json_is_fed_back_as_a_user_turn() {
    let server = TestServer::respond_with(fake(
        Api::Gemini,
        vec![Turn::CutOff(r#"{"largest": "Par"#.into()), Turn::answer(r#"{"largest": "Paris", "confidence": 1}"#)],
    ))
    .await;
    let mut conversation = question();
    let done =
        agent(gemini("gemini-3-flash-preview", &server), OutputMode::Native).unwrap().run(&mut conversation).await;
    let done = done.unwrap();
    assert_eq!((done.output.confidence, done.metadata.attempts), (1, 2));
    let second = server.requests()[1].json();
    let feedback = second["contents"].as_array().unwrap().last().unwrap();
    assert_eq!(feedback["role"], json!("user"));
    assert!(feedback["parts"].to_string().contains("cut off at the output token limit"), "{feedback}");
}

#[tokio::test]
async fn prompted_output_puts_the_schema_in_the_system_prompt_and_reads_a_fenced_answer() {
    let server = TestServer::respond_with(fake(
        Api::Ollama,
        vec![
            Turn::Call("", "population", json!({"city": "Paris"})),
            Turn::answer("Here it is:\n```json\n{\"largest\": \"Paris\", \"confidence\": 3}\n```"),
        ],
    ))
    .await;
    let model = Ollama::builder().base_url(server.url()).build().unwrap();
    let mut conversation = question();
    let done = agent(model, OutputMode::Prompted).unwrap().run(&mut conversation).await.unwrap();
    assert_eq!((done.output.largest.as_str(), done.output.confidence), ("Paris", 3));
    let first = server.requests()[0].json();
    assert!(first.get("format").is_none());
    assert_eq!(tool_names(&first), ["population"]);
    let system = first["messages"][0]["content"].as_str().unwrap();
    assert!(system.starts_with("Compare cities.\n\n") && system.contains("\"confidence\""), "{system}");
}

#[tokio::test]
async fn a_refusal_is_a_typed_ending_on_every_wire() {
    for api in [Api::Chat, Api::Responses, Api::Anthropic] {
        let server = TestServer::respond_with(fake(api, vec![Turn::Refusal("I can't help with that.".into())])).await;
        let model: Box<dyn Model> = match api {
            Api::Chat => Box::new(OpenAi::builder().api_key("k").base_url(server.url()).build().unwrap()),
            Api::Responses => Box::new(OpenAiResponses::builder().api_key("k").base_url(server.url()).build().unwrap()),
            _ => Box::new(Anthropic::builder().api_key("k").base_url(server.url()).build().unwrap()),
        };
        let mut conversation = question();
        let error = agent(model, OutputMode::Native).unwrap().run(&mut conversation).await.unwrap_err();
        assert_eq!(
            error.termination(),
            &Termination::Refused { attempt: 1, message: "I can't help with that.".into() },
            "{api:?}"
        );
        assert_eq!(server.requests().len(), 1, "{api:?}: a refusal is not retried");
        assert_eq!(error.metadata().usage.output_tokens, 5, "{api:?}: usage is still reported");
    }
}

#[tokio::test]
async fn an_answer_cut_off_mid_json_is_fed_back() {
    let server = TestServer::respond_with(fake(
        Api::Chat,
        vec![
            Turn::CutOff(r#"{"largest": "Par"#.into()),
            Turn::answer(r#"{"largest": "Paris", "confidence": 1, "note": null}"#),
        ],
    ))
    .await;
    let model = OpenAi::builder().api_key("k").base_url(server.url()).build().unwrap();
    let mut conversation = question();
    let done = agent(model, OutputMode::Native).unwrap().run(&mut conversation).await.unwrap();
    assert_eq!(done.metadata.attempts, 2);
    let feedback = server.requests()[1].json()["messages"].as_array().unwrap().last().unwrap()["content"].to_string();
    assert!(feedback.contains("cut off at the output token limit"), "{feedback}");
}

/// The `OutputDelta`s of a streamed run and its output.
async fn streamed_deltas(agent: &Agent<Report>) -> (Vec<Value>, Report) {
    let mut conversation = question();
    let mut stream = agent.run_stream(&mut conversation);
    let mut deltas = Vec::new();
    while let Some(event) = stream.next().await {
        if let Event::OutputDelta { attempt: 1, partial } = event {
            deltas.push(partial);
        }
    }
    (deltas, stream.output().await.unwrap().output)
}

#[tokio::test]
async fn the_output_streams_as_it_forms_in_every_mode() {
    for (api, mode) in [
        (Api::Chat, OutputMode::Native),
        (Api::Anthropic, OutputMode::Native),
        (Api::Ollama, OutputMode::Prompted),
        (Api::Gemini, OutputMode::Native),
    ] {
        let server = TestServer::respond_with(fake(api, tool_then_answer())).await;
        let model: Box<dyn Model> = match api {
            Api::Chat => Box::new(OpenAi::builder().api_key("k").base_url(server.url()).build().unwrap()),
            Api::Anthropic => Box::new(Anthropic::builder().api_key("k").base_url(server.url()).build().unwrap()),
            Api::Gemini => Box::new(gemini("gemini-3-flash-preview", &server)),
            _ => Box::new(Ollama::builder().base_url(server.url()).build().unwrap()),
        };
        let (deltas, output) = streamed_deltas(&agent(model, mode).unwrap()).await;
        assert!(deltas.len() > 3, "{api:?}: the answer arrives in pieces: {deltas:?}");
        assert!(deltas.iter().any(|partial| partial.get("largest").is_some_and(|l| l != "Paris")), "{deltas:?}");
        assert_eq!(deltas.last().unwrap(), &json!({"largest": "Paris", "confidence": 4, "note": null}));
        assert_eq!(output.largest, "Paris");
        let streamed = |request: &RecordedRequest| match api {
            // Gemini streams through its own method, not a body field.
            Api::Gemini => request.path.contains(":streamGenerateContent?alt=sse"),
            _ => request.json()["stream"] == json!(true),
        };
        assert!(server.requests().iter().all(streamed), "{api:?}");
    }
    // Tool mode: from the output tool's arguments.
    let server = TestServer::respond_with(fake(
        Api::Chat,
        vec![Turn::Call("c1", "final_output", json!({"largest": "Paris", "confidence": 4, "note": "a long note"}))],
    ))
    .await;
    let model = OpenAi::builder().api_key("k").base_url(server.url()).build().unwrap();
    let (deltas, _) = streamed_deltas(&agent(model, OutputMode::Tool).unwrap()).await;
    assert!(deltas.len() > 3, "{deltas:?}");
    assert_eq!(deltas.last().unwrap()["note"], json!("a long note"));
}

#[tokio::test]
async fn the_fakes_reject_what_the_apis_reject() {
    use toolloop_workspace::output_rules::check;
    // A strict schema with an open object, sent as it is: OpenAI's 400.
    let server = TestServer::respond_with(fake(Api::Chat, vec![Turn::answer("{}")])).await;
    let model = OpenAi::builder().api_key("k").base_url(server.url()).build().unwrap();
    let mut schema = ResponseSchema::new("report", json!({"type": "object", "properties": {"a": {"type": "string"}}}));
    schema.strict_schema = Some(json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}));
    let history = [toolloop::Message::user("hi")];
    let error = model.complete(ModelRequest::new(&history).with_response_schema(&schema)).await.unwrap_err();
    assert_eq!(error.status(), Some(400));
    assert!(error.to_string().contains("'additionalProperties' is required to be supplied and to be false"), "{error}");
    // The same schema made strict by the crate passes.
    let strict = ResponseSchema::new("report", json!({"type": "object", "properties": {"a": {"type": "string"}}}));
    assert!(model.complete(ModelRequest::new(&history).with_response_schema(&strict)).await.is_ok());

    let missing = json!({"response_format": {"type": "json_schema", "json_schema": {"name": "r", "strict": true,
        "schema": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "required": ["a"], "additionalProperties": false}}}});
    assert!(check(Api::Chat, &missing).unwrap_err().message().contains("Missing 'b'"));
    let bad_name =
        json!({"text": {"format": {"type": "json_schema", "name": "my report", "schema": {"type": "object"}}}});
    assert!(check(Api::Responses, &bad_name).unwrap_err().message().contains("text.format.name"));
    let bounds = json!({"model": "claude-sonnet-4-5", "output_config": {"format": {"type": "json_schema",
        "schema": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}, "additionalProperties": false}}}});
    assert!(check(Api::Anthropic, &bounds).unwrap_err().message().contains("'minimum' is not supported"));
    let old = json!({"model": "claude-3-7-sonnet-latest", "output_config": {"format": {"type": "json_schema", "schema": {"type": "object", "additionalProperties": false}}}});
    assert!(check(Api::Anthropic, &old).unwrap_err().message().contains("does not support structured outputs"));

    // Gemini: the JSON MIME type is required, one schema field only, lone `$ref`s,
    // and before Gemini 3 no JSON answer beside function declarations.
    let contents = json!([{"role": "user", "parts": [{"text": "hi"}]}]);
    let no_mime = json!({"contents": contents, "generationConfig": {"responseJsonSchema": {"type": "object"}}});
    assert!(check(Api::Gemini, &no_mime).unwrap_err().message().contains("application/json"));
    let both = json!({"contents": contents, "generationConfig": {"responseMimeType": "application/json",
        "responseJsonSchema": {"type": "object"}, "responseSchema": {"type": "OBJECT"}}});
    assert!(check(Api::Gemini, &both).unwrap_err().message().contains("cannot both be set"));
    let beside_ref = json!({"contents": contents, "generationConfig": {"responseMimeType": "application/json",
        "responseJsonSchema": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A", "description": "An A."}},
            "$defs": {"A": {"type": "string"}}}}});
    assert!(
        check(Api::Gemini, &beside_ref).unwrap_err().message().contains("`description` cannot be set beside `$ref`")
    );
    let with_functions = json!({"contents": contents, "tools": [{"functionDeclarations": [{"name": "t", "description": ""}]}],
        "generationConfig": {"responseMimeType": "application/json", "responseJsonSchema": {"type": "object"}}});
    assert!(check(Api::Gemini, &with_functions).is_ok(), "Gemini 3 combines them");
    let old = toolloop_workspace::gemini_rules::GeminiRules::new().check("gemini-2.5-pro", &with_functions);
    assert_eq!(
        old.unwrap_err().message(),
        "Function calling with a response mime type: 'application/json' is unsupported"
    );
    // A schema written by hand with a documented reference is sent so that it passes.
    let server = TestServer::respond_with(fake(Api::Gemini, vec![Turn::answer(r#"{"from": "Paris"}"#)])).await;
    let schema = ResponseSchema::new(
        "trip",
        json!({"type": "object", "properties": {"from": {"$ref": "#/$defs/City", "description": "Where from."}},
            "$defs": {"City": {"type": "string"}}}),
    );
    let model = gemini("gemini-2.5-flash", &server);
    let answer = model.complete(ModelRequest::new(&history).with_response_schema(&schema)).await.unwrap();
    assert_eq!(answer.text(), r#"{"from": "Paris"}"#);
    let sent = &server.requests()[0].json()["generationConfig"]["responseJsonSchema"];
    assert_eq!(sent["properties"]["from"], json!({"description": "Where from.", "anyOf": [{"$ref": "#/$defs/City"}]}));
}
