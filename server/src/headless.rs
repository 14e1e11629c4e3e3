//! `patchbay run graph.json --input "…"`: a run without the server, on the
//! same engine. Progress goes to standard error as one line per step
//! (`Draft · Re-prompt 1/2…`); the outputs go to standard output as JSON.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

use engine::bundle::PortValue;
use engine::recorder::{MemoryRecorder, RecordError, Recorder};
use engine::{Engine, InputFile, RunInput, RunSpec};
use graph::{Graph, Severity, has_errors, validate};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wire::activation::ActivationRecord;
use wire::event::{EventRecord, RunEvent, RunStatus};

/// Prints progress as events arrive, and keeps everything in memory.
struct ProgressRecorder {
    memory: MemoryRecorder,
    labels: HashMap<String, String>,
    started: Mutex<HashMap<String, std::time::Instant>>,
}

impl ProgressRecorder {
    fn label<'a>(&'a self, module_id: &'a str) -> &'a str {
        self.labels.get(module_id).map_or(module_id, String::as_str)
    }

    fn print(&self, record: &EventRecord) {
        let line = match &record.event {
            RunEvent::ModuleActivated {
                module_id,
                activation,
            } => {
                if let Ok(mut started) = self.started.lock() {
                    started.insert(module_id.clone(), std::time::Instant::now());
                }
                let round = if *activation > 1 {
                    format!(" (activation {activation})")
                } else {
                    String::new()
                };
                format!("▶ {}{round}", self.label(module_id))
            }
            RunEvent::RepromptDispatched {
                module_id,
                reprompt_index,
                reprompt_count,
                variant,
            } => {
                let variant = variant
                    .as_deref()
                    .map(|variant| format!(" · {variant}"))
                    .unwrap_or_default();
                format!(
                    "  {}{variant} · Re-prompt {reprompt_index}/{reprompt_count}…",
                    self.label(module_id)
                )
            }
            RunEvent::VariantStarted {
                module_id,
                variant,
                index,
                count,
                ..
            } => format!(
                "  {} · variant {variant} ({index}/{count})",
                self.label(module_id)
            ),
            RunEvent::CodingRepromptDispatched {
                module_id,
                agent_role,
                reprompt_index,
            } => {
                format!(
                    "  {} · {agent_role} · Re-prompt {reprompt_index}…",
                    self.label(module_id)
                )
            }
            RunEvent::ModuleCompleted { module_id, .. } => {
                let elapsed = self
                    .started
                    .lock()
                    .ok()
                    .and_then(|started| {
                        started
                            .get(module_id)
                            .map(|start| start.elapsed().as_secs_f64())
                    })
                    .unwrap_or_default();
                format!("✓ {} ({elapsed:.1} s)", self.label(module_id))
            }
            RunEvent::ModuleFailed {
                module_id, error, ..
            } => format!("✗ {}: {error}", self.label(module_id)),
            RunEvent::RunFailed { error, .. } => format!("run failed: {error}"),
            RunEvent::RunCancelled { .. } => "run cancelled".to_owned(),
            _ => return,
        };
        let _ = writeln!(std::io::stderr(), "{line}");
    }
}

