//! `patchbay bench`: the engine's own cost per activation, with the
//! simulated provider at zero latency, so that nothing but scheduling,
//! prompt assembly, event logging and recording is measured. Prints figures;
//! it is a command, not a test.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use engine::provider::ProviderRegistry;
use engine::provider::sim::SimProvider;
use engine::recorder::{MemoryRecorder, RecordError, Recorder};
use engine::{Engine, EngineSettings, RunInput, RunSpec};
use graph::config::{AgentConfig, AgentTaskConfig, InputConfig};
use graph::starter::starter_graph;
use graph::{Cable, Endpoint, Extra, Graph, Module, ModuleConfig, Position, RePrompt};
use tokio_util::sync::CancellationToken;
use wire::activation::ActivationRecord;
use wire::event::{EventRecord, RunStatus};

use crate::runs::recorder::StoreRecorder;
use crate::store::{NewRun, Store};

mod memory;
mod subscribers;
pub mod tools;

/// Wraps a recorder and notes when each activation was saved.
struct Timed<R> {
    inner: R,
    saves: Mutex<Vec<Instant>>,
    events: Mutex<u64>,
}

impl<R: Recorder> Recorder for Timed<R> {
    async fn append_events(&self, events: &[EventRecord]) -> Result<(), RecordError> {
        if let Ok(mut count) = self.events.lock() {
            *count += events.len() as u64;
        }
        self.inner.append_events(events).await
    }

    async fn save_activation(
        &self,
        run_id: &str,
        record: &ActivationRecord,
        ending: Option<&str>,
    ) -> Result<(), RecordError> {
        let result = self.inner.save_activation(run_id, record, ending).await;
        // Checkpoints of a chain in progress are not activations ending.
        if ending.is_some()
            && let Ok(mut saves) = self.saves.lock()
        {
            saves.push(Instant::now());
        }
        result
    }

    async fn keep_activation(&self, run_id: &str, record: ActivationRecord) {
        self.inner.keep_activation(run_id, record).await;
    }

    async fn set_status(
        &self,
        run_id: &str,
        status: RunStatus,
        error: Option<&str>,
    ) -> Result<(), RecordError> {
        self.inner.set_status(run_id, status, error).await
    }

    async fn save_state(
        &self,
        run_id: &str,
        changes: &[(String, String)],
    ) -> Result<(), RecordError> {
        self.inner.save_state(run_id, changes).await
    }

    async fn record_wait(
        &self,
        run_id: &str,
        waited_ms: i64,
        waiting_since: Option<i64>,
    ) -> Result<(), RecordError> {
        self.inner
            .record_wait(run_id, waited_ms, waiting_since)
            .await
    }

    async fn claim_timeout(
        &self,
        run_id: &str,
        module_id: &str,
        activation: u32,
    ) -> Result<Option<wire::approval::DecisionRecord>, RecordError> {
        self.inner
            .claim_timeout(run_id, module_id, activation)
            .await
    }
}

fn timed<R>(inner: R) -> Arc<Timed<R>> {
    Arc::new(Timed {
        inner,
        saves: Mutex::new(Vec::new()),
        events: Mutex::new(0),
    })
}

fn engine() -> Engine {
    let mut registry = ProviderRegistry::new();
    registry.add(simulated(), Arc::new(SimProvider::default()));
    Engine {
        providers: Arc::new(registry),
        settings: Arc::new(EngineSettings {
            max_activations: u32::MAX,
            ..EngineSettings::default()
        }),
    }
}

/// The simulated provider as the benchmarks register it.
fn simulated() -> engine::provider::ProviderInfo {
    engine::provider::ProviderInfo {
        id: "sim".to_owned(),
        label: "Simulated".to_owned(),
        models: vec!["sim-1".to_owned()],
        simulated: true,
        prices: std::collections::BTreeMap::new(),
        tool_calling: true,
    }
}

/// input → task 1 → … → task `length`, each with `re_prompts` re-prompts.
pub fn chain_graph(length: usize, re_prompts: usize) -> Graph {
    let extra = Extra::new;
    let mut modules = vec![Module {
        id: "m0".to_owned(),
        label: "Input".to_owned(),
        position: Position::default(),
        config: ModuleConfig::Input(InputConfig::default()),
        extra: extra(),
    }];
    let mut cables = Vec::new();
    for index in 1..=length {
        modules.push(Module {
            id: format!("m{index}"),
            label: format!("Task {index}"),
            position: Position {
                x: (index % 40) as f64 * 220.0,
                y: (index / 40) as f64 * 140.0,
            },
            config: ModuleConfig::AgentTask(AgentTaskConfig {
                instruction: "Improve the text above.".to_owned(),
                agent_config: AgentConfig::simulated(),
                re_prompts: (1..=re_prompts)
                    .map(|pass| RePrompt::new(format!("Pass {pass}: review and refine.")))
                    .collect(),
                ..AgentTaskConfig::default()
            }),
            extra: extra(),
        });
        cables.push(Cable::new(
            format!("c{index}"),
            Endpoint::new(format!("m{}", index - 1), graph::ports::DATA_OUT),
            Endpoint::new(format!("m{index}"), graph::ports::DATA_IN),
        ));
    }
    Graph {
        name: "Benchmark chain".to_owned(),
        modules,
        cables,
        ..Graph::default()
    }
}

