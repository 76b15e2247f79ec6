//! Streaming overhead benchmark: toolloop's `Model::stream` against a bare
//! `reqwest` + SSE-parsing loop, both reading the same streamed answers
//! (text deltas, a tool call's argument deltas, usage) from a stub server
//! running in a child process.
//!
//! Run: `cargo bench -p toolloop --bench stream_overhead` (see BENCHMARKS.md).

#![allow(clippy::cast_precision_loss)] // reports print counts as floats

mod bare;
mod framework;
#[path = "../loop_overhead/measure.rs"]
#[allow(dead_code)] // the memory and stamp helpers serve the other bench
mod measure;
mod run_partial;
mod stub;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use stub::Mix;

/// A stub server in a child process, killed on drop.
struct StubServer {
    child: Child,
    address: String,
}

impl StubServer {
    fn start() -> Self {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .arg("--serve")
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the stub server");
        let mut port = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut port).unwrap();
        Self { child, address: format!("http://127.0.0.1:{}", port.trim()) }
    }

    /// The base URL that makes the stub stream `mix` at `pace_ms` per event.
    fn base(&self, mix: Mix, pace_ms: u64) -> String {
        format!("{}/{}/{}/{pace_ms}", self.address, mix.texts, mix.arguments)
    }
}

impl Drop for StubServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Loop {
    Bare,
    Toolloop,
}

/// One client, set up before anything is measured.
enum Client {
    Bare { client: reqwest::Client, url: String, anthropic: bool },
    Toolloop(Box<dyn toolloop::Model>),
}

impl Client {
    fn new(kind: Loop, base: &str, anthropic: bool) -> Self {
        match kind {
            Loop::Bare => Self::Bare {
                client: reqwest::Client::builder().no_proxy().build().unwrap(),
                url: if anthropic { format!("{base}/v1/messages") } else { format!("{base}/v1/chat/completions") },
                anthropic,
            },
            Loop::Toolloop => Self::Toolloop(framework::model(base, anthropic)),
        }
    }

    /// One streamed call; returns the time from the body's first byte to
    /// the first text delta in the client's hands (see `stub`).
    async fn call(&self) -> Duration {
        let mut first_text = None;
        let mut on_text = |text: &str| {
            if first_text.is_none() {
                let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos();
                let sent = stub::stamp_of(text).expect("the first text delta carries the stub's stamp");
                first_text = Some(Duration::from_nanos(u64::try_from(now.saturating_sub(sent)).unwrap()));
            }
        };
        match self {
            Self::Bare { client, url, anthropic } => {
                let answer = bare::stream_call(client, url, *anthropic, &mut on_text).await;
                assert!(answer.call.is_some() && answer.output_tokens > 0 && !answer.stop_reason.is_empty());
            }
            Self::Toolloop(model) => {
                let response = framework::stream_call(model.as_ref(), &mut on_text).await;
                assert!(response.tool_calls().next().is_some() && response.usage.output_tokens > 0);
            }
        }
        first_text.expect("the answer has text")
    }
}

/// What `calls` sequential calls cost the client, after one warm-up call.
struct Measured {
    cpu_per_call: Duration,
    /// Body's first byte to first text event, one per call, sorted.
    first_text: Vec<Duration>,
}

fn measure(kind: Loop, base: &str, anthropic: bool, calls: usize) -> Measured {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let client = Client::new(kind, base, anthropic);
        client.call().await;
        let started = measure::cpu_time();
        let mut first_text = Vec::with_capacity(calls);
        for _ in 0..calls {
            first_text.push(client.call().await);
        }
        let cpu_per_call = measure::cpu_time().saturating_sub(started) / u32::try_from(calls).unwrap();
        first_text.sort();
        Measured { cpu_per_call, first_text }
    })
}

