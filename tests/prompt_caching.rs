//! Prompt caching against a local server that implements Anthropic's caching
//! rules and bills accordingly (`tests/support/anthropic_cache.rs`): a
//! 10-call tool loop with a ~2,000-token system prompt and ~300-token tool
//! results reads at least 80% of its prompt tokens from the cache from the
//! second call on, with the default settings; never more than four
//! breakpoints reach the server; turning caching off bills every token as
//! input. `cargo test --test prompt_caching -- --nocapture` prints the table
//! kept in BENCHMARKS.md.

#![allow(clippy::unused_async)] // tool handlers are async by contract

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use toolloop::model::{CacheTtl, PromptCache};
use toolloop::providers::RetryPolicy;
use toolloop::providers::anthropic::Anthropic;
use toolloop::run::RunMetadata;
use toolloop::{Agent, Conversation};
use toolloop_workspace::TestServer;
use toolloop_workspace::anthropic_cache::{AnthropicCache, Billed};

/// Looks a record up.
#[derive(toolloop::Tool)]
struct Lookup {
    /// The record's key.
    key: String,
}

impl Lookup {
    async fn run(self) -> Result<String, String> {
        // About 300 tokens (1,200 bytes).
        Ok(format!("record {}: {}", self.key, "field=value; ".repeat(92)))
    }
}

const CALLS: usize = 10;

/// Serves a loop of `CALLS` model calls: a lookup per call, then an answer.
async fn run(cache: PromptCache) -> (Vec<Billed>, RunMetadata) {
    let fake = Arc::new(Mutex::new(AnthropicCache::default()));
    let billing = Arc::clone(&fake);
    let mut calls = 0;
    let server = TestServer::respond_with(move |request| {
        calls += 1;
        let mut cache = billing.lock().unwrap();
        // Tools run in milliseconds; thirty seconds between calls is generous.
        cache.advance(Duration::from_secs(30));
        if calls < CALLS {
            let content = json!([{"type": "tool_use", "id": format!("toolu_{calls}"), "name": "lookup", "input": {"key": format!("k{calls}")}}]);
            cache.respond(request, &content, "tool_use")
        } else {
            cache.respond(request, &json!([{"type": "text", "text": "done"}]), "end_turn")
        }
    })
    .await;
    let model = Anthropic::builder()
        .api_key("k")
        .base_url(server.url())
        .retry_policy(RetryPolicy::none())
        .prompt_cache(cache)
        .build()
        .unwrap();
    // About 2,000 tokens.
    let system = format!("You are a records assistant. {}", "Follow the house rules for every answer. ".repeat(195));
    let agent = Agent::builder().model(model).system(system).tool::<Lookup>().max_iterations(20).build().unwrap();
    let mut conversation = Conversation::new();
    conversation.push_user("Look up ten records and summarise them.");
    let done = agent.run(&mut conversation).await.unwrap();
    assert_eq!(done.output, "done");
    let bills = fake.lock().unwrap().bills.clone();
    assert_eq!(bills.len(), CALLS);
    (bills, done.metadata)
}

fn sum(bills: &[Billed]) -> Billed {
    bills.iter().fold(Billed::default(), |a, b| Billed {
        input: a.input + b.input,
        cache_read: a.cache_read + b.cache_read,
        cache_write: a.cache_write + b.cache_write,
        cache_write_1h: a.cache_write_1h + b.cache_write_1h,
    })
}

#[allow(clippy::cast_precision_loss)]
fn share(billed: Billed) -> f64 {
    billed.cache_read as f64 / billed.prompt() as f64
}

