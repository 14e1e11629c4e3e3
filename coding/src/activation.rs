//! One activation of a coding module, exactly as DOC23 §3.2: per agent, its
//! prompt, then each of its re-prompts as a new turn in the same ACP
//! session, then its work captured (commit, diff, changed files, summary,
//! tests). Sequential hands each agent's output to the next; parallel runs
//! every agent in its own session and worktree and waits for all; the
//! review chain loops builder → reviewer until approve or `max_rounds`.
//! With an intent gate, the last agent (the reviewer of a review chain)
//! then answers the gate's question in a turn of its own.

mod coordination;
mod outputs;
mod prompts;
mod sessions;
mod turns;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU32;

use engine::activation::{ActivationContext, ActivationError, ActivationOutput, Tally};
use graph::config::Coordination;
use graph::kinds::coding::DIFF_OUT;
use graph::ports::{DATA_OUT, EXHAUSTED_OUT};
use graph::workspace_roots::WorkspacePathProblem;

use crate::CodingModules;
use crate::profile::AcpProfile;
use crate::workspace::{Source, Workspace};
use outputs::outputs;
use turns::Work;

pub use coordination::DECISION_INSTRUCTION;

impl CodingModules {
    pub(crate) async fn activate(
        &self,
        context: &ActivationContext,
    ) -> Result<ActivationOutput, ActivationError> {
        let graph::ModuleConfig::Coding(config) = &context.module.config else {
            return Err(ActivationError::Failed("not a coding module".to_owned()));
        };
        let label = context.module.display_label().to_owned();
        if config.agents.is_empty() {
            return Err(ActivationError::Failed(format!(
                "\"{label}\" has no agents"
            )));
        }
        let profiles = config
            .agents
            .iter()
            .map(|agent| self.profile(agent.acp_profile_id.as_deref()))
            .collect::<Result<Vec<_>, _>>()?;
        let sandbox = context.settings.sandbox.as_ref().map_err(|unavailable| {
            ActivationError::Failed(format!("\"{label}\": {unavailable}"))
        })?;
        let source = match config.workspace.path.as_deref().map(str::trim) {
            Some(path) if !path.is_empty() => Some(
                self.allowed_source(path, &context.settings.workspace_root)
                    .map_err(|problem| {
                        ActivationError::Failed(format!("\"{label}\": {problem}"))
                    })?,
            ),
            _ => None,
        };
        let folder = context.settings.run_folder(&context.run_id);
        // Its own earlier work, reused from a recorded run, comes first;
        // without a folder of its own, it goes on from the work of the
        // coding module that feeds it.
        let carried = match (reused_work(context, &label)?, &source) {
            (Some(own), _) => Some(own),
            (None, Some(_)) => None,
            (None, None) => upstream_workspace(context, &label)?,
        };
        let source = match (&carried, &source) {
            (Some((folder, commit)), _) => Some(Source {
                folder,
                max_bytes: self.sources.max_copy_bytes,
                at_commit: Some(commit),
            }),
            (None, Some(folder)) => Some(Source {
                folder,
                max_bytes: self.sources.max_copy_bytes,
                at_commit: None,
            }),
            (None, None) => None,
        };
        // A variant works in a workspace of its own.
        let workspace = Workspace::prepare(sandbox, &folder, &context.own_name(), source)
            .await
            .map_err(|problem| ActivationError::Failed(format!("\"{label}\": {problem}")))?;
        let work = Work {
            context,
            config,
            turns: AtomicU32::new(0),
            responses: AtomicU32::new(0),
            re_prompts: AtomicU32::new(0),
            tally: std::sync::Mutex::new(Tally::default()),
            unmerged: std::sync::Mutex::new(Vec::new()),
            decision: std::sync::Mutex::new(None),
            gates: std::sync::Mutex::new(Vec::new()),
            checks_failed: std::sync::Mutex::new(None),
            handed_on: std::sync::Mutex::new(None),
            continued: std::sync::Mutex::new(None),
        };
        let (phases, review) = match config.coordination {
            Coordination::Sequential => {
                (self.sequential(&work, &profiles, &workspace).await?, None)
            }
            Coordination::Parallel => (self.parallel(&work, &profiles, &workspace).await?, None),
            Coordination::ReviewChain => {
                let (phases, review) = self.review_chain(&work, &profiles, &workspace).await?;
                (phases, Some(review))
            }
        };
        let head = workspace.head().await.map_err(ActivationError::Failed)?;
        let mut diff = workspace
            .diff(&workspace.base, &head)
            .await
            .map_err(ActivationError::Failed)?;
        for unmerged in work
            .unmerged
            .lock()
            .map(|list| list.clone())
            .unwrap_or_default()
        {
            diff.push_str(&format!("\n{unmerged}"));
        }
        let files = workspace
            .changed_files(&workspace.base, &head)
            .await
            .map_err(ActivationError::Failed)?;
        let mut output = outputs(&work, &profiles, &phases, review, diff, files);
        hand_on_workspace(context, &head, &mut output);
        output.gates = work
            .gates
            .lock()
            .map(|gates| gates.clone())
            .unwrap_or_default();
        output.checks_failed = work
            .checks_failed
            .lock()
            .ok()
            .and_then(|failed| failed.clone());
        if let Some(gate) = &config.intent_gate {
            let reply = work
                .decision
                .lock()
                .ok()
                .and_then(|decision| decision.clone())
                .unwrap_or_default();
            engine::intent::apply(context, gate, &reply, None, &mut output).await?;
        }
        Ok(output)
    }
}

