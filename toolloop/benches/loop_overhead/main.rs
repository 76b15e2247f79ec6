//! Loop overhead benchmark: toolloop against a bare `reqwest` + `serde_json` loop,
//! both driving the same scripted conversations served by a stub LLM server
//! running in a child process.
//!
//! Run: `cargo bench -p toolloop --bench loop_overhead` (see BENCHMARKS.md).

#![allow(clippy::cast_precision_loss)] // reports print counts as floats

mod bare;
mod framework;
mod measure;
mod stub;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A stub server in a child process, killed on drop.
struct StubServer {
    child: Child,
    base: String,
}

impl StubServer {
    fn start(iterations: usize) -> Self {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--serve", &iterations.to_string()])
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the stub server");
        let mut port = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut port).unwrap();
        Self { child, base: format!("http://127.0.0.1:{}", port.trim()) }
    }
}

impl Drop for StubServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Clone, Copy, Debug)]
enum Format {
    OpenAi,
    Responses,
    Anthropic,
    Gemini,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Loop {
    Bare,
    Toolloop,
}

/// One loop, set up (client or agent built) before anything is measured.
#[derive(Clone)]
enum Driver {
    Bare { client: reqwest::Client, format: Format, base: String },
    Toolloop(Box<toolloop::Agent>),
}

impl Driver {
    fn new(kind: Loop, format: Format, base: &str, iterations: usize) -> Self {
        match kind {
            Loop::Bare => Self::Bare {
                client: reqwest::Client::builder().no_proxy().build().unwrap(),
                format,
                base: base.to_owned(),
            },
            Loop::Toolloop => {
                Self::Toolloop(Box::new(framework::agent(format, base, u32::try_from(iterations).unwrap())))
            }
        }
    }

    /// Runs one conversation; returns its model calls.
    async fn conversation(&self) -> usize {
        match self {
            Self::Bare { client, format: Format::OpenAi, base } => bare::openai_conversation(client, base).await,
            Self::Bare { client, format: Format::Anthropic, base } => bare::anthropic_conversation(client, base).await,
            Self::Bare { client, format: Format::Responses, base } => bare::responses_conversation(client, base).await,
            Self::Bare { client, format: Format::Gemini, base } => bare::gemini_conversation(client, base).await,
            Self::Toolloop(agent) => framework::conversation(agent).await,
        }
    }
}

/// Client CPU per model call over `conversations` sequential conversations,
/// after one warm-up conversation (start-up subtracted).
fn cpu_per_call(kind: Loop, format: Format, server: &StubServer, conversations: usize) -> Duration {
    cpu_per_call_at(kind, format, server, conversations, 50)
}

/// [`cpu_per_call`] for conversations of `iterations` iterations.
fn cpu_per_call_at(
    kind: Loop,
    format: Format,
    server: &StubServer,
    conversations: usize,
    iterations: usize,
) -> Duration {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let driver = Driver::new(kind, format, &server.base, iterations);
        driver.conversation().await;
        let started = measure::cpu_time();
        let mut calls = 0;
        for _ in 0..conversations {
            calls += driver.conversation().await;
        }
        measure::cpu_time().saturating_sub(started) / u32::try_from(calls).unwrap()
    })
}

