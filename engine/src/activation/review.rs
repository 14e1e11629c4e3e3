//! The review gate: the reviewer's re-prompt chain, then a structured
//! decision (`approve` or `revise` with feedback). Approval passes the
//! reviewed input on `approved_out`; revision sends the feedback on
//! `revise_out`, usually wired back upstream. After `max_rounds` requests
//! for revision the reviewed input goes out on `exhausted_out` with the last
//! feedback, rather than loop on (the same rule as a coding review chain's).

use graph::config::{ReviewGateConfig, SessionMode};
use graph::kinds::review_gate::{APPROVED_OUT, REVISE_OUT};
use graph::ports::{DATA_IN, EXHAUSTED_OUT};
use serde::Deserialize;
use serde_json::Value;

use super::chain::{Chain, run_chain, standard_outputs};
use super::{ActivationContext, ActivationError, ActivationOutput, parse_json_reply};
use crate::bundle::PortValue;
use crate::provider::ChatMessage;
use crate::structured::{ReviewReply, review_decision};
use wire::activation::TranscriptRole;
use wire::content::meta::Reviewed;
use wire::status::ReviewDecision;

const REVIEW_INSTRUCTION: &str = "Review the input above. Say what is good, what is wrong or missing, and what would make it better.";

const DECISION_REQUEST: &str = "Now decide. Approve if the work meets its instruction; otherwise ask for \
    revision with specific, actionable feedback. Reply with JSON only: \
    {\"decision\": \"approve\" | \"revise\", \"feedback\": \"…\"}";

pub async fn review_gate(
    context: &ActivationContext,
    config: &ReviewGateConfig,
) -> Result<ActivationOutput, ActivationError> {
    let instruction = if config.instruction.trim().is_empty() {
        REVIEW_INSTRUCTION
    } else {
        &config.instruction
    };
    let mut result = run_chain(
        context,
        Chain {
            agent: &config.agent_config,
            instruction,
            attachments: &[],
            re_prompts: &config.re_prompts,
            named_outputs: &[],
            session_mode: SessionMode::New,
            session_persist: false,
            gate: None,
            tools: &[],
            tool_limit: 0,
        },
    )
    .await?;

    // The decision comes after every re-prompt (DOC23 §3.2, review_chain).
    let (_, provider) = context.provider(&config.agent_config.provider)?;
    let index = u32::try_from(result.responses.len()).unwrap_or(u32::MAX);
    context.say(&mut result.session, ChatMessage::user(DECISION_REQUEST));
    let reply = context
        .call(
            provider.as_ref(),
            &mut result.session,
            index,
            "Decision",
            Some(review_decision()),
            &config.agent_config,
        )
        .await?;
    result.tally.add(&reply);
    let decision = parse_json_reply(&reply.text).ok_or_else(|| {
        ActivationError::Failed(format!(
            "\"{}\": the reviewer's decision is not JSON: {}",
            context.module.display_label(),
            reply.text.chars().take(200).collect::<String>()
        ))
    })?;
    let ReviewReply { decision, feedback } = ReviewReply::deserialize(&decision).map_err(|_| {
        let said = decision
            .get("decision")
            .and_then(Value::as_str)
            .unwrap_or_default();
        ActivationError::Failed(match ReviewDecision::parse(said) {
            Some(_) => format!(
                "\"{}\": the reviewer's decision is not the JSON asked for: {}",
                context.module.display_label(),
                reply.text.chars().take(200).collect::<String>()
            ),
            None => format!(
                "\"{}\": the reviewer decided \"{said}\", not approve or revise",
                context.module.display_label()
            ),
        })
    })?;
    let approved = decision == ReviewDecision::Approve;
    // Out of rounds (graph::ports::EXHAUSTED_OUT): the work goes out on a
    // port of its own, which fails the run when nothing takes it.
    let exhausted = !approved && context.activation >= config.max_rounds.max(1);
    if exhausted {
        context.transcript(
            TranscriptRole::System,
            &format!("Not approved after {} rounds.", config.max_rounds),
        );
    }

    let mut output = standard_outputs(context, &result, config.re_prompts.len());
    let mut reviewed = Reviewed {
        decision,
        round: context.activation,
        feedback: None,
    };
    if approved || exhausted {
        // What was reviewed, passed on unchanged.
        let inputs = context.bundles_on(DATA_IN);
        let mut bundle = match inputs.as_slice() {
            [(_, only)] => only.clone(),
            _ => context.text_bundle(
                inputs
                    .iter()
                    .map(|(_, bundle)| bundle.as_text())
                    .collect::<Vec<_>>()
                    .join("\n\n"),
            ),
        };
        reviewed.feedback = Some(feedback.clone());
        bundle.add_meta(&reviewed);
        let port = if approved {
            APPROVED_OUT
        } else {
            EXHAUSTED_OUT
        };
        output
            .ports
            .push((port.to_owned(), PortValue::Bundle(bundle)));
    } else {
        let mut bundle = context.text_bundle(feedback.clone());
        bundle.add_meta(&reviewed);
        output
            .ports
            .push((REVISE_OUT.to_owned(), PortValue::Bundle(bundle)));
    }
    if let Ok(mut record) = context.record.lock() {
        record
            .named_outputs
            .insert("decision".to_owned(), decision.as_str().to_owned());
        record.named_outputs.insert("feedback".to_owned(), feedback);
    }
    Ok(output)
}
