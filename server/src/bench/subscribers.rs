//! The SSE fan-out benchmark: many clients follow one run over real HTTP on
//! loopback; every one must get every event, and the figure is how far apart
//! the first and the last client got each event.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;

use super::{milliseconds, percentile};
use crate::runs::recorder::StoreRecorder;
use crate::settings::Settings;
use crate::store::NewRun;

/// What one client saw: each event's number and when its `id:` line came.
type Seen = Vec<(u64, Instant)>;

/// Follows `path` on `address` until the run's terminal event or the end
/// of the stream.
async fn follow(address: std::net::SocketAddr, path: String) -> Result<Seen, String> {
    let mut stream = TcpStream::connect(address)
        .await
        .map_err(|error| format!("cannot connect: {error}"))?;
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|error| format!("cannot ask: {error}"))?;
    let mut decoder = Chunked::default();
    let mut seen = Vec::new();
    let mut buffer = vec![0u8; 16 * 1024];
    loop {
        let read = stream
            .read(&mut buffer)
            .await
            .map_err(|error| format!("cannot read: {error}"))?;
        if read == 0 {
            return Ok(seen);
        }
        let now = Instant::now();
        for line in decoder.feed(&buffer[..read]) {
            if let Some(id) = line.strip_prefix("id: ") {
                if let Ok(seq) = id.trim().parse() {
                    seen.push((seq, now));
                }
            } else if line.starts_with("event: run.") && is_terminal(&line[7..]) {
                return Ok(seen);
            }
        }
    }
}

fn is_terminal(name: &str) -> bool {
    matches!(
        name.trim(),
        "run.completed" | "run.failed" | "run.cancelled" | "run.interrupted"
    )
}

/// Lines of an HTTP/1.1 chunked body, as they complete; the head is skipped.
#[derive(Default)]
struct Chunked {
    pending: Vec<u8>,
    in_body: bool,
    /// Bytes left of the current chunk; `None` between chunks.
    left: Option<usize>,
    body: Vec<u8>,
}

