//! Whole-process CPU and memory of a client running conversations against a
//! local stub, toolloop beside a bare hand-written loop, as a user comparing
//! clients measures them (see BENCHMARKS.md, "Whole-process cost").
//!
//! `cargo bench -p toolloop --bench whole_process` builds the release binary
//! and runs the whole comparison: this binary starts itself as the stub
//! server (`serve`) and as every client process (`client ...`), each client
//! in a fresh process that reports its own CPU time (user + system, every
//! thread, from exec to the end of `main`) and peak memory. A client's cost
//! is its CPU minus that of the same binary's start-up run (runtime, client
//! or agent, one warm-up conversation, no measured run), divided by the
//! model calls (or streamed events) of its measured runs. Options:
//!
//! - `--quick`: fewer calls per process and 3 repetitions (a smoke run).
//! - `--reps R`: repetitions (default 5); tables show medians, and the
//!   range of the paired ratios beside their median.
//! - `--calls N`: model calls per measured process (default 2,000;
//!   streamed runs a fifth of it): more shrink the start-up run's share.
//! - `--instructions`: each client under `valgrind --tool=callgrind`,
//!   counting instructions (load-independent), one repetition.
//! - `--plain` / `--streamed` / `--memory`: only that table.
//! - `client LOOP WIRE MODE CALLS RUNS IN_FLIGHT BASE`: one client process
//!   (`bare`|`toolloop`, `openai`|`anthropic`, `plain`|`streamed`), for
//!   profilers and outside timers; prints `cpu_ns peak_kib baseline_kib
//!   calls events`.
//! - `sizes`: the bytes of the futures every conversation in flight holds
//!   (a run's and the model call's it boxes, and the bare loop's), without
//!   running them.

#![allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)] // reports print counts as floats

mod bare;
mod framework;
mod stub;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("serve") => {
            let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
            runtime.block_on(stub::serve()).unwrap();
        }
        Some("client") => client(&args[1..]),
        Some("sizes") => sizes(),
        _ => compare(&args),
    }
}

/// One client process: start-up, one warm-up conversation, then `runs`
/// conversations of `calls` calls, `in_flight` at once; prints what it cost.
fn client(args: &[String]) {
    let [kind, wire, shape, calls, runs, in_flight, base] = args else {
        panic!("client LOOP WIRE MODE CALLS RUNS IN_FLIGHT BASE")
    };
    let anthropic = wire == "anthropic";
    let streamed = shape == "streamed";
    let calls: usize = calls.parse().unwrap();
    let runs: usize = runs.parse().unwrap();
    let in_flight: usize = in_flight.parse().unwrap();
    let base = format!("{base}/{calls}");
    // As `#[tokio::main]` builds it: one worker thread per core.
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let driver = Arc::new(match kind.as_str() {
        "bare" => {
            // reqwest on rustls needs a process-wide crypto provider (the
            // stub is plain HTTP, but reqwest asks); toolloop's carry their own.
            let _ = rustls::crypto::ring::default_provider().install_default();
            Driver::Bare { client: reqwest::Client::builder().no_proxy().build().unwrap(), base }
        }
        "toolloop" => Driver::Toolloop(Box::new(framework::agent(anthropic, &base, calls))),
        other => panic!("unknown loop {other}"),
    });
    let (made, events, baseline) = runtime.block_on(async {
        let (warm_calls, _) = driver.conversation(anthropic, streamed).await;
        assert_eq!(warm_calls, calls, "the stub answers after {calls} calls");
        let baseline = memory_kib("VmRSS:");
        let next = Arc::new(AtomicUsize::new(0));
        let tasks: Vec<_> = (0..in_flight.min(runs))
            .map(|_| {
                let (driver, next) = (Arc::clone(&driver), Arc::clone(&next));
                tokio::spawn(async move {
                    let (mut made, mut events) = (0, 0);
                    while next.fetch_add(1, Ordering::Relaxed) < runs {
                        let (calls, read) = driver.conversation(anthropic, streamed).await;
                        made += calls;
                        events += read;
                    }
                    (made, events)
                })
            })
            .collect();
        let (mut made, mut events) = (0, 0);
        for task in tasks {
            let (calls, read) = task.await.unwrap();
            made += calls;
            events += read;
        }
        (made, events, baseline)
    });
    assert_eq!(made, runs * calls);
    let cpu = cpu_time::ProcessTime::now().as_duration();
    println!("{} {} {baseline} {made} {events}", cpu.as_nanos(), memory_kib("VmHWM:"));
    // The connections the client opened (all still pooled): more than the
    // conversations in flight means a conversation opened a new one while
    // its last was on its way back to the pool.
    eprintln!("sockets open at the end: {}", open_sockets());
}

