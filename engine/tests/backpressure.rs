//! The run's event queue is bounded: while its recorder does not take
//! events (a database that fell behind), a long reply's streamed text
//! gathers into fewer, larger pieces instead of queueing piece after piece,
//! and once the recorder takes events again every character is in the log.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use engine::provider::sim::SimProvider;
use engine::provider::{ChatRequest, DeltaSink, Provider, ProviderFuture};
use engine::recorder::{MemoryRecorder, RecordError, Recorder};
use engine::{EngineSettings, RunInput, RunSpec, execute};
use serde_json::json;
use support::{cable, engine_with, graph, module, registry_with};
use tokio::sync::Semaphore;
use wire::activation::ActivationRecord;
use wire::event::{EventRecord, RunEvent, RunStatus};

/// Pieces the provider streams before its reply, 50 characters each.
const PIECES: usize = 5000;

/// Streams `PIECES` pieces, then answers as the simulated provider does.
struct Talkative {
    sim: SimProvider,
    streamed: AtomicBool,
}

impl Provider for Talkative {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_delta: DeltaSink<'a>,
    ) -> ProviderFuture<'a> {
        Box::pin(async move {
            for index in 0..PIECES {
                on_delta(&format!(
                    "piece {index:05} of a very long streamed reply....\n"
                ));
            }
            self.streamed.store(true, Ordering::SeqCst);
            self.sim.complete(request, on_delta).await
        })
    }
}

/// Keeps the run in memory; events wait until `open` lets them in.
struct Stalled {
    memory: MemoryRecorder,
    open: Semaphore,
}

impl Recorder for Stalled {
    async fn append_events(&self, events: &[EventRecord]) -> Result<(), RecordError> {
        let _permit = self.open.acquire().await;
        self.memory.append_events(events).await
    }

    async fn save_activation(
        &self,
        run_id: &str,
        record: &ActivationRecord,
        ending: Option<&str>,
    ) -> Result<(), RecordError> {
        self.memory.save_activation(run_id, record, ending).await
    }

    async fn keep_activation(&self, run_id: &str, record: ActivationRecord) {
        self.memory.keep_activation(run_id, record).await;
    }

    async fn set_status(
        &self,
        run_id: &str,
        status: RunStatus,
        error: Option<&str>,
    ) -> Result<(), RecordError> {
        self.memory.set_status(run_id, status, error).await
    }

    async fn save_state(
        &self,
        run_id: &str,
        changes: &[(String, String)],
    ) -> Result<(), RecordError> {
        self.memory.save_state(run_id, changes).await
    }
}

#[tokio::test]
async fn a_stalled_recorder_makes_streamed_text_gather_and_loses_none() {
    let provider = Arc::new(Talkative {
        sim: SimProvider::default(),
        streamed: AtomicBool::new(false),
    });
    let engine = engine_with(
        registry_with("sim", provider.clone()),
        EngineSettings::default(),
    );
    let recorder = Arc::new(Stalled {
        memory: MemoryRecorder::default(),
        open: Semaphore::new(0),
    });
    let document = graph(
        vec![
            module("in", "step.input", json!({})),
            module(
                "talk",
                "step.agent_task",
                json!({"instruction": "Talk.", "agent_config": {"provider": "sim", "model": "sim-1"}}),
            ),
        ],
        vec![cable("c1", ("in", "data_out"), ("talk", "data_in"))],
    );
    let running = {
        let (engine, recorder) = (engine.clone(), Arc::clone(&recorder));
        tokio::spawn(async move {
            let spec = RunSpec {
                run_id: "r_stalled".to_owned(),
                graph: document,
                input: RunInput {
                    text: "tides".to_owned(),
                    files: Vec::new(),
                },
                budget_usd: None,
            };
            execute(
                &engine,
                spec,
                recorder,
                tokio_util::sync::CancellationToken::new(),
            )
            .await
        })
    };
    // The whole reply streams while nothing is written.
    for _ in 0..500 {
        if provider.streamed.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        provider.streamed.load(Ordering::SeqCst),
        "the reply never streamed"
    );
    recorder.open.add_permits(Semaphore::MAX_PERMITS);
    let outcome = running.await.unwrap();
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);

    let deltas: Vec<String> = recorder
        .memory
        .events()
        .into_iter()
        .filter_map(|record| match record.event {
            RunEvent::ModuleOutputDelta { text, .. } => Some(text),
            _ => None,
        })
        .collect();
    let streamed: String = (0..PIECES)
        .map(|index| format!("piece {index:05} of a very long streamed reply....\n"))
        .collect();
    let logged = deltas.concat();
    assert!(
        logged.starts_with(&streamed),
        "every streamed character is in the log"
    );
    // At most the queue's worth went one by one; the rest gathered.
    assert!(
        deltas.len() < 1500,
        "{} pieces for {PIECES} streamed while the recorder stalled",
        deltas.len()
    );
}