fn percentile(sorted: &[Duration], fraction: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    let rank = ((sorted.len() as f64 * fraction).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

fn per_second(count: u64, elapsed: Duration) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    let count = count as f64;
    count / elapsed.as_secs_f64().max(f64::EPSILON)
}

fn milliseconds(duration: Duration) -> String {
    format!("{:.2} ms", duration.as_secs_f64() * 1000.0)
}

async fn chain<R: Recorder>(
    backend: &str,
    recorder: Arc<Timed<R>>,
    run_id: String,
    length: usize,
    re_prompts: usize,
) {
    let engine = engine();
    let started = Instant::now();
    let outcome = engine::execute(
        &engine,
        run_spec(
            run_id,
            chain_graph(length, re_prompts),
            "A paragraph to improve.",
        ),
        Arc::clone(&recorder),
        CancellationToken::new(),
    )
    .await;
    let elapsed = started.elapsed();
    let saves = recorder
        .saves
        .lock()
        .map(|saves| saves.clone())
        .unwrap_or_default();
    let mut intervals: Vec<Duration> = saves.windows(2).map(|pair| pair[1] - pair[0]).collect();
    intervals.sort_unstable();
    let events = recorder.events.lock().map_or(0, |count| *count);
    println!(
        "  {backend:<11} {} {} activations in {:.2} s: {:.0} activations/s; per activation p50 {}, p99 {}, max {}; {:.0} events/s",
        outcome.status.as_str(),
        outcome.activations,
        elapsed.as_secs_f64(),
        per_second(u64::from(outcome.activations), elapsed),
        milliseconds(percentile(&intervals, 0.5)),
        milliseconds(percentile(&intervals, 0.99)),
        milliseconds(intervals.last().copied().unwrap_or_default()),
        per_second(events, elapsed)
    );
}

/// A run of `graph` with `text` as its input.
fn run_spec(run_id: String, graph: Graph, text: &str) -> RunSpec {
    RunSpec {
        run_id,
        graph,
        input: RunInput {
            text: text.to_owned(),
            files: Vec::new(),
        },
        budget_usd: None,
    }
}

/// The benchmark holds its runs for good: no server takes them over.
const BENCH_LEASE: crate::store::Lease<'static> = crate::store::Lease {
    owner: "bench",
    until: i64::MAX,
};

/// Stores a run for the benchmark, held by it.
async fn insert_run(store: &Store, run_id: &str, snapshot: &str) -> Result<(), String> {
    store
        .insert_run(NewRun {
            id: run_id,
            graph_id: None,
            graph_revision: None,
            snapshot,
            input: "{}",
            budget_usd: None,
            lease: Some(BENCH_LEASE),
            from: None,
            started_by: None,
        })
        .await
        .map_err(|error| format!("cannot store a run: {error}"))
}

fn store_recorder(store: &Store) -> Arc<Timed<StoreRecorder>> {
    let (events, _) = tokio::sync::broadcast::channel(16);
    timed(StoreRecorder {
        notices: None,
        store: store.clone(),
        events,
        owner: BENCH_LEASE.owner.to_owned(),
    })
}

type RunEnding = (engine::RunOutcome, Duration, u64);

/// Runs `graph`; with a `store`, stores the run first, as the API does.
async fn one_run<R: Recorder + Send + Sync + 'static>(
    engine: Engine,
    graph: Graph,
    store: Option<(Store, String)>,
    recorder: Arc<Timed<R>>,
) -> Result<RunEnding, String> {
    let begun = Instant::now();
    let run_id = crate::runs::new_run_id();
    if let Some((store, snapshot)) = store {
        insert_run(&store, &run_id, &snapshot).await?;
    }
    let outcome = engine::execute(
        &engine,
        run_spec(run_id, graph, "tides"),
        Arc::clone(&recorder),
        CancellationToken::new(),
    )
    .await;
    let events = recorder.events.lock().map_or(0, |count| *count);
    Ok((outcome, begun.elapsed(), events))
}