impl Chunked {
    fn feed(&mut self, bytes: &[u8]) -> Vec<String> {
        self.pending.extend_from_slice(bytes);
        if !self.in_body {
            let Some(end) = find(&self.pending, b"\r\n\r\n") else {
                return Vec::new();
            };
            self.pending.drain(..end + 4);
            self.in_body = true;
        }
        loop {
            match self.left {
                None => {
                    let Some(end) = find(&self.pending, b"\r\n") else {
                        break;
                    };
                    let size = std::str::from_utf8(&self.pending[..end])
                        .ok()
                        .and_then(|size| usize::from_str_radix(size.trim(), 16).ok())
                        .unwrap_or(0);
                    self.pending.drain(..end + 2);
                    // The chunk and its closing CRLF.
                    self.left = Some(size + 2);
                }
                Some(left) => {
                    let take = left.min(self.pending.len());
                    self.body.extend(self.pending.drain(..take));
                    if take == left {
                        self.body.truncate(self.body.len().saturating_sub(2));
                        self.left = None;
                    } else {
                        self.left = Some(left - take);
                        break;
                    }
                }
            }
        }
        let mut lines = Vec::new();
        while let Some(end) = self.body.iter().position(|&byte| byte == b'\n') {
            let line: Vec<u8> = self.body.drain(..=end).collect();
            lines.push(String::from_utf8_lossy(&line[..end]).into_owned());
        }
        lines
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// `subscribers` clients follow one run of a chain of 10 agent tasks with 3
/// re-prompts each, the simulated provider at `latency_ms` a word, on a server of its own with a SQLite
/// file in `folder`.
pub async fn fan_out(
    folder: &std::path::Path,
    subscribers: usize,
    latency_ms: u64,
) -> Result<(), String> {
    let url = format!("sqlite://{}/fan-out.db", folder.display());
    let mut settings = Settings::for_database(&url);
    settings.sim_latency_ms = Some(latency_ms);
    let state = crate::build_state(settings)
        .await
        .map_err(|error| error.to_string())?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|error| error.to_string())?;
    let address = listener.local_addr().map_err(|error| error.to_string())?;
    let app = crate::router::router(state.clone())
        .into_make_service_with_connect_info::<std::net::SocketAddr>();
    let shutdown = CancellationToken::new();
    let stop = shutdown.clone();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await;
    });

    let graph = super::chain_graph(10, 3);
    let run_id = crate::runs::new_run_id();
    state
        .store
        .insert_run(NewRun {
            id: &run_id,
            graph_id: None,
            graph_revision: None,
            snapshot: &graph.to_json().unwrap_or_default(),
            input: "{}",
            budget_usd: None,
            lease: Some(super::BENCH_LEASE),
            from: None,
            started_by: None,
        })
        .await
        .map_err(|error| error.to_string())?;
    // Registered before the clients come, so that every one of them
    // follows the run live from its first event.
    let registered = state.hub.register(&run_id);
    let path = format!("/api/runs/{run_id}/events");
    let clients: Vec<_> = (0..subscribers)
        .map(|_| tokio::spawn(follow(address, path.clone())))
        .collect();
    // Each has read the (empty) log and waits for live events once its
    // stream has a receiver; give the last ones time to get there.
    let waiting = Instant::now();
    while registered.events.receiver_count() < subscribers {
        if clients.iter().any(tokio::task::JoinHandle::is_finished) {
            return Err(
                "a subscriber stopped before the run began (too few file descriptors?)".to_owned(),
            );
        }
        if waiting.elapsed() > Duration::from_secs(60) {
            return Err(format!(
                "only {} of {subscribers} subscribers were following after 60 s",
                registered.events.receiver_count()
            ));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;

    let recorder = Arc::new(StoreRecorder {
        notices: None,
        store: state.store.clone(),
        events: registered.events.clone(),
        owner: super::BENCH_LEASE.owner.to_owned(),
    });
    let started = Instant::now();
    let outcome = engine::execute(
        &state.engine,
        super::run_spec(run_id.clone(), graph, "tides"),
        recorder,
        CancellationToken::new(),
    )
    .await;
    let ran = started.elapsed();
    let mut everyone = Vec::new();
    for client in clients {
        match client.await {
            Ok(Ok(seen)) => everyone.push(seen),
            Ok(Err(error)) => return Err(format!("a subscriber failed: {error}")),
            Err(error) => return Err(format!("a subscriber failed: {error}")),
        }
    }
    shutdown.cancel();
    state.hub.finish(&run_id);

    let events = state
        .store
        .last_event_seq(&run_id)
        .await
        .map_err(|error| error.to_string())?;
    let events = u64::try_from(events).unwrap_or(0);
    let complete = everyone
        .iter()
        .filter(|seen| {
            seen.len() as u64 == events
                && seen
                    .iter()
                    .enumerate()
                    .all(|(index, (seq, _))| *seq == index as u64 + 1)
        })
        .count();
    // Per event: when the first and the last client had it.
    let mut spreads = Vec::new();
    for seq in 1..=events {
        let times: Vec<Instant> = everyone
            .iter()
            .filter_map(|seen| seen.iter().find(|(number, _)| *number == seq))
            .map(|(_, at)| *at)
            .collect();
        if let (Some(first), Some(last)) = (times.iter().min(), times.iter().max()) {
            spreads.push(*last - *first);
        }
    }
    spreads.sort_unstable();
    println!(
        "{subscribers} SSE subscribers following one run (a chain of 10 tasks × 3 re-prompts, sim at {latency_ms} ms a word, SQLite):"
    );
    println!(
        "  run {} in {:.2} s, {events} events; {complete}/{subscribers} subscribers got every event in order",
        outcome.status.as_str(),
        ran.as_secs_f64(),
    );
    println!(
        "  delay from the first to the last subscriber, per event: p50 {}, p99 {}, max {}",
        milliseconds(percentile(&spreads, 0.5)),
        milliseconds(percentile(&spreads, 0.99)),
        milliseconds(spreads.last().copied().unwrap_or_default())
    );
    Ok(())
}
