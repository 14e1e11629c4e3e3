//! The kinds that make a single move: input, output, transform and claim
//! extractor.

use graph::config::{AgentConfig, ClaimExtractorConfig, TransformConfig};
use graph::kinds::output::result_key;
use graph::ports::{DATA_IN, DATA_OUT, RECEIPT_OUT, SIGNAL_OUT};
use serde::Deserialize;
use wire::content::meta::InputFiles;

use super::{ActivationContext, ActivationError, ActivationOutput, Tally, parse_json_reply};
use crate::bundle::{ContextBundle, PortValue};
use crate::prompt::{InputSelection, primary_turn, turn};
use crate::provider::ResponseSchema;
use crate::session::SessionStore;
use crate::structured::ClaimsReply;

/// Emits the run's input text, with any text files attached to it.
pub fn input(context: &ActivationContext) -> ActivationOutput {
    let mut text = context.run_input.text.clone();
    for file in &context.run_input.files {
        match std::str::from_utf8(&file.bytes) {
            Ok(body) => text.push_str(&format!(
                "\n\nAttached file `{}`:\n```\n{body}\n```",
                file.name
            )),
            Err(_) => text.push_str(&format!(
                "\n\n(Attached file `{}`, {} bytes, is not text.)",
                file.name,
                file.bytes.len()
            )),
        }
    }
    let mut bundle = context.text_bundle(text.clone());
    if !context.run_input.files.is_empty() {
        bundle.add_meta(&InputFiles {
            files: context
                .run_input
                .files
                .iter()
                .map(|file| file.name.clone())
                .collect(),
        });
    }
    ActivationOutput {
        output_text: text,
        ports: vec![
            (DATA_OUT.to_owned(), PortValue::Bundle(bundle)),
            (SIGNAL_OUT.to_owned(), context.signal()),
        ],
        receipt: None,
        session_key: None,
        intent: None,
        state_set: Vec::new(),
        gates: Vec::new(),
        checks_failed: None,
        agent_session: None,
    }
}

/// Collects what reaches it; the run panel shows it as a result.
pub fn output(context: &ActivationContext) -> ActivationOutput {
    let results: Vec<ContextBundle> = context
        .bundles_on(DATA_IN)
        .into_iter()
        .map(|(_, bundle)| bundle)
        .collect();
    let text = results
        .iter()
        .map(ContextBundle::as_text)
        .collect::<Vec<_>>()
        .join("\n\n");
    if let Ok(mut record) = context.record.lock() {
        for (index, bundle) in results.into_iter().enumerate() {
            record
                .outputs
                .insert(result_key(index + 1), PortValue::Bundle(bundle));
        }
    }
    ActivationOutput {
        output_text: text,
        ports: Vec::new(),
        receipt: None,
        session_key: None,
        intent: None,
        state_set: Vec::new(),
        gates: Vec::new(),
        checks_failed: None,
        agent_session: None,
    }
}

/// One call: the inputs and the instruction; returns the reply text.
async fn single_call(
    context: &ActivationContext,
    agent: &AgentConfig,
    instruction: &str,
    schema: Option<ResponseSchema>,
) -> Result<(String, crate::bundle::Receipt), ActivationError> {
    let (info, provider, model) = context.provider_and_model(agent)?;
    let system = agent
        .system
        .as_deref()
        .map(|system| context.render(system))
        .transpose()?;
    let mut session = context.open_session(None, &model, &info.id, system);
    let instruction = context.render_instruction(instruction)?;
    let prompt = primary_turn(context, &instruction, InputSelection::All);
    context.say(
        &mut session,
        turn(context.settings.attachments.as_ref(), prompt, &[]).await?,
    );
    let reply = context
        .call(
            provider.as_ref(),
            &mut session,
            0,
            "Response",
            schema,
            agent,
        )
        .await?;
    let mut tally = Tally::default();
    tally.add(&reply);
    context.sessions.put(
        &SessionStore::key(&context.module.id, context.activation, false),
        session,
    );
    Ok((reply.text, context.receipt(&info, &model, tally, 0)))
}

fn finish(
    context: &ActivationContext,
    bundle: ContextBundle,
    receipt: crate::bundle::Receipt,
) -> ActivationOutput {
    ActivationOutput {
        output_text: bundle.as_text(),
        ports: vec![
            (DATA_OUT.to_owned(), PortValue::Bundle(bundle)),
            (SIGNAL_OUT.to_owned(), context.signal()),
            (RECEIPT_OUT.to_owned(), PortValue::Receipt(receipt.clone())),
        ],
        receipt: Some(receipt),
        session_key: None,
        intent: None,
        state_set: Vec::new(),
        gates: Vec::new(),
        checks_failed: None,
        agent_session: None,
    }
}

pub async fn transform(
    context: &ActivationContext,
    config: &TransformConfig,
) -> Result<ActivationOutput, ActivationError> {
    let (text, receipt) =
        single_call(context, &config.agent_config, &config.instruction, None).await?;
    Ok(finish(context, context.text_bundle(text), receipt))
}

const CLAIMS_INSTRUCTION: &str = "List every factual claim the input above makes, each as one short, \
    self-contained sentence. Reply with JSON only: {\"claims\": [\"…\"]}";

pub async fn claim_extractor(
    context: &ActivationContext,
    config: &ClaimExtractorConfig,
) -> Result<ActivationOutput, ActivationError> {
    let instruction = if config.instruction.trim().is_empty() {
        CLAIMS_INSTRUCTION.to_owned()
    } else {
        format!("{CLAIMS_INSTRUCTION}\n\n{}", config.instruction)
    };
    let schema = crate::structured::claims();
    let (text, receipt) =
        single_call(context, &config.agent_config, &instruction, Some(schema)).await?;
    let ClaimsReply { claims } = parse_json_reply(&text)
        .and_then(|reply| ClaimsReply::deserialize(reply).ok())
        .ok_or_else(|| {
            ActivationError::Failed(format!(
                "\"{}\": the reply is not a JSON list of claims: {}",
                context.module.display_label(),
                text.chars().take(200).collect::<String>()
            ))
        })?;
    Ok(finish(
        context,
        ContextBundle::typed(&context.module.id, &claims),
        receipt,
    ))
}
