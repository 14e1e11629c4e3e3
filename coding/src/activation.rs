//! One activation of a coding module, exactly as DOC23 §3.2: per agent, its
//! prompt, then each of its re-prompts as a new turn in the same ACP
//! session, then its work captured (commit, diff, changed files, summary,
//! tests). Sequential hands each agent's output to the next; parallel runs
//! every agent in its own session and worktree and waits for all; the
//! review chain loops builder → reviewer until approve or `max_rounds`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use engine::activation::{
    ActivationContext, ActivationError, ActivationOutput, Tally, parse_json_reply,
};
use engine::bundle::{ContextBundle, PortValue, Receipt, content_type, merge_responses};
use engine::prompt::{InputSelection, primary_turn};
use engine::provider::ProviderInfo;
use graph::config::{CodingAgentAssignment, CodingConfig, Coordination, SessionStyle};
use graph::workspace_roots::WorkspacePathProblem;
use serde_json::{Value, json};
use wire::activation::{ResponseRecord, TranscriptRole};
use wire::event::RunEvent;

use crate::CodingModules;
use crate::client::{AgentError, AgentSession, Place, TestRun, TurnEvent};
use crate::profile::AcpProfile;
use crate::workspace::{ChangedFile, Source, Workspace};

/// Diffs longer than this are cut in prompts (never in `diff_out`).
const PROMPT_DIFF_CHARACTERS: usize = 20_000;

/// Appended to the reviewer's last turn in a review chain.
pub const DECISION_INSTRUCTION: &str = "End your reply with your decision as JSON on a line of its own: {\"decision\": \"approve\"} when the work is done, or {\"decision\": \"revise\", \"feedback\": \"what must change\"}.";

/// What one agent did in one phase of the module (its prompt and its
/// re-prompts).
struct Phase {
    role: String,
    agent_name: String,
    /// The reply to the prompt, then one per re-prompt.
    responses: Vec<String>,
    files: Vec<ChangedFile>,
    tests: Vec<TestRun>,
}

impl Phase {
    fn summary(&self) -> &str {
        self.responses.last().map_or("", String::as_str)
    }

    fn header(&self) -> String {
        format!("═══ {}: {} ═══", self.role, self.agent_name)
    }
}

/// Shared by the agents of one activation, parallel ones included.
struct Work<'a> {
    context: &'a ActivationContext,
    config: &'a CodingConfig,
    turns: AtomicU32,
    responses: AtomicU32,
    re_prompts: AtomicU32,
    tally: std::sync::Mutex<Tally>,
    /// Diffs of parallel agents whose work could not be merged.
    unmerged: std::sync::Mutex<Vec<String>>,
}