/// `runs` runs of the starter graph started at once, recorded in `store`
/// (or in memory).
async fn concurrent_runs(backend: &str, store: Option<&Store>, runs: usize) -> Result<(), String> {
    let engine = engine();
    let graph = starter_graph();
    let snapshot = graph.to_json().unwrap_or_default();
    memory::reset_peak();
    let resident_before = memory::resident_mib();
    if let Some(store) = store {
        store.peak_write_backlog();
    }
    let started = Instant::now();
    let handles: Vec<_> = (0..runs)
        .map(|_| {
            let (engine, graph) = (engine.clone(), graph.clone());
            match store {
                Some(store) => tokio::spawn(one_run(
                    engine,
                    graph,
                    Some((store.clone(), snapshot.clone())),
                    store_recorder(store),
                )),
                None => tokio::spawn(one_run(
                    engine,
                    graph,
                    None,
                    timed(MemoryRecorder::default()),
                )),
            }
        })
        .collect();
    let mut latencies = Vec::new();
    let mut activations = 0u64;
    let mut events = 0u64;
    let mut completed = 0;
    for handle in handles {
        match handle.await {
            Ok(Ok((outcome, latency, run_events))) => {
                activations += u64::from(outcome.activations);
                events += run_events;
                completed += usize::from(outcome.status == RunStatus::Completed);
                latencies.push(latency);
            }
            Ok(Err(error)) => return Err(error),
            Err(error) => return Err(error.to_string()),
        }
    }
    let elapsed = started.elapsed();
    latencies.sort_unstable();
    println!(
        "  {backend:<11} {completed}/{runs} completed in {:.2} s: {:.0} runs/s, {:.0} activations/s, {:.0} events/s; run latency p50 {}, p99 {}",
        elapsed.as_secs_f64(),
        per_second(completed as u64, elapsed),
        per_second(activations, elapsed),
        per_second(events, elapsed),
        milliseconds(percentile(&latencies, 0.5)),
        milliseconds(percentile(&latencies, 0.99))
    );
    if let (Some((before, _)), Some((_, peak))) = (resident_before, memory::resident_mib()) {
        let waiting = store.map_or(String::new(), |store| {
            format!(
                "; writes waiting for the writer at most {}",
                store.peak_write_backlog()
            )
        });
        println!(
            "  {:<11} memory: peak resident {peak:.0} MiB ({before:.0} MiB before){waiting}",
            ""
        );
    }
    Ok(())
}

/// What `patchbay bench` measures.
pub struct Options {
    pub chain: usize,
    pub re_prompts: usize,
    pub concurrent_runs: usize,
    pub subscribers: usize,
    /// A PostgreSQL database to measure beside SQLite (its tables are
    /// created; runs are added).
    pub postgres_url: Option<String>,
}

pub async fn run(options: Options) -> Result<(), String> {
    let folder = std::env::temp_dir().join(format!("patchbay-bench-{}", std::process::id()));
    std::fs::create_dir_all(&folder)
        .map_err(|error| format!("cannot create {}: {error}", folder.display()))?;
    let outcome = measure(&options, &folder).await;
    let _ = std::fs::remove_dir_all(&folder);
    outcome
}

async fn measure(options: &Options, folder: &std::path::Path) -> Result<(), String> {
    let sqlite = Store::connect(&format!("sqlite://{}/bench.db", folder.display()))
        .await
        .map_err(|error| error.to_string())?;
    let postgres = match &options.postgres_url {
        Some(url) => Some(
            Store::connect(url)
                .await
                .map_err(|error| format!("PostgreSQL: {error}"))?,
        ),
        None => None,
    };
    let stores: Vec<(&str, &Store)> = std::iter::once(("SQLite", &sqlite))
        .chain(postgres.as_ref().map(|store| ("PostgreSQL", store)))
        .collect();
    println!(
        "Patchbay engine benchmark — simulated provider at zero latency, {} cores",
        std::thread::available_parallelism().map_or(1, usize::from)
    );
    let (length, re_prompts) = (options.chain, options.re_prompts);
    println!(
        "chain of {length} agent tasks × {re_prompts} re-prompts ({} sim calls each), recorded in:",
        re_prompts + 1
    );
    chain(
        "memory",
        timed(MemoryRecorder::default()),
        crate::runs::new_run_id(),
        length,
        re_prompts,
    )
    .await;
    for (backend, store) in &stores {
        let run_id = crate::runs::new_run_id();
        insert_run(store, &run_id, "{}").await?;
        chain(backend, store_recorder(store), run_id, length, re_prompts).await;
    }
    println!(
        "{} concurrent runs of the starter graph (input → task with 2 re-prompts → output), recorded in:",
        options.concurrent_runs
    );
    concurrent_runs("memory", None, options.concurrent_runs).await?;
    for (backend, store) in &stores {
        concurrent_runs(backend, Some(store), options.concurrent_runs).await?;
    }
    if postgres.is_none() {
        println!("  PostgreSQL  not measured (give --postgres-url)");
    }
    sqlite.close().await;
    if let Some(store) = postgres {
        store.close().await;
    }
    if options.subscribers > 0 {
        subscribers::fan_out(folder, options.subscribers, 1).await?;
    }
    Ok(())
}