#[tokio::test]
async fn the_default_reads_most_of_a_tool_loop_from_the_cache() {
    let (bills, metadata) = run(PromptCache::default()).await;
    let later = sum(&bills[1..]);
    assert!(share(later) >= 0.8, "cache-read share from the second call: {:.3}; {bills:?}", share(later));
    // The first call writes the system prompt and tools; every later call
    // reads them and the conversation up to the previous call.
    assert_eq!(bills[0].cache_read, 0);
    assert!(bills[0].cache_write >= 2000, "{:?}", bills[0]);
    assert!(bills[1..].iter().all(|bill| bill.cache_read >= bills[0].cache_write));
    // The run reports what the server billed.
    let total = sum(&bills);
    assert_eq!(metadata.usage.cache_read_tokens, total.cache_read);
    assert_eq!(metadata.usage.cache_write_tokens, total.cache_write);
    assert_eq!(metadata.usage.input_tokens, total.input);
    assert!((metadata.cache_hit_share().unwrap() - share(total)).abs() < 1e-9);
}

#[tokio::test]
async fn caching_off_bills_every_prompt_token_as_input() {
    let (bills, metadata) = run(PromptCache::off()).await;
    assert!(bills.iter().all(|bill| bill.cache_read == 0 && bill.cache_write == 0));
    assert_eq!(metadata.cache_hit_share(), Some(0.0));
}

#[tokio::test]
async fn a_one_hour_prefix_is_written_once_at_the_one_hour_price() {
    let (bills, _) = run(PromptCache::auto().prefix_ttl(CacheTtl::Extended)).await;
    assert!(bills[0].cache_write_1h >= 2000, "{:?}", bills[0]);
    assert!(bills[1..].iter().all(|bill| bill.cache_write_1h == 0), "{bills:?}");
    assert!(share(sum(&bills[1..])) >= 0.8);
}

/// Reads a short record.
#[derive(toolloop::Tool)]
struct Record {
    /// The record's key.
    key: String,
}

impl Record {
    async fn run(self) -> Result<String, String> {
        // About 50 tokens (200 bytes).
        Ok(format!("record {}: {}", self.key, "field=value; ".repeat(14)))
    }
}

/// A loop of `CALLS` model calls each asking for `parallel` records at once
/// (the last answers), billed by the caching fake; the bills and the bodies.
async fn run_wide(parallel: usize) -> (Vec<Billed>, Vec<serde_json::Value>) {
    let fake = Arc::new(Mutex::new(AnthropicCache::default()));
    let billing = Arc::clone(&fake);
    let mut calls = 0;
    let server = TestServer::respond_with(move |request| {
        calls += 1;
        let mut cache = billing.lock().unwrap();
        cache.advance(Duration::from_secs(30));
        if calls < CALLS {
            let content: Vec<Value> = (0..parallel)
                .map(|n| json!({"type": "tool_use", "id": format!("toolu_{calls}_{n}"), "name": "record", "input": {"key": format!("k{calls}.{n}")}}))
                .collect();
            cache.respond(request, &Value::Array(content), "tool_use")
        } else {
            cache.respond(request, &json!([{"type": "text", "text": "done"}]), "end_turn")
        }
    })
    .await;
    let model =
        Anthropic::builder().api_key("k").base_url(server.url()).retry_policy(RetryPolicy::none()).build().unwrap();
    let system = format!("You are a records assistant. {}", "Follow the house rules for every answer. ".repeat(195));
    let agent = Agent::builder().model(model).system(system).tool::<Record>().max_iterations(20).build().unwrap();
    let mut conversation = Conversation::new();
    conversation.push_user("Read every record and summarise them.");
    assert_eq!(agent.run(&mut conversation).await.unwrap().output, "done");
    let bills = fake.lock().unwrap().bills.clone();
    assert_eq!(bills.len(), CALLS);
    (bills, server.requests().iter().map(toolloop_workspace::RecordedRequest::json).collect())
}