impl Work<'_> {
    fn module_id(&self) -> &str {
        &self.context.module.id
    }

    fn record(&self, change: impl FnOnce(&mut wire::activation::ActivationRecord)) {
        if let Ok(mut record) = self.context.record.lock() {
            change(&mut record);
        }
    }

    /// One turn: the cap checked, the reply streamed into the event log and
    /// the record as response `index`.
    async fn turn(
        &self,
        session: &AgentSession,
        role: &str,
        label: String,
        text: &str,
    ) -> Result<(String, Vec<TestRun>), ActivationError> {
        let limit = self.config.max_iterations;
        let done = self.turns.fetch_add(1, Ordering::SeqCst);
        if limit > 0 && done >= limit {
            return Err(ActivationError(format!(
                "\"{}\" stopped: its agents reached max_iterations ({limit} turns) before finishing",
                self.context.module.display_label()
            )));
        }
        let index = self.responses.fetch_add(1, Ordering::SeqCst);
        let started = Instant::now();
        self.record(|record| {
            record.responses.push(ResponseRecord {
                index,
                label,
                ..ResponseRecord::default()
            });
        });
        self.context
            .transcript(TranscriptRole::User, &format!("[{role}] {text}"));
        let outcome = session
            .prompt(text, |event| match event {
                TurnEvent::Text(text) => {
                    self.record(|record| {
                        if let Some(response) = record
                            .responses
                            .iter_mut()
                            .find(|response| response.index == index)
                        {
                            response.text.push_str(&text);
                        }
                    });
                    self.context.emit(RunEvent::ModuleOutputDelta {
                        module_id: self.module_id().to_owned(),
                        response_index: index,
                        text,
                    });
                }
                TurnEvent::Note(note) => {
                    self.context
                        .transcript(TranscriptRole::System, &format!("[{role}] {note}"));
                }
            })
            .await
            .map_err(|error| match error {
                AgentError::Cancelled => ActivationError(format!("{role}: the turn was cancelled")),
                AgentError::Failed(message) => ActivationError(format!("{role}: {message}")),
            })?;
        self.context.transcript(
            TranscriptRole::Assistant,
            &format!("[{role}] {}", outcome.text),
        );
        self.record(|record| {
            if let Some(response) = record
                .responses
                .iter_mut()
                .find(|response| response.index == index)
            {
                response.text.clone_from(&outcome.text);
                response.tokens_in = outcome.tokens_in;
                response.tokens_out = outcome.tokens_out;
                response.duration_ms =
                    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
                response.complete = true;
            }
        });
        if let Ok(mut tally) = self.tally.lock() {
            tally.tokens_in += outcome.tokens_in;
            tally.tokens_out += outcome.tokens_out;
        }
        Ok((outcome.text, outcome.tests))
    }

    /// The agent's prompt, then its re-prompts in the same session; then its
    /// work committed. `last_turn_suffix` goes on the phase's last turn (the
    /// reviewer's decision instruction).
    async fn phase(
        &self,
        session: &AgentSession,
        agent: &CodingAgentAssignment,
        workspace: &Workspace,
        prompt: String,
        round: u32,
        last_turn_suffix: Option<&str>,
    ) -> Result<Phase, ActivationError> {
        let role = role_of(agent);
        self.context.emit(RunEvent::CodingAgentStarted {
            module_id: self.module_id().to_owned(),
            agent_role: role.clone(),
            agent_name: session.agent_name.clone(),
            round,
        });
        let round_suffix = if round > 1 {
            format!(" (round {round})")
        } else {
            String::new()
        };
        let count = agent.re_prompts.len();
        let with_suffix = |text: String, last: bool| match (last, last_turn_suffix) {
            (true, Some(suffix)) => format!("{text}\n\n{suffix}"),
            _ => text,
        };
        let before = workspace.head().await.map_err(ActivationError)?;
        let (first, mut tests) = self
            .turn(
                session,
                &role,
                format!("{role} · Original{round_suffix}"),
                &with_suffix(prompt, count == 0),
            )
            .await?;
        let mut responses = vec![first];
        for (offset, re_prompt) in agent.re_prompts.iter().enumerate() {
            let index = u32::try_from(offset + 1).unwrap_or(u32::MAX);
            self.context.emit(RunEvent::CodingRepromptDispatched {
                module_id: self.module_id().to_owned(),
                agent_role: role.clone(),
                reprompt_index: index,
            });
            self.re_prompts.fetch_add(1, Ordering::SeqCst);
            let text = self.context.render(&re_prompt.text)?;
            let (response, more_tests) = self
                .turn(
                    session,
                    &role,
                    format!("{role} · Re-prompt {index}{round_suffix}"),
                    &with_suffix(text, offset + 1 == count),
                )
                .await?;
            tests.extend(more_tests);
            responses.push(response);
            self.context.emit(RunEvent::CodingRepromptResponse {
                module_id: self.module_id().to_owned(),
                agent_role: role.clone(),
                reprompt_index: index,
            });
        }
        let after = workspace
            .commit(&format!("{role} ({}), round {round}", session.agent_name))
            .await
            .map_err(ActivationError)?;
        let files = workspace
            .changed_files(&before, &after)
            .await
            .map_err(ActivationError)?;
        self.context.emit(RunEvent::CodingAgentFinished {
            module_id: self.module_id().to_owned(),
            agent_role: role.clone(),
            round,
            files_changed: u32::try_from(files.len()).unwrap_or(u32::MAX),
        });
        Ok(Phase {
            role,
            agent_name: session.agent_name.clone(),
            responses,
            files,
            tests,
        })
    }
}