impl Recorder for ProgressRecorder {
    async fn append_events(&self, events: &[EventRecord]) -> Result<(), RecordError> {
        for record in events {
            self.print(record);
        }
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

fn port_json(value: &PortValue) -> Value {
    match value {
        PortValue::Bundle(bundle) => bundle.content.clone(),
        other => serde_json::to_value(other).unwrap_or(Value::Null),
    }
}

/// Reads input files named on the command line.
pub fn input_files(paths: &[std::path::PathBuf]) -> Result<Vec<InputFile>, String> {
    paths
        .iter()
        .map(|path| {
            let bytes = std::fs::read(path)
                .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
            let media_type = if std::str::from_utf8(&bytes).is_ok() {
                "text/plain"
            } else {
                "application/octet-stream"
            };
            Ok(InputFile {
                name: path
                    .file_name()
                    .map_or_else(String::new, |name| name.to_string_lossy().into_owned()),
                media_type: media_type.to_owned(),
                bytes,
            })
        })
        .collect()
}

/// Runs a graph file; returns the process exit code (0 completed, 1 failed
/// or cancelled, 2 the graph could not be run).
pub async fn run_file(engine: Engine, file: &Path, input: RunInput) -> u8 {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(error) => {
            eprintln!("patchbay: cannot read {}: {error}", file.display());
            return 2;
        }
    };
    let graph = match Graph::load(&text) {
        Ok(graph) => graph,
        Err(error) => {
            eprintln!("{}: {error} ({})", file.display(), error.code());
            return 2;
        }
    };
    let context = engine.validation_context();
    let findings = validate(&graph, &context);
    for finding in &findings {
        let severity = if finding.severity == Severity::Error {
            "error"
        } else {
            "warning"
        };
        eprintln!("{severity} {}: {}", finding.code.as_str(), finding.message);
    }
    if has_errors(&findings) {
        eprintln!("patchbay: the graph has validation errors; nothing was run");
        return 2;
    }
    if !engine.settings.commands_enabled
        && graph
            .modules
            .iter()
            .any(|module| module.config.runs_commands())
    {
        eprintln!(
            "patchbay: the graph runs commands (command or poll modules, validators); run with --enable-commands to allow them"
        );
        return 2;
    }
    if let Some(approval) = graph
        .modules
        .iter()
        .find(|module| matches!(module.config, graph::ModuleConfig::Approval(_)))
    {
        eprintln!(
            "patchbay: \"{}\" is an approval, and nobody is here to decide on the command line: run the graph on a server (patchbay serve)",
            approval.display_label()
        );
        return 2;
    }
    if let Err(unavailable) = &engine.settings.sandbox
        && graph
            .modules
            .iter()
            .any(|module| module.config.starts_processes())
    {
        eprintln!(
            "patchbay: the graph would start processes, and none run unconfined: {unavailable}"
        );
        return 2;
    }
    let labels: HashMap<String, String> = graph
        .modules
        .iter()
        .map(|module| (module.id.clone(), module.display_label().to_owned()))
        .collect();
    let kinds: HashMap<String, String> = graph
        .modules
        .iter()
        .map(|module| (module.id.clone(), module.config.kind_name().to_owned()))
        .collect();
    let recorder = Arc::new(ProgressRecorder {
        memory: MemoryRecorder::default(),
        labels: labels.clone(),
        started: Mutex::new(HashMap::new()),
    });
    let cancel = CancellationToken::new();
    let on_interrupt = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("cancelling…");
            on_interrupt.cancel();
        }
    });
    let run_id = crate::runs::new_run_id();
    let outcome = engine::execute(
        &engine,
        RunSpec {
            run_id: run_id.clone(),
            graph,
            input,
            budget_usd: engine.settings.default_run_budget_usd,
        },
        Arc::clone(&recorder),
        cancel,
    )
    .await;
    // Nothing of a run stays on the disk: the diff and files are reported.
    let _ = tokio::fs::remove_dir_all(engine.settings.run_folder(&run_id).path()).await;

    let mut modules = serde_json::Map::new();
    for record in recorder.memory.activations() {
        let entry = modules.entry(record.module_id.clone()).or_insert_with(|| {
            json!({
                "label": labels.get(&record.module_id),
                "kind": kinds.get(&record.module_id),
                "activations": [],
            })
        });
        let outputs: serde_json::Map<String, Value> = record
            .outputs
            .iter()
            .map(|(port, value)| (port.clone(), port_json(value)))
            .collect();
        if let Some(list) = entry["activations"].as_array_mut() {
            list.push(json!({
                "activation": record.activation,
                "status": record.status,
                "outputs": outputs,
                "named_outputs": record.named_outputs,
                "responses": record.responses.iter().map(|response| json!({"label": response.label, "text": response.text})).collect::<Vec<_>>(),
                "receipt": record.receipt,
                "error": record.error,
            }));
        }
    }
    let report = json!({
        "run_id": run_id,
        "status": outcome.status,
        "error": outcome.error,
        "activations": outcome.activations,
        "modules": modules,
    });
    let _ = writeln!(
        std::io::stdout(),
        "{}",
        serde_json::to_string_pretty(&report).unwrap_or_default()
    );
    u8::from(outcome.status != RunStatus::Completed)
}