/// Iterations of 12 parallel tool calls add 24 blocks, more than the 20 the
/// API looks back from a breakpoint: a second moving mark, where the
/// previous call had its last one, reads everything the previous call sent.
#[tokio::test]
async fn wide_iterations_still_read_the_whole_previous_call_from_the_cache() {
    let (bills, bodies) = run_wide(12).await;
    let later = sum(&bills[1..]);
    let total = sum(&bills);
    println!(
        "12 parallel calls per iteration: read share (calls 2-10) {:.1}%, price-weighted input {:.0} of {} prompt tokens",
        100.0 * share(later),
        total.weighted(),
        total.prompt()
    );
    for (call, pair) in bills.windows(2).enumerate() {
        assert_eq!(pair[1].cache_read, pair[0].prompt(), "call {}: {bills:?}", call + 2);
    }
    assert!(share(later) >= 0.8, "cache-read share from the second call: {:.3}; {bills:?}", share(later));
    for (call, body) in bodies.iter().enumerate() {
        let marks = body.to_string().matches("cache_control").count();
        assert_eq!(marks, if call == 0 { 2 } else { 3 }, "call {}", call + 1);
    }
}

/// OpenAI caches on its own; the Responses API reports the cached part of
/// the input (`input_tokens_details.cached_tokens`, counted inside
/// `input_tokens`) and the reasoning part of the output
/// (`output_tokens_details.reasoning_tokens`, inside `output_tokens`).
#[tokio::test]
async fn responses_usage_reports_cached_and_reasoning_tokens_per_call_and_summed() {
    let answer = |output: Value, cached: u64| {
        toolloop_workspace::Reply::json(
            200,
            &json!({
                "id": format!("resp_{cached}"), "object": "response", "status": "completed", "model": "gpt-5.1",
                "output": output,
                "usage": {
                    "input_tokens": 2400, "input_tokens_details": {"cached_tokens": cached},
                    "output_tokens": 300, "output_tokens_details": {"reasoning_tokens": 256},
                    "total_tokens": 2700
                }
            }),
        )
    };
    let call =
        json!([{"type": "function_call", "call_id": "call_1", "name": "lookup", "arguments": "{\"key\":\"k1\"}"}]);
    let text = json!([{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}]);
    let server = TestServer::start([answer(call, 0), answer(text, 2048)]).await;
    let model = toolloop::providers::openai::OpenAi::responses()
        .api_key("k")
        .base_url(server.url())
        .prompt_cache_key("records-v1")
        .retry_policy(RetryPolicy::none())
        .build()
        .unwrap();
    let agent = Agent::builder().model(model).system("Records.").tool::<Lookup>().build().unwrap();
    let mut conversation = Conversation::new();
    conversation.push_user("Look up k1.");
    let done = agent.run(&mut conversation).await.unwrap();
    assert_eq!(done.output, "done");
    let usage = done.metadata.usage;
    // Cached tokens are cache reads, taken out of the input; reasoning stays part of the output.
    assert_eq!(
        (usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens),
        (2400 + (2400 - 2048), 2048, 0)
    );
    assert_eq!((usage.output_tokens, usage.reasoning_tokens), (600, 512));
    assert!((done.metadata.cache_hit_share().unwrap() - 2048.0 / 4800.0).abs() < 1e-9);
    let requests = server.requests();
    assert!(requests.iter().all(|request| request.json()["prompt_cache_key"] == "records-v1"));
}