fn main() {
    // toolloop's clients carry their own TLS provider; the bare client needs
    // the process default (the stub is plain HTTP, but reqwest asks anyway).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let args: Vec<String> = std::env::args().collect();
    if let Some(position) = args.iter().position(|a| a == "--serve") {
        let iterations = args[position + 1].parse().unwrap();
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        runtime.block_on(stub::serve(iterations)).unwrap();
        return;
    }
    if let Some(position) = args.iter().position(|a| a == "--concurrent") {
        let driver = match args[position + 1].as_str() {
            "bare" => Loop::Bare,
            "toolloop" => Loop::Toolloop,
            other => panic!("unknown loop {other}"),
        };
        let agents = args[position + 2].parse().unwrap();
        let server = StubServer::start(10);
        let report = concurrent(driver, Format::OpenAi, &server, agents);
        println!(
            "| {driver:?} | {:.2} s | {:.0} | {:.1} MiB | {:.1} KiB |",
            report.wall.as_secs_f64(),
            report.calls as f64 / report.wall.as_secs_f64(),
            report.peak_memory as f64 / (1024.0 * 1024.0),
            report.memory_per_conversation as f64 / 1024.0,
        );
        return;
    }
    if let Some(position) = args.iter().position(|a| a == "--sequential") {
        // For profilers: `perf record -- <bench binary> --sequential toolloop 200 [iterations [format]]`,
        // format `openai` (the default), `responses`, `anthropic` or `gemini`.
        let driver = match args[position + 1].as_str() {
            "bare" => Loop::Bare,
            "toolloop" => Loop::Toolloop,
            other => panic!("unknown loop {other}"),
        };
        let conversations = args[position + 2].parse().unwrap();
        let iterations = args.get(position + 3).map_or(50, |n| n.parse().unwrap());
        let server = StubServer::start(iterations);
        let format = match args.get(position + 4).map(String::as_str) {
            None | Some("openai") => Format::OpenAi,
            Some("responses") => Format::Responses,
            Some("anthropic") => Format::Anthropic,
            Some("gemini") => Format::Gemini,
            Some(other) => panic!("unknown format {other}"),
        };
        let per_call = cpu_per_call_at(driver, format, &server, conversations, iterations);
        println!("{driver:?}: {:.1} µs per model call", micros(per_call));
        return;
    }
    if let Some(position) = args.iter().position(|a| a == "--growth") {
        // Section 2 alone, with more repeats: `<bench binary> --growth 20`.
        growth(args[position + 1].parse().unwrap());
        return;
    }
    let quick = args.iter().any(|a| a == "--quick");
    let conversations = if quick { 4 } else { 40 };

    println!("## 1. Client CPU per model call, 50-iteration conversations ({conversations} conversations)\n");
    println!("| format | bare loop | toolloop | ratio |");
    println!("|---|---|---|---|");
    let server = StubServer::start(50);
    for format in [Format::OpenAi, Format::Responses, Format::Anthropic] {
        // Interleaved rounds, best of each, so that noise from the other
        // core hits both loops alike.
        let mut bare = Duration::MAX;
        let mut framework = Duration::MAX;
        for _ in 0..3 {
            bare = bare.min(cpu_per_call(Loop::Bare, format, &server, conversations));
            framework = framework.min(cpu_per_call(Loop::Toolloop, format, &server, conversations));
        }
        println!(
            "| {format:?} | {:.1} µs | {:.1} µs | {:.2}x |",
            micros(bare),
            micros(framework),
            framework.as_secs_f64() / bare.as_secs_f64()
        );
    }
    drop(server);

    growth(if quick { 1 } else { 5 });

    let agents = if quick { 100 } else { 1_000 };
    println!("\n## 3. {agents} conversations at once, 10 iterations each, one tokio runtime\n");
    println!("| loop | wall time | model calls/s | peak memory | memory per conversation |");
    println!("|---|---|---|---|---|");
    for driver in ["bare", "toolloop"] {
        // A fresh process per loop kind, so each peak memory is its own.
        let output = Command::new(std::env::current_exe().unwrap())
            .args(["--concurrent", driver, &agents.to_string()])
            .output()
            .expect("run the concurrency scenario");
        print!("{}", String::from_utf8_lossy(&output.stdout));
    }

    definitions_once();
}