/// The workspace a coding module upstream left, as the first input that
/// names one says (its `data_out`): where it is on this server and the
/// commit it left. A run from a module reuses an upstream's recorded
/// work, so that is the recorded run's workspace, at its recorded commit.
fn upstream_workspace(
    context: &ActivationContext,
    label: &str,
) -> Result<Option<(PathBuf, String)>, ActivationError> {
    let Some((from, left)) = context.inputs.iter().find_map(|input| {
        let left = input.value.as_bundle()?.source_workspace.clone()?;
        Some((input.source_label.as_str(), left))
    }) else {
        return Ok(None);
    };
    left_on_this_server(context, label, from, &left).map(Some)
}

/// The work this module's own earlier activation left, when that one was
/// reused from a recorded run (a loop back to it after a run from a module
/// further on, PRODUCT §3.15): this one goes on from there.
fn reused_work(
    context: &ActivationContext,
    label: &str,
) -> Result<Option<(PathBuf, String)>, ActivationError> {
    let Some(left) = context.reused_earlier.as_ref().and_then(|earlier| {
        earlier
            .outputs
            .values()
            .find_map(|value| value.as_bundle()?.source_workspace.clone())
    }) else {
        return Ok(None);
    };
    left_on_this_server(context, label, label, &left).map(Some)
}

/// Where the workspace `left` names is on this server, at its commit; an
/// error saying so when it has gone (`from`: whose work it is).
fn left_on_this_server(
    context: &ActivationContext,
    label: &str,
    from: &str,
    left: &wire::bundle::SourceWorkspace,
) -> Result<(PathBuf, String), ActivationError> {
    let folder = context
        .settings
        .run_folder(&left.run_id)
        .path()
        .join(engine::sandbox::folder_name(&left.workspace));
    if !folder.join(".git").is_dir() {
        return Err(ActivationError::Failed(format!(
            "\"{label}\" goes on from the work \"{from}\" left in run {}, and that workspace is no longer on this server (a run's folder is removed after its retention): run from \"{from}\" to do that work again",
            left.run_id
        )));
    }
    Ok((folder, left.commit.clone()))
}

/// Names the workspace this activation leaves, at `head`, on the ports
/// that carry its work, for a coding module downstream to go on from.
fn hand_on_workspace(context: &ActivationContext, head: &str, output: &mut ActivationOutput) {
    let left = wire::bundle::SourceWorkspace {
        run_id: context.run_id.clone(),
        workspace: context.own_name(),
        commit: head.to_owned(),
    };
    for (port, value) in &mut output.ports {
        if [DATA_OUT, EXHAUSTED_OUT, DIFF_OUT].contains(&port.as_str())
            && let engine::bundle::PortValue::Bundle(bundle) = value
        {
            bundle.source_workspace = Some(left.clone());
        }
    }
}

impl CodingModules {
    /// The folder `path` names, with its links resolved, when it is inside
    /// one of the operator's roots (also resolved) and not inside the
    /// server's own workspaces, where other runs work.
    fn allowed_source(&self, path: &str, workspaces: &Path) -> Result<PathBuf, String> {
        let roots: Vec<String> = self
            .sources
            .roots
            .iter()
            .filter_map(|root| std::fs::canonicalize(root).ok())
            .map(|root| root.display().to_string())
            .collect();
        let shown: Vec<String> = self
            .sources
            .roots
            .iter()
            .map(|root| root.display().to_string())
            .collect();
        if self.sources.roots.is_empty() {
            return Err(WorkspacePathProblem::NoRoots.describe(path, &shown));
        }
        // The lexical rule first, so `..` and other folders are refused the
        // way validation words it.
        graph::workspace_roots::check(path, &shown)
            .map_err(|problem| problem.describe(path, &shown))?;
        let resolved = std::fs::canonicalize(path).map_err(|error| {
            format!("the workspace folder {path} cannot be used on this server: {error}")
        })?;
        if !resolved.is_dir() {
            return Err(format!("the workspace folder {path} is not a folder"));
        }
        let text = resolved.display().to_string();
        graph::workspace_roots::check(&text, &roots).map_err(|_| {
            format!(
                "the workspace folder {path} leads to {text} through a link, outside the folders this server allows ({})",
                shown.join(", ")
            )
        })?;
        let workspaces =
            std::fs::canonicalize(workspaces).unwrap_or_else(|_| workspaces.to_path_buf());
        if resolved.starts_with(&workspaces) || workspaces.starts_with(&resolved) {
            return Err(format!(
                "the workspace folder {path} holds or is inside the server's run workspaces ({}), which no graph may copy",
                workspaces.display()
            ));
        }
        Ok(resolved)
    }

    fn profile(&self, id: Option<&str>) -> Result<AcpProfile, ActivationError> {
        let id = id
            .filter(|id| !id.is_empty())
            .unwrap_or(&self.default_profile);
        self.profiles
            .iter()
            .find(|profile| profile.id == id)
            .cloned()
            .ok_or_else(|| {
                ActivationError::Failed(format!(
                    "ACP profile \"{id}\" is not configured on this server"
                ))
            })
    }
}