fn main() {
    // The bare client needs the process default crypto provider (the stub
    // is plain HTTP, but reqwest asks anyway); toolloop's carry their own.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--serve") {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        runtime.block_on(stub::serve()).unwrap();
        return;
    }
    if let Some(position) = args.iter().position(|a| a == "--sequential") {
        // For valgrind and profilers (see stream_instructions.sh):
        // `<bench binary> --sequential toolloop anthropic TEXTS ARGUMENTS PACE_MS CALLS`.
        let arg = |i: usize| args[position + i].as_str();
        let kind = match arg(1) {
            "bare" => Loop::Bare,
            "toolloop" => Loop::Toolloop,
            other => panic!("unknown loop {other}"),
        };
        let anthropic = arg(2) == "anthropic";
        let mix = Mix { texts: arg(3).parse().unwrap(), arguments: arg(4).parse().unwrap() };
        let server = StubServer::start();
        let measured = measure(kind, &server.base(mix, arg(5).parse().unwrap()), anthropic, arg(6).parse().unwrap());
        println!("{kind:?}: {:.1} µs per streamed call", micros(measured.cpu_per_call));
        return;
    }
    let quick = args.iter().any(|a| a == "--quick");
    if args.iter().any(|a| a == "--run") {
        run_table(quick);
        return;
    }
    let server = StubServer::start();
    let mix = Mix { texts: 100, arguments: 40 };

    let calls = if quick { 20 } else { 200 };
    println!(
        "## Client CPU per streamed call, whole body at once ({} text deltas + {} argument deltas; best of 3 x {calls} calls)\n",
        mix.texts, mix.arguments
    );
    cpu_table(&server, mix, 0, calls);

    let calls = if quick { 5 } else { 30 };
    println!("\n## The same, one event per millisecond (as a model writes them; best of 3 x {calls} calls)\n");
    let first_text = cpu_table(&server, mix, 1, calls);

    println!("\n## Body's first byte to the first text event (paced, {} calls each, µs)\n", 3 * calls);
    println!("| format | bare median | toolloop median | bare p90 | toolloop p90 |");
    println!("|---|---|---|---|---|");
    for (format, bare, framework) in first_text {
        let at = |times: &[Duration], percent: usize| micros(times[(times.len() - 1) * percent / 100]);
        println!(
            "| {format} | {:.0} | {:.0} | {:.0} | {:.0} |",
            at(&bare, 50),
            at(&framework, 50),
            at(&bare, 90),
            at(&framework, 90)
        );
    }
    println!();
    run_table(quick);
}

/// A streamed run against the same run not streamed, as a tool call's
/// arguments grow (`<bench binary> --run` alone).
fn run_table(quick: bool) {
    println!("## A run with one tool call of growing arguments, streamed or not (scripted model, 8-byte deltas)\n");
    println!("| arguments | argument deltas | `run` | `run_stream` | added per argument delta |");
    println!("|---|---|---|---|---|");
    for bytes in [256, 1024, 4096, 16_384] {
        let runs = if quick { 5 } else { (200_000 / bytes).max(20) };
        let (mut plain, mut streamed, mut deltas) = (Duration::MAX, Duration::MAX, 0);
        for _ in 0..3 {
            plain = plain.min(run_partial::cpu_per_run(bytes, false, runs).0);
            let (cpu, count) = run_partial::cpu_per_run(bytes, true, runs);
            streamed = streamed.min(cpu);
            deltas = count;
        }
        println!(
            "| {bytes} B | {deltas} | {:.1} µs | {:.1} µs | {:.2} µs |",
            micros(plain),
            micros(streamed),
            micros(streamed.saturating_sub(plain)) / deltas as f64
        );
    }
}

/// Prints one CPU table row per format (interleaved rounds, best of each,
/// so that noise from the other core hits both loops alike); returns the
/// first-text times of every round.
fn cpu_table(
    server: &StubServer,
    mix: Mix,
    pace_ms: u64,
    calls: usize,
) -> Vec<(&'static str, Vec<Duration>, Vec<Duration>)> {
    println!(
        "| format | events per call | bare loop per call | toolloop per call | bare per event | toolloop per event | ratio |"
    );
    println!("|---|---|---|---|---|---|---|");
    let mut first_text = Vec::new();
    for (format, anthropic) in [("Anthropic", true), ("OpenAI Chat", false)] {
        let url = server.base(mix, pace_ms);
        let (mut bare, mut framework) = (Duration::MAX, Duration::MAX);
        let (mut bare_first, mut framework_first) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            let measured = measure(Loop::Bare, &url, anthropic, calls);
            bare = bare.min(measured.cpu_per_call);
            bare_first.extend(measured.first_text);
            let measured = measure(Loop::Toolloop, &url, anthropic, calls);
            framework = framework.min(measured.cpu_per_call);
            framework_first.extend(measured.first_text);
        }
        let events = mix.events(anthropic);
        println!(
            "| {format} | {events} | {:.1} µs | {:.1} µs | {:.2} µs | {:.2} µs | {:.2}x |",
            micros(bare),
            micros(framework),
            micros(bare) / events as f64,
            micros(framework) / events as f64,
            framework.as_secs_f64() / bare.as_secs_f64()
        );
        bare_first.sort();
        framework_first.sort();
        first_text.push((format, bare_first, framework_first));
    }
    first_text
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}