fn role_of(agent: &CodingAgentAssignment) -> String {
    let role = agent.role.trim();
    if role.is_empty() {
        "agent".to_owned()
    } else {
        role.to_owned()
    }
}

/// The first turn of an agent: the module's inputs, then its instruction
/// (the agent's override, or the module's), then what it is handed.
fn agent_prompt(
    context: &ActivationContext,
    config: &CodingConfig,
    agent: &CodingAgentAssignment,
    handoff: Option<&Phase>,
) -> Result<String, ActivationError> {
    let instruction = agent
        .instruction_override
        .as_deref()
        .filter(|text| !text.trim().is_empty())
        .unwrap_or(&config.instruction);
    let instruction = context.render(instruction)?;
    let mut prompt = primary_turn(context, &instruction, InputSelection::All);
    if let Some(previous) = handoff {
        prompt.push_str(&format!(
            "\n\n## Handoff from {} ({})\n\n{}",
            previous.role,
            previous.agent_name,
            previous.summary()
        ));
        if !previous.files.is_empty() {
            prompt.push_str("\n\nFiles changed so far: ");
            prompt.push_str(&file_list(&previous.files));
        }
    }
    Ok(prompt)
}

fn file_list(files: &[ChangedFile]) -> String {
    files
        .iter()
        .map(|file| format!("{} ({})", file.path, file.status))
        .collect::<Vec<_>>()
        .join(", ")
}

fn cut(text: &str, characters: usize) -> String {
    match text.char_indices().nth(characters) {
        Some((end, _)) => format!(
            "{}\n… (cut at {characters} characters)",
            text.get(..end).unwrap_or(text)
        ),
        None => text.to_owned(),
    }
}

/// The reviewer's verdict: approve, or revise with feedback. A reply with
/// no readable decision is taken as a request to revise, with the reply as
/// the feedback, so a chatty reviewer still ends by `max_rounds`.
fn decision_of(reply: &str) -> (bool, String) {
    let decision = reply
        .rfind("{\"decision\"")
        .and_then(|start| parse_json_reply(reply.get(start..)?))
        .or_else(|| parse_json_reply(reply));
    match decision {
        Some(value) => {
            let approve = value.get("decision").and_then(Value::as_str) == Some("approve");
            let feedback = value
                .get("feedback")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            (approve, feedback)
        }
        None => (false, reply.to_owned()),
    }
}

