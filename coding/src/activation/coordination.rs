//! The three coordination modes of a coding module's agents: sequential,
//! each handed the work of the one before; parallel, each in a worktree of
//! its own, merged at the end; and the review chain, builder then reviewer
//! round after round until the reviewer approves or `max_rounds` is reached.

use engine::activation::{ActivationError, parse_json_reply};
use serde_json::Value;
use wire::activation::TranscriptRole;
use wire::status::ReviewDecision;

use super::prompts::{PROMPT_DIFF_CHARACTERS, agent_prompt, cut};
use super::turns::{Phase, Work, role_of};
use crate::CodingModules;
use crate::profile::AcpProfile;
use crate::workspace::{Workspace, WorktreesCleanup};

/// Appended to the reviewer's last turn in a review chain.
pub const DECISION_INSTRUCTION: &str = "End your reply with your decision as JSON on a line of its own: {\"decision\": \"approve\"} when the work is done, or {\"decision\": \"revise\", \"feedback\": \"what must change\"}.";

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
            let approve = value
                .get("decision")
                .and_then(Value::as_str)
                .and_then(ReviewDecision::parse)
                == Some(ReviewDecision::Approve);
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
    pub(super) async fn sequential(
        &self,
        work: &Work<'_>,
        profiles: &[AcpProfile],
        workspace: &Workspace,
    ) -> Result<Vec<Phase>, ActivationError> {
        let mut phases: Vec<Phase> = Vec::new();
        for (index, (agent, profile)) in work.config.agents.iter().zip(profiles).enumerate() {
            let session = self.session(work, index, profile, workspace).await?;
            let continued = work.continued_source(index);
            let prompt = agent_prompt(
                work.context,
                work.config,
                agent,
                phases.last(),
                continued.as_deref(),
            )?;
            let phase = work
                .phase(&session, agent, workspace, prompt, 1, None)
                .await?;
            // The last agent has the last word: it fixes what the
            // validators find, or answers the gate.
            if index + 1 == work.config.agents.len() {
                work.validate(&session, agent, workspace).await?;
                if let Some(gate) = &work.config.intent_gate {
                    work.decide(&session, agent, gate).await?;
                }
            }
            self.release(work, index, session);
            phases.push(phase);
        }
        Ok(phases)
    }

    pub(super) async fn parallel(
        &self,
        work: &Work<'_>,
        profiles: &[AcpProfile],
        workspace: &Workspace,
    ) -> Result<Vec<Phase>, ActivationError> {
        // One at a time: concurrent `git worktree add`s on one repository
        // read each other's half-written administrative files.
        let cleanup = WorktreesCleanup::arm(workspace);
        let mut worktrees = Vec::new();
        for (index, agent) in work.config.agents.iter().enumerate() {
            worktrees.push(
                workspace
                    .worktree(&format!("{index}-{}", role_of(agent)))
                    .await
                    .map_err(ActivationError::Failed)?,
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
                let prompt = agent_prompt(work.context, work.config, agent, None, None)?;
                let phase = work
                    .phase(&session, agent, &worktree, prompt, 1, None)
                    .await?;
                self.release(work, index, session);
                Ok::<_, ActivationError>((phase, worktree))
            });
        let finished = futures::future::join_all(runs).await;
        cleanup.disarm();
        let mut phases = Vec::new();
        for result in finished {
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
                let head = worktree.head().await.map_err(ActivationError::Failed)?;
                let diff = worktree
                    .diff(&worktree.base, &head)
                    .await
                    .map_err(ActivationError::Failed)?;
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

    pub(super) async fn review_chain(
        &self,
        work: &Work<'_>,
        profiles: &[AcpProfile],
        workspace: &Workspace,
    ) -> Result<(Vec<Phase>, Review), ActivationError> {
        let (Some(builder), Some(reviewer)) =
            (work.config.agents.first(), work.config.agents.get(1))
        else {
            return Err(ActivationError::Failed(format!(
                "\"{}\": a review chain needs two agents, a builder then a reviewer",
                work.context.module.display_label()
            )));
        };
        let (Some(builder_profile), Some(reviewer_profile)) = (profiles.first(), profiles.get(1))
        else {
            return Err(ActivationError::Failed("missing ACP profiles".to_owned()));
        };
        let max_rounds = work.config.max_rounds.max(1);
        let builder_session = self.session(work, 0, builder_profile, workspace).await?;
        let reviewer_session = self.session(work, 1, reviewer_profile, workspace).await?;
        let mut phases = Vec::new();
        let continued = work.continued_source(0);
        let mut builder_prompt = agent_prompt(
            work.context,
            work.config,
            builder,
            None,
            continued.as_deref(),
        )?;
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
                .map_err(ActivationError::Failed)?;
            let mut reviewer_prompt =
                agent_prompt(work.context, work.config, reviewer, Some(&built), None)?;
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
        // The reviewer has the last word.
        if let Some(gate) = &work.config.intent_gate {
            work.decide(&reviewer_session, reviewer, gate).await?;
        }
        self.release(work, 0, builder_session);
        self.release(work, 1, reviewer_session);
        Ok((phases, review))
    }
}

pub(super) struct Review {
    pub(super) approved: bool,
    pub(super) rounds: u32,
    pub(super) feedback: String,
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
}