/// Prints the size of each loop's conversation future: what a task in
/// flight holds before anything it allocates.
fn sizes() {
    let base = "http://127.0.0.1:9/10";
    let _ = rustls::crypto::ring::default_provider().install_default();
    println!(
        "message {} bytes, content block {} bytes",
        std::mem::size_of::<toolloop::Message>(),
        std::mem::size_of::<toolloop::ContentBlock>()
    );
    for anthropic in [false, true] {
        let agent = framework::agent(anthropic, base, 10);
        let mut conversation = toolloop::Conversation::new();
        let run = std::mem::size_of_val(&agent.run(&mut conversation));
        let client = reqwest::Client::builder().no_proxy().build().unwrap();
        let hand_written = bare::Bare { client: &client, base };
        let loop_future = if anthropic {
            std::mem::size_of_val(&hand_written.anthropic())
        } else {
            std::mem::size_of_val(&hand_written.openai())
        };
        let call = framework::model_call_size(anthropic, base);
        let wire = if anthropic { "anthropic" } else { "openai" };
        println!(
            "{wire}: toolloop run future {run} bytes (model call, boxed: {call}), bare loop future {loop_future} bytes"
        );
    }
}

/// One loop, set up before any conversation.
enum Driver {
    Bare { client: reqwest::Client, base: String },
    Toolloop(Box<toolloop::Agent>),
}

impl Driver {
    /// One conversation; returns its model calls and the SSE events read.
    async fn conversation(&self, anthropic: bool, streamed: bool) -> (usize, usize) {
        match self {
            Self::Bare { client, base } => {
                let bare = bare::Bare { client, base };
                match (anthropic, streamed) {
                    (false, false) => (bare.openai().await, 0),
                    (true, false) => (bare.anthropic().await, 0),
                    (false, true) => bare.openai_streamed().await,
                    (true, true) => bare.anthropic_streamed().await,
                }
            }
            Self::Toolloop(agent) if streamed => {
                let calls = framework::streamed(agent).await;
                (calls, stub::events_per_conversation(calls, anthropic))
            }
            Self::Toolloop(agent) => (framework::conversation(agent).await, 0),
        }
    }
}

/// How many sockets the process has open.
fn open_sockets() -> usize {
    let Ok(entries) = std::fs::read_dir("/proc/self/fd") else { return 0 };
    entries
        .filter_map(|entry| std::fs::read_link(entry.ok()?.path()).ok())
        .filter(|target| target.to_string_lossy().starts_with("socket:"))
        .count()
}

/// A field of `/proc/self/status`, in KiB.
fn memory_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// A stub server in a child process, killed on drop.
struct StubServer {
    child: Child,
    base: String,
}