impl CodingModules {
    pub(crate) async fn activate(
        &self,
        context: &ActivationContext,
    ) -> Result<ActivationOutput, ActivationError> {
        let graph::ModuleConfig::Coding(config) = &context.module.config else {
            return Err(ActivationError("not a coding module".to_owned()));
        };
        let label = context.module.display_label().to_owned();
        if config.agents.is_empty() {
            return Err(ActivationError(format!("\"{label}\" has no agents")));
        }
        let profiles = config
            .agents
            .iter()
            .map(|agent| self.profile(agent.acp_profile_id.as_deref()))
            .collect::<Result<Vec<_>, _>>()?;
        let sandbox = context
            .settings
            .sandbox
            .as_ref()
            .map_err(|unavailable| ActivationError(format!("\"{label}\": {unavailable}")))?;
        let source = match config.workspace.path.as_deref().map(str::trim) {
            Some(path) if !path.is_empty() => Some(
                self.allowed_source(path, &context.settings.workspace_root)
                    .map_err(|problem| ActivationError(format!("\"{label}\": {problem}")))?,
            ),
            _ => None,
        };
        let folder = context.settings.run_folder(&context.run_id);
        let workspace = Workspace::prepare(
            sandbox,
            &folder,
            &context.module.id,
            source.as_deref().map(|folder| Source {
                folder,
                max_bytes: self.sources.max_copy_bytes,
            }),
        )
        .await
        .map_err(|problem| ActivationError(format!("\"{label}\": {problem}")))?;
        let work = Work {
            context,
            config,
            turns: AtomicU32::new(0),
            responses: AtomicU32::new(0),
            re_prompts: AtomicU32::new(0),
            tally: std::sync::Mutex::new(Tally::default()),
            unmerged: std::sync::Mutex::new(Vec::new()),
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
        let head = workspace.head().await.map_err(ActivationError)?;
        let mut diff = workspace
            .diff(&workspace.base, &head)
            .await
            .map_err(ActivationError)?;
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
            .map_err(ActivationError)?;
        Ok(outputs(&work, &profiles, &phases, review, diff, files))
    }

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
                ActivationError(format!(
                    "ACP profile \"{id}\" is not configured on this server"
                ))
            })
    }

    /// The agent's session: a parked one from an earlier activation when the
    /// module parks its sessions, else a new one.
    async fn session(
        &self,
        work: &Work<'_>,
        index: usize,
        profile: &AcpProfile,
        workspace: &Workspace,
    ) -> Result<std::sync::Arc<AgentSession>, ActivationError> {
        let key = format!("{}/{}/{index}", work.context.run_id, work.module_id());
        if work.config.session_style == SessionStyle::Park
            && let Some(session) = self
                .parked
                .lock()
                .ok()
                .and_then(|mut parked| parked.remove(&key))
            && session.is_open()
        {
            return Ok(session);
        }
        let settings = &work.context.settings;
        let sandbox = settings
            .sandbox
            .as_ref()
            .map_err(|unavailable| ActivationError(unavailable.to_string()))?;
        let session = AgentSession::start(
            profile,
            &Place {
                sandbox,
                folder: &settings.run_folder(&work.context.run_id),
                workspace: &workspace.path,
                commands_enabled: settings.commands_enabled,
            },
            self.idle_timeout,
        )
        .await
        .map_err(|error| {
            let role = work
                .config
                .agents
                .get(index)
                .map(role_of)
                .unwrap_or_default();
            ActivationError(format!("{role} ({}): {error}", profile.name))
        })?;
        Ok(std::sync::Arc::new(session))
    }

    fn release(&self, work: &Work<'_>, index: usize, session: std::sync::Arc<AgentSession>) {
        if work.config.session_style == SessionStyle::Park
            && let Ok(mut parked) = self.parked.lock()
        {
            parked.insert(
                format!("{}/{}/{index}", work.context.run_id, work.module_id()),
                session,
            );
        }
        // Otherwise dropping the last handle closes the session and stops the agent.
    }

    async fn sequential(
        &self,
        work: &Work<'_>,
        profiles: &[AcpProfile],
        workspace: &Workspace,
    ) -> Result<Vec<Phase>, ActivationError> {
        let mut phases: Vec<Phase> = Vec::new();
        for (index, (agent, profile)) in work.config.agents.iter().zip(profiles).enumerate() {
            let session = self.session(work, index, profile, workspace).await?;
            let prompt = agent_prompt(work.context, work.config, agent, phases.last())?;
            let phase = work
                .phase(&session, agent, workspace, prompt, 1, None)
                .await?;
            self.release(work, index, session);
            phases.push(phase);
        }
        Ok(phases)
    }

    async fn parallel(
        &self,
        work: &Work<'_>,
        profiles: &[AcpProfile],
        workspace: &Workspace,
    ) -> Result<Vec<Phase>, ActivationError> {
        // One at a time: concurrent `git worktree add`s on one repository
        // read each other's half-written administrative files.
        let mut worktrees = Vec::new();
        for (index, agent) in work.config.agents.iter().enumerate() {
            worktrees.push(
                workspace
                    .worktree(&format!("{index}-{}", role_of(agent)))
                    .await
                    .map_err(ActivationError)?,
            );
        }
        let runs = work
            .config
            .agents
            .iter()
            .zip(profiles)
            .zip(worktrees)
            .enumerate()
            .map(|(index, ((agent, profile), worktree))| async move {
                let session = self.session(work, index, profile, &worktree).await?;
                let prompt = agent_prompt(work.context, work.config, agent, None)?;
                let phase = work
                    .phase(&session, agent, &worktree, prompt, 1, None)
                    .await?;
                self.release(work, index, session);
                Ok::<_, ActivationError>((phase, worktree))
            });
        let mut phases = Vec::new();
        for result in futures::future::join_all(runs).await {
            let (phase, worktree) = result?;
            if let Err(problem) = workspace.merge(&worktree).await {
                work.context.transcript(
                    TranscriptRole::System,
                    &format!(
                        "[{}] its work was not merged into the workspace: {problem}",
                        phase.role
                    ),
                );
                // Its work still counts: its own diff goes into diff_out.
                let head = worktree.head().await.map_err(ActivationError)?;
                let diff = worktree
                    .diff(&worktree.base, &head)
                    .await
                    .map_err(ActivationError)?;
                if let Ok(mut unmerged) = work.unmerged.lock() {
                    unmerged.push(format!(
                        "═══ {} (not merged: {problem}) ═══\n{diff}",
                        phase.header().trim_matches(['═', ' '])
                    ));
                }
            }
            phases.push(phase);
        }
        Ok(phases)
    }

    async fn review_chain(
        &self,
        work: &Work<'_>,
        profiles: &[AcpProfile],
        workspace: &Workspace,
    ) -> Result<(Vec<Phase>, Review), ActivationError> {
        let (Some(builder), Some(reviewer)) =
            (work.config.agents.first(), work.config.agents.get(1))
        else {
            return Err(ActivationError(format!(
                "\"{}\": a review chain needs two agents, a builder then a reviewer",
                work.context.module.display_label()
            )));
        };
        let (Some(builder_profile), Some(reviewer_profile)) = (profiles.first(), profiles.get(1))
        else {
            return Err(ActivationError("missing ACP profiles".to_owned()));
        };
        let max_rounds = work.config.max_rounds.max(1);
        let builder_session = self.session(work, 0, builder_profile, workspace).await?;
        let reviewer_session = self.session(work, 1, reviewer_profile, workspace).await?;
        let mut phases = Vec::new();
        let mut builder_prompt = agent_prompt(work.context, work.config, builder, None)?;
        let mut round = 1;
        let review = loop {
            let built = work
                .phase(
                    &builder_session,
                    builder,
                    workspace,
                    builder_prompt,
                    round,
                    None,
                )
                .await?;
            let diff = workspace
                .diff(&workspace.base, "HEAD")
                .await
                .map_err(ActivationError)?;
            let mut reviewer_prompt =
                agent_prompt(work.context, work.config, reviewer, Some(&built))?;
            reviewer_prompt.push_str(&format!(
                "\n\n## The builder's changes so far (git diff)\n\n```diff\n{}\n```",
                cut(&diff, PROMPT_DIFF_CHARACTERS)
            ));
            phases.push(built);
            let reviewed = work
                .phase(
                    &reviewer_session,
                    reviewer,
                    workspace,
                    reviewer_prompt,
                    round,
                    Some(DECISION_INSTRUCTION),
                )
                .await?;
            let (approved, feedback) = decision_of(reviewed.summary());
            phases.push(reviewed);
            if approved || round >= max_rounds {
                break Review {
                    approved,
                    rounds: round,
                    feedback,
                };
            }
            round += 1;
            builder_prompt = format!(
                "The reviewer asked for changes:\n\n{feedback}\n\nRevise your work accordingly."
            );
        };
        self.release(work, 0, builder_session);
        self.release(work, 1, reviewer_session);
        Ok((phases, review))
    }
}