/// Per-call client CPU along one long conversation, at several depths.
fn growth(repeats: usize) {
    const LENGTH: usize = 201;
    const DEPTHS: [usize; 5] = [10, 50, 100, 150, 200];
    println!(
        "\n## 2. Client CPU per model call as one conversation grows ({repeats} x {LENGTH} iterations, OpenAI format)\n"
    );
    println!("| iteration | bare loop | toolloop | ratio |");
    println!("|---|---|---|---|");
    let server = StubServer::start(LENGTH);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut curves = Vec::new();
    for kind in [Loop::Bare, Loop::Toolloop] {
        let driver = Driver::new(kind, Format::OpenAi, &server.base, LENGTH + 10);
        let mut sums = vec![Duration::ZERO; LENGTH];
        runtime.block_on(async {
            driver.conversation().await;
            for _ in 0..repeats {
                measure::record_stamps();
                driver.conversation().await;
                for (sum, interval) in sums.iter_mut().zip(measure::take_intervals()) {
                    *sum += interval;
                }
            }
        });
        // Average over a window of 10 calls around each depth.
        let at = |depth: usize| {
            let window = &sums[depth.saturating_sub(5)..(depth + 5).min(LENGTH - 1)];
            window.iter().sum::<Duration>() / u32::try_from(window.len() * repeats).unwrap()
        };
        curves.push(DEPTHS.map(at));
    }
    for (i, depth) in DEPTHS.iter().enumerate() {
        let (bare, framework) = (curves[0][i], curves[1][i]);
        println!(
            "| {depth} | {:.1} µs | {:.1} µs | {:.2}x |",
            micros(bare),
            micros(framework),
            framework.as_secs_f64() / bare.as_secs_f64()
        );
    }
}

struct ConcurrencyReport {
    wall: Duration,
    calls: usize,
    peak_memory: u64,
    memory_per_conversation: u64,
}

/// Runs `agents` conversations at once. Each loop kind runs in a fresh
/// process (see `main`), so the peak memory is its own.
fn concurrent(kind: Loop, format: Format, server: &StubServer, agents: usize) -> ConcurrencyReport {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let driver = Driver::new(kind, format, &server.base, 10);
        driver.conversation().await;
        let baseline = measure::current_memory();
        let started = Instant::now();
        let tasks: Vec<_> = (0..agents)
            .map(|_| {
                let driver = driver.clone();
                tokio::spawn(async move { driver.conversation().await })
            })
            .collect();
        let mut calls = 0;
        for task in tasks {
            calls += task.await.unwrap();
        }
        let wall = started.elapsed();
        let peak_memory = measure::peak_memory();
        let memory_per_conversation = peak_memory.saturating_sub(baseline) / agents as u64;
        ConcurrencyReport { wall, calls, peak_memory, memory_per_conversation }
    })
}

/// Find documents; used only by the definition measurement, so that its
/// first `definition()` call really is the first.
#[derive(toolloop::Tool)]
struct Probe {
    /// Words to look for.
    query: String,
    /// How many results to return.
    limit: Option<u32>,
    /// Tags every result must have.
    tags: Vec<String>,
}

impl Probe {
    #[allow(clippy::unused_async)] // tool handlers are async by contract
    async fn run(self) -> Result<String, std::convert::Infallible> {
        Ok(format!("{} {:?} {:?}", self.query, self.limit, self.tags))
    }
}

/// Shows that a derived tool's definition (schema included) is built on the
/// first call only; later calls are a load of a `OnceLock`.
fn definitions_once() {
    use toolloop::Tool as _;
    println!("\n## 4. Derived definitions are built once per type\n");
    let started = Instant::now();
    let first = Probe::definition();
    let first_call = started.elapsed();
    let calls: u32 = 1_000_000;
    let started = Instant::now();
    for _ in 0..calls {
        assert!(std::ptr::eq(std::hint::black_box(Probe::definition()), first));
    }
    let later = started.elapsed() / calls;
    println!("| call | time |");
    println!("|---|---|");
    println!("| first `Probe::definition()` (builds the schema) | {:.1} µs |", micros(first_call));
    println!("| every later call (same `&'static`, {calls} calls) | {:.2} ns |", later.as_secs_f64() * 1e9);
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}