impl StubServer {
    fn start() -> Self {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .arg("serve")
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

/// What one client process reported.
#[derive(Clone, Copy)]
struct Report {
    /// CPU time, or instructions under valgrind.
    cost: f64,
    peak_kib: u64,
    baseline_kib: u64,
    calls: usize,
    events: usize,
}

/// How client processes are run.
struct Runner {
    stub: StubServer,
    instructions: bool,
}

impl Runner {
    fn run(&self, kind: &str, wire: &str, mode: &str, calls: usize, runs: usize, in_flight: usize) -> Report {
        let exe = std::env::current_exe().unwrap();
        let args = [
            "client".to_owned(),
            kind.to_owned(),
            wire.to_owned(),
            mode.to_owned(),
            calls.to_string(),
            runs.to_string(),
            in_flight.to_string(),
            self.stub.base.clone(),
        ];
        let output = if self.instructions {
            Command::new("valgrind")
                .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
                .arg(&exe)
                .args(&args)
                .output()
                .expect("run valgrind (is it installed?)")
        } else {
            Command::new(&exe).args(&args).output().expect("run a client")
        };
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "client failed: {}", String::from_utf8_lossy(&output.stderr));
        let fields: Vec<u64> = stdout.split_whitespace().map(|field| field.parse().unwrap()).collect();
        let cost = if self.instructions {
            // callgrind's summary line: `==PID== Collected : 123456789`.
            let stderr = String::from_utf8_lossy(&output.stderr);
            let collected =
                stderr.lines().find_map(|line| line.split("Collected :").nth(1)).expect("callgrind's total");
            collected.trim().parse::<f64>().unwrap()
        } else {
            fields[0] as f64
        };
        Report {
            cost,
            peak_kib: fields[1],
            baseline_kib: fields[2],
            calls: fields[3] as usize,
            events: fields[4] as usize,
        }
    }

    /// The cost of `runs` conversations beyond the start-up run, per
    /// model call (or per event when streamed), for each loop, in turn.
    fn pair(&self, wire: &str, mode: &str, calls: usize, runs: usize, in_flight: usize, rep: usize) -> [Measured; 2] {
        let mut pair = [Measured::default(); 2];
        // Alternate which loop goes first, so that drift hits both alike.
        let order = if rep.is_multiple_of(2) { [0, 1] } else { [1, 0] };
        for index in order {
            let kind = LOOPS[index];
            let start_up = self.run(kind, wire, mode, calls, 0, 1);
            let measured = self.run(kind, wire, mode, calls, runs, in_flight);
            let extra = measured.cost - start_up.cost;
            let per_call = extra / measured.calls as f64;
            let per_event = if measured.events > 0 { extra / measured.events as f64 } else { 0.0 };
            let memory = measured.peak_kib.saturating_sub(measured.baseline_kib) as f64 / in_flight.min(runs) as f64;
            pair[index] = Measured { per_call, per_event, memory_kib: memory };
        }
        pair
    }
}

const LOOPS: [&str; 2] = ["bare", "toolloop"];

#[derive(Clone, Copy, Default)]
struct Measured {
    per_call: f64,
    per_event: f64,
    /// Peak memory above the warmed-up process, per conversation in flight.
    memory_kib: f64,
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let middle = values.len() / 2;
    if values.len() % 2 == 1 { values[middle] } else { f64::midpoint(values[middle - 1], values[middle]) }
}

/// Medians of repetitions: each loop's, and of the paired ratios, with
/// the range of those (how far single repetitions spread).
struct Summary {
    bare: f64,
    toolloop: f64,
    ratio: f64,
    lowest: f64,
    highest: f64,
}

impl Summary {
    /// `1.05x (0.98–1.12)`: the median ratio and the range of the pairs'.
    fn ratio(&self) -> String {
        format!("{:.2}x ({:.2}–{:.2})", self.ratio, self.lowest, self.highest)
    }
}

fn summarize(pairs: &[[Measured; 2]], value: impl Fn(&Measured) -> f64) -> Summary {
    let ratios: Vec<f64> = pairs.iter().map(|pair| value(&pair[1]) / value(&pair[0])).collect();
    Summary {
        bare: median(pairs.iter().map(|pair| value(&pair[0])).collect()),
        toolloop: median(pairs.iter().map(|pair| value(&pair[1])).collect()),
        lowest: ratios.iter().copied().fold(f64::INFINITY, f64::min),
        highest: ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        ratio: median(ratios),
    }
}

/// Least squares of `per_call = c + fixed / calls + growth * calls` over
/// the sequential runs: `c` is the cost of a call, `fixed` the cost of a run
/// whatever its length, `growth` what each call adds to the next ones (a
/// loop that sends the whole history grows with it). Returns `(c, fixed)`.
fn fit(points: &[(usize, f64)]) -> (f64, f64) {
    // Normal equations of y = a + b x + g z with x = 1 / calls, z = calls.
    let rows: Vec<[f64; 4]> = points.iter().map(|&(calls, y)| [1.0, 1.0 / calls as f64, calls as f64, y]).collect();
    let mut matrix = [[0.0; 4]; 3];
    for row in &rows {
        for (line, factor) in matrix.iter_mut().zip(row) {
            for (cell, value) in line.iter_mut().zip(row) {
                *cell += factor * value;
            }
        }
    }
    // Gaussian elimination with partial pivoting.
    for column in 0..3 {
        let pivot = (column..3).max_by(|&a, &b| matrix[a][column].abs().total_cmp(&matrix[b][column].abs())).unwrap();
        matrix.swap(column, pivot);
        let pivot_row = matrix[column];
        for (index, line) in matrix.iter_mut().enumerate() {
            if index != column {
                let factor = line[column] / pivot_row[column];
                for (cell, pivot) in line[column..].iter_mut().zip(&pivot_row[column..]) {
                    *cell -= factor * pivot;
                }
            }
        }
    }
    (matrix[0][3] / matrix[0][0], matrix[1][3] / matrix[1][1])
}

fn compare(args: &[String]) {
    let flag = |name: &str| args.iter().any(|arg| arg == name);
    let quick = flag("--quick");
    let instructions = flag("--instructions");
    // Instruction counts barely move between runs: one repetition is enough.
    let default_reps = match (instructions, quick) {
        (true, _) => 1,
        (false, true) => 3,
        (false, false) => 5,
    };
    let reps = args.iter().position(|arg| arg == "--reps").map_or(default_reps, |i| args[i + 1].parse().unwrap());
    let only: Vec<&str> = ["--plain", "--streamed", "--memory"].into_iter().filter(|name| flag(name)).collect();
    let wanted = |name: &str| only.is_empty() || only.contains(&name);
    // Model calls per measured process: enough that one process's CPU is
    // tens to hundreds of milliseconds.
    let default_total = match (instructions, quick) {
        (true, _) => 200,
        (false, true) => 400,
        (false, false) => 2_000,
    };
    // More calls per process shrink the share of the start-up run, whose
    // own spread the subtraction carries into every figure.
    let total = args.iter().position(|arg| arg == "--calls").map_or(default_total, |i| args[i + 1].parse().unwrap());
    let runner = Runner { stub: StubServer::start(), instructions };
    let (unit, scale) = if instructions { ("instructions", 1.0) } else { ("µs", 1e-3) };
    println!(
        "Whole-process {} of the client, per model call; medians of {reps} repetition(s), {total} calls per process.",
        if instructions { "instructions (callgrind)" } else { "CPU (user + sys)" }
    );
    if wanted("--plain") {
        for wire in ["openai", "anthropic"] {
            println!("\n### {wire}, not streamed\n");
            println!("| conversation | bare loop ({unit}/call) | toolloop ({unit}/call) | ratio (range) |");
            println!("|---|---:|---:|---:|");
            let mut fits = [Vec::new(), Vec::new()];
            let mut settings = vec![(1, 1), (10, 1), (50, 1), (200, 1)];
            if !instructions {
                settings.push((10, 50));
            }
            for (calls, in_flight) in settings {
                let runs = (total / calls).max(1);
                let pairs: Vec<_> =
                    (0..reps).map(|rep| runner.pair(wire, "plain", calls, runs, in_flight, rep)).collect();
                let summary = summarize(&pairs, |m| m.per_call * scale);
                if in_flight == 1 {
                    fits[0].push((calls, summary.bare));
                    fits[1].push((calls, summary.toolloop));
                }
                let setting = if in_flight == 1 {
                    format!("{calls} calls, one at a time")
                } else {
                    format!("{calls} calls, {in_flight} in flight")
                };
                println!("| {setting} | {:.1} | {:.1} | {} |", summary.bare, summary.toolloop, summary.ratio());
            }
            let (bare_c, bare_fixed) = fit(&fits[0]);
            let (toolloop_c, toolloop_fixed) = fit(&fits[1]);
            println!(
                "\nFitted per call = c + R / calls + g * calls (one at a time): bare c = {bare_c:.1}, \
                 R = {bare_fixed:.1}; toolloop c = {toolloop_c:.1}, R = {toolloop_fixed:.1} ({unit}); \
                 toolloop's fixed cost per run beyond the bare loop's: {:.1} {unit}.",
                toolloop_fixed - bare_fixed
            );
        }
    }
    if wanted("--streamed") {
        println!("\n### Streamed, 10 calls per run, one at a time ({} text deltas per call)\n", stub::TEXT_DELTAS);
        println!("| wire | events per call | bare loop ({unit}/event) | toolloop ({unit}/event) | ratio (range) |");
        println!("|---|---:|---:|---:|---:|");
        for wire in ["openai", "anthropic"] {
            let calls = 10;
            let runs = (total / 5 / calls).max(1);
            let pairs: Vec<_> = (0..reps).map(|rep| runner.pair(wire, "streamed", calls, runs, 1, rep)).collect();
            let summary = summarize(&pairs, |m| m.per_event * scale);
            let events = stub::events_per_conversation(calls, wire == "anthropic") as f64 / calls as f64;
            println!("| {wire} | {events:.1} | {:.3} | {:.3} | {} |", summary.bare, summary.toolloop, summary.ratio());
        }
    }
    if wanted("--memory") && !instructions {
        println!("\n### 1,000 conversations of 10 calls in flight\n");
        println!(
            "| wire | bare loop (µs/call) | toolloop (µs/call) | ratio (range) | bare KiB/conversation | toolloop KiB/conversation |"
        );
        println!("|---|---:|---:|---:|---:|---:|");
        for wire in ["openai", "anthropic"] {
            let pairs: Vec<_> = (0..reps).map(|rep| runner.pair(wire, "plain", 10, 1_000, 1_000, rep)).collect();
            let cpu = summarize(&pairs, |m| m.per_call * scale);
            let memory = summarize(&pairs, |m| m.memory_kib);
            println!(
                "| {wire} | {:.1} | {:.1} | {} | {:.1} | {:.1} |",
                cpu.bare,
                cpu.toolloop,
                cpu.ratio(),
                memory.bare,
                memory.toolloop
            );
        }
    }
}