struct Review {
    approved: bool,
    rounds: u32,
    feedback: String,
}

fn outputs(
    work: &Work<'_>,
    profiles: &[AcpProfile],
    phases: &[Phase],
    review: Option<Review>,
    diff: String,
    files: Vec<ChangedFile>,
) -> ActivationOutput {
    let context = work.context;
    let module_id = &context.module.id;
    let merged_content = phases
        .iter()
        .map(|phase| format!("{}\n{}", phase.header(), merge_responses(&phase.responses)))
        .collect::<Vec<_>>()
        .join("\n");
    let response_count: usize = phases.iter().map(|phase| phase.responses.len()).sum();
    let has_re_prompts = work
        .config
        .agents
        .iter()
        .any(|agent| !agent.re_prompts.is_empty());
    let mut data = ContextBundle {
        content: json!({
            "merged_content": merged_content,
            "response_count": response_count,
            "has_re_prompts": has_re_prompts,
        }),
        content_type: content_type::MERGED.to_owned(),
        source_module: module_id.clone(),
        source_session_key: None,
        meta: serde_json::Map::new(),
    };
    if let Some(review) = &review {
        data.meta.insert(
            "review_decision".to_owned(),
            json!(if review.approved { "approve" } else { "revise" }),
        );
        data.meta
            .insert("review_rounds".to_owned(), json!(review.rounds));
        data.meta
            .insert("review_feedback".to_owned(), json!(review.feedback));
    }
    let summary = match phases {
        [only] => only.summary().to_owned(),
        _ => phases
            .iter()
            .map(|phase| format!("{}\n{}", phase.header(), phase.summary()))
            .collect::<Vec<_>>()
            .join("\n"),
    };
    let mut ports = vec![
        ("data_out".to_owned(), PortValue::Bundle(data)),
        (
            "diff_out".to_owned(),
            PortValue::Bundle(context.text_bundle(diff)),
        ),
        (
            "files_out".to_owned(),
            PortValue::Bundle(ContextBundle::json(module_id, json!(files))),
        ),
        (
            "summary_out".to_owned(),
            PortValue::Bundle(context.text_bundle(summary)),
        ),
    ];
    if work.config.capture_test_results {
        let last = phases
            .iter()
            .rev()
            .find_map(|phase| phase.tests.last().map(|test| (phase.role.as_str(), test)));
        let results = match last {
            Some((role, test)) => json!({
                "ran": true,
                "agent_role": role,
                "command": test.command,
                "exit_code": test.exit_code,
                "passed": test.passed,
                "output": cut(&test.output, PROMPT_DIFF_CHARACTERS),
            }),
            // DOC23 §2.3: the sentinel when the agents ran no tests.
            None => json!({ "ran": false, "passed": null, "message": "The agents ran no tests." }),
        };
        ports.push((
            "test_results_out".to_owned(),
            PortValue::Bundle(ContextBundle::json(module_id, results)),
        ));
    }
    let tally = work.tally.lock().map(|tally| *tally).unwrap_or_default();
    let provider = ProviderInfo {
        id: format!(
            "acp:{}",
            profiles
                .iter()
                .map(|profile| profile.id.as_str())
                .collect::<Vec<_>>()
                .join("+")
        ),
        label: String::new(),
        models: Vec::new(),
        simulated: profiles.iter().all(|profile| profile.simulated),
    };
    let model = phases
        .iter()
        .map(|phase| phase.agent_name.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect::<Vec<_>>()
        .join(", ");
    let receipt: Receipt = context.receipt(
        &provider,
        &model,
        tally,
        work.re_prompts.load(Ordering::SeqCst),
    );
    ports.push(("signal_out".to_owned(), context.signal()));
    ports.push((
        "receipt_out".to_owned(),
        PortValue::Receipt(receipt.clone()),
    ));
    ActivationOutput {
        output_text: merged_content,
        ports,
        receipt: Some(receipt),
        session_key: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_are_read_from_the_last_json_in_the_reply() {
        assert_eq!(
            decision_of("Looks fine.\n{\"decision\": \"approve\"}"),
            (true, String::new())
        );
        assert_eq!(
            decision_of(
                "I quote {\"decision\": \"approve\"} but\n{\"decision\": \"revise\", \"feedback\": \"add tests\"}"
            ),
            (false, "add tests".to_owned())
        );
        assert_eq!(
            decision_of("no decision at all"),
            (false, "no decision at all".to_owned())
        );
    }

    #[test]
    fn long_text_is_cut_on_a_character_boundary() {
        assert_eq!(cut("short", 10), "short");
        assert_eq!(cut("ééééé", 2), "éé\n… (cut at 2 characters)");
    }
}