/// The billed-token table of BENCHMARKS.md.
#[tokio::test]
async fn billed_tokens_table() {
    println!(
        "| setting | prompt tokens | input | cache reads | cache writes | read share (calls 2-10) | price-weighted input |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let mut weighted = Vec::new();
    for (name, cache) in [
        ("caching off", PromptCache::off()),
        ("default (5m prefix + moving 5m)", PromptCache::default()),
        ("1h prefix + moving 5m", PromptCache::auto().prefix_ttl(CacheTtl::Extended)),
        ("prefix only", PromptCache::prefix_only(CacheTtl::Standard)),
    ] {
        let (bills, _) = run(cache).await;
        let total = sum(&bills);
        weighted.push(total.weighted());
        println!(
            "| {name} | {} | {} | {} | {} | {:.1}% | {:.0} ({:.1}%) |",
            total.prompt(),
            total.input,
            total.cache_read,
            total.cache_write,
            100.0 * share(sum(&bills[1..])),
            total.weighted(),
            100.0 * total.weighted() / weighted[0],
        );
    }
    assert!(weighted[1] < weighted[0] * 0.4, "{weighted:?}");
}

/// The fake enforces the rules the defaults are designed around.
mod fake_rules {
    use std::time::Duration;

    use serde_json::{Value, json};
    use toolloop_workspace::RecordedRequest;
    use toolloop_workspace::anthropic_cache::{AnthropicCache, LOOKBACK_BLOCKS, MAX_BREAKPOINTS};

    fn request(body: &Value) -> RecordedRequest {
        RecordedRequest {
            method: "POST".into(),
            path: "/v1/messages".into(),
            headers: Vec::new(),
            body: serde_json::to_vec(body).unwrap(),
        }
    }

    /// `blocks` user text blocks of about 100 tokens each, the ones in `marks` marked.
    fn body(blocks: usize, marks: &[(usize, Option<&str>)]) -> Value {
        let content: Vec<Value> = (0..blocks)
            .map(|index| {
                let mut block = json!({"type": "text", "text": format!("{index:04} {}", "x".repeat(390))});
                if let Some((_, ttl)) = marks.iter().find(|(at, _)| *at == index) {
                    block["cache_control"] = match ttl {
                        Some(ttl) => json!({"type": "ephemeral", "ttl": ttl}),
                        None => json!({"type": "ephemeral"}),
                    };
                }
                block
            })
            .collect();
        json!({"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": content}]})
    }

    #[test]
    fn more_than_four_breakpoints_and_a_long_ttl_after_a_short_one_are_rejected() {
        let mut cache = AnthropicCache::default();
        let marks: Vec<(usize, Option<&str>)> = (0..=MAX_BREAKPOINTS).map(|at| (at, None)).collect();
        assert!(cache.bill(&request(&body(12, &marks))).is_err());
        assert!(cache.bill(&request(&body(12, &marks[..MAX_BREAKPOINTS]))).is_ok());
        assert!(cache.bill(&request(&body(12, &[(2, Some("5m")), (11, Some("1h"))]))).is_err());
        assert!(cache.bill(&request(&body(12, &[(2, Some("1h")), (11, Some("5m"))]))).is_ok());
    }

    #[test]
    fn short_prefixes_are_not_cached() {
        let mut cache = AnthropicCache::default();
        let short = cache.bill(&request(&body(5, &[(4, None)]))).unwrap();
        assert_eq!(short.cache_write, 0);
        let long = cache.bill(&request(&body(12, &[(11, None)]))).unwrap();
        assert!(long.cache_write >= 1024);
    }

    #[test]
    fn reads_look_back_twenty_blocks_and_entries_expire() {
        let mut cache = AnthropicCache::default();
        cache.bill(&request(&body(12, &[(11, None)]))).unwrap();
        let within = cache.bill(&request(&body(12 + LOOKBACK_BLOCKS, &[(11 + LOOKBACK_BLOCKS, None)]))).unwrap();
        assert!(within.cache_read > 0);
        let mut fresh = AnthropicCache::default();
        fresh.bill(&request(&body(12, &[(11, None)]))).unwrap();
        let beyond = fresh.bill(&request(&body(13 + LOOKBACK_BLOCKS, &[(12 + LOOKBACK_BLOCKS, None)]))).unwrap();
        assert_eq!(beyond.cache_read, 0);
        let mut expiring = AnthropicCache::default();
        expiring.bill(&request(&body(12, &[(11, None)]))).unwrap();
        expiring.advance(Duration::from_secs(301));
        assert_eq!(expiring.bill(&request(&body(12, &[(11, None)]))).unwrap().cache_read, 0);
    }
}
