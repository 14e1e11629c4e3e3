//! Traces for the operator's tracing stack (PRODUCT §9): with `[telemetry]
//! otlp_endpoint` configured, each run's events become spans with the
//! GenAI semantic conventions (`trace.rs`), sent over OTLP/HTTP on a
//! thread of their own (`export.rs`). Off by default; prompt and reply
//! text only with `capture_content = true`.

pub mod export;
pub mod trace;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use serde::Deserialize;
use wire::EventRecord;

/// `[telemetry]` in the configuration file.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TelemetryConfig {
    /// The collector's OTLP/HTTP address (`http://collector:4318`); spans
    /// go to its `/v1/traces`.
    pub otlp_endpoint: Option<String>,
    /// Headers sent to the collector, each naming the environment
    /// variable that holds its value (a credential stays out of the file).
    #[serde(default)]
    pub headers_env: BTreeMap<String, String>,
    /// Prompt and reply text, tool arguments and results in the spans.
    #[serde(default)]
    pub capture_content: bool,
}

/// The process's traces.
#[derive(Debug)]
pub struct Telemetry {
    pub spans: export::Spans,
    capture_content: bool,
}

impl Telemetry {
    /// Starts sending traces when the configuration says where; `Err` says
    /// what in it is wrong.
    pub fn start(
        config: &TelemetryConfig,
        dropped: prometheus_client::metrics::counter::Counter,
    ) -> Result<Option<Arc<Telemetry>>, String> {
        let Some(endpoint) = config.otlp_endpoint.as_deref() else {
            return Ok(None);
        };
        let mut headers = std::collections::HashMap::new();
        for (name, variable) in &config.headers_env {
            let value = std::env::var(variable).map_err(|_| {
                format!("telemetry.headers_env: the environment variable {variable} (for header {name}) is not set")
            })?;
            headers.insert(name.clone(), value);
        }
        engine::tls::install();
        let mut exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_endpoint(format!("{}/v1/traces", endpoint.trim_end_matches('/')))
            .with_headers(headers)
            .with_timeout(std::time::Duration::from_secs(5))
            .build()
            .map_err(|error| format!("telemetry.otlp_endpoint: {error}"))?;
        opentelemetry_sdk::trace::SpanExporter::set_resource(
            &mut exporter,
            &opentelemetry_sdk::Resource::builder()
                .with_service_name("patchbay")
                .build(),
        );
        let spans = export::Spans::start(exporter, dropped)
            .map_err(|error| format!("telemetry: no thread to send traces on: {error}"))?;
        Ok(Some(Arc::new(Telemetry {
            spans,
            capture_content: config.capture_content,
        })))
    }

    pub fn run(self: &Arc<Telemetry>, run_id: &str) -> RunTracing {
        RunTracing {
            telemetry: Arc::clone(self),
            trace: Mutex::new(trace::RunTrace::new(run_id, self.capture_content)),
        }
    }
}

/// One run's trace in this process, fed its stored events.
#[derive(Debug)]
pub struct RunTracing {
    telemetry: Arc<Telemetry>,
    trace: Mutex<trace::RunTrace>,
}

impl RunTracing {
    pub fn observe(&self, graph: &graph::Graph, events: &[EventRecord]) {
        let Ok(mut trace) = self.trace.lock() else {
            return;
        };
        let finished: Vec<_> = events
            .iter()
            .flat_map(|record| trace.on_event(graph, record))
            .collect();
        drop(trace);
        if !finished.is_empty() {
            self.telemetry.spans.offer(finished);
        }
    }
}
