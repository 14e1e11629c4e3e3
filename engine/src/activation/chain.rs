//! The re-prompt chain (DOC23 §3.1, PRODUCT §3.2): the primary dispatch,
//! then each re-prompt as a new user turn in the SAME session carrying only
//! its own text and attachments, the naming instruction on the last turn.
//! Agent tasks and red teams are this chain; review gates add a decision.

use graph::config::{AgentConfig, AgentTaskConfig, RedTeamConfig, SessionMode};
use graph::intent::IntentGate;
use graph::kinds::agent_task::ORIGINAL_OUT;
use graph::ports::{
    CONTEXT_IN, DATA_IN, DATA_OUT, RECEIPT_OUT, SIGNAL_OUT, named_output_port_id, reprompt_port_id,
};
use graph::{Attachment, RePrompt};
use wire::content::MergedResponses;
use wire::content::meta::NamedSection;

use super::{ActivationContext, ActivationError, ActivationOutput, Tally};
use crate::bundle::{PortValue, merged_bundle};
use crate::named_outputs;
use crate::prompt::{InputSelection, primary_turn, turn};
use crate::provider::{ProviderInfo, ResponseSchema};
use crate::session::Session;
use wire::event::RunEvent;

pub struct Chain<'a> {
    pub agent: &'a AgentConfig,
    pub instruction: &'a str,
    pub attachments: &'a [Attachment],
    pub re_prompts: &'a [RePrompt],
    pub named_outputs: &'a [String],
    pub session_mode: SessionMode,
    pub session_persist: bool,
    /// Asks the last turn for an intent (PRODUCT §3.8).
    pub gate: Option<&'a IntentGate>,
    /// Tools the turns may call, and how many calls the activation may
    /// make (PRODUCT §3.17).
    pub tools: &'a [graph::tools::ToolChoice],
    pub tool_limit: u32,
}

pub struct ChainResult {
    /// `response_0` … `response_N`.
    pub responses: Vec<String>,
    pub session_key: String,
    pub session: Session,
    pub tally: Tally,
    pub provider: ProviderInfo,
    pub model: String,
}

pub async fn run_chain(
    context: &ActivationContext,
    chain: Chain<'_>,
) -> Result<ChainResult, ActivationError> {
    let (info, provider, model) = context.provider_and_model(chain.agent)?;
    let module_id = &context.module.id;
    let key = context.session_key(chain.session_persist);

    // The session to continue: our own on re-activation (session_persist),
    // or the upstream module's (session_mode: continue).
    let own = (chain.session_persist && context.activation > 1)
        .then(|| context.sessions.get(&key))
        .flatten();
    let upstream = if own.is_none() && chain.session_mode == SessionMode::Continue {
        context
            .bundles_on(DATA_IN)
            .into_iter()
            .chain(context.bundles_on(CONTEXT_IN))
            .find_map(|(input, bundle)| {
                let session = context
                    .sessions
                    .get(bundle.source_session_key.as_deref()?)?;
                Some((input.source_module.clone(), session))
            })
    } else {
        None
    };
    let selection = match (&own, &upstream) {
        (Some(_), _) => InputSelection::FreshOnly,
        (None, Some((source, _))) => InputSelection::AllBut(source),
        (None, None) => InputSelection::All,
    };
    let base = own.or(upstream.as_ref().map(|(_, session)| session.clone()));
    let system = chain
        .agent
        .system
        .as_deref()
        .map(|system| context.render(system))
        .transpose()?;
    let mut session = context.open_session(base, &model, &info.id, system);

    let instruction = context.render_instruction(chain.instruction)?;
    let count = chain.re_prompts.len();
    // The last turn carries the naming instruction and the gate's request.
    let last_turn = |text: String| {
        let text = named_outputs::append_instruction(&text, chain.named_outputs);
        match chain.gate {
            Some(gate) => format!("{text}\n\n{}", gate.instruction()),
            None => text,
        }
    };
    let schema = || {
        chain.gate.map(|gate| ResponseSchema {
            name: graph::intent::SCHEMA_NAME.to_owned(),
            schema: gate.schema(),
        })
    };
    let mut primary = primary_turn(context, &instruction, selection);
    if count == 0 {
        primary = last_turn(primary);
    }
    let attachments = context.settings.attachments.as_ref();
    context.say(
        &mut session,
        turn(attachments, primary, chain.attachments).await?,
    );
    let mut tally = Tally::default();
    let tools = context
        .turn_tools(chain.tools, None, chain.tool_limit)
        .await?;
    let first = context
        .call_with_tools(
            provider.as_ref(),
            &mut session,
            0,
            "Original",
            if count == 0 { schema() } else { None },
            chain.agent,
            tools.as_ref(),
        )
        .await?;
    tally.add(&first);
    keep_answered(context, &chain, &key, &session);
    if count > 0 {
        context.checkpoint().await;
    }
    let mut responses = vec![first.text];

    for (offset, re_prompt) in chain.re_prompts.iter().enumerate() {
        let index = u32::try_from(offset + 1).unwrap_or(u32::MAX);
        context
            .emit(RunEvent::RepromptDispatched {
                module_id: module_id.clone(),
                reprompt_index: index,
                reprompt_count: u32::try_from(count).unwrap_or(u32::MAX),
                variant: None,
            })
            .await;
        let is_last = offset + 1 == count;
        let mut text = context.render(&re_prompt.text)?;
        if is_last {
            text = last_turn(text);
        }
        context.say(
            &mut session,
            turn(attachments, text, &re_prompt.attachments).await?,
        );
        let tools = context
            .turn_tools(
                chain.tools,
                re_prompt.allowed_tools.as_deref(),
                chain.tool_limit,
            )
            .await?;
        let response = context
            .call_with_tools(
                provider.as_ref(),
                &mut session,
                index,
                &format!("Re-prompt {index}"),
                if is_last { schema() } else { None },
                chain.agent,
                tools.as_ref(),
            )
            .await?;
        tally.add(&response);
        keep_answered(context, &chain, &key, &session);
        context
            .emit(RunEvent::RepromptResponse {
                module_id: module_id.clone(),
                reprompt_index: index,
                token_count: response.usage.output_tokens,
                variant: None,
            })
            .await;
        responses.push(response.text);
        if !is_last {
            context.checkpoint().await;
        }
    }
    context.sessions.put(&key, session.clone());
    Ok(ChainResult {
        responses,
        session_key: key,
        session,
        tally,
        provider: info,
        model,
    })
}

/// What the validators of an agent task came to: the fix turns' replies,
/// the gates, and why it gives up if it does.
#[derive(Default)]
struct Fixes {
    responses: Vec<String>,
    gates: Vec<(String, bool)>,
    failed: Option<String>,
}

impl Fixes {
    /// The fix turns' replies after the merged content (`───── Fix k ─────`),
    /// and the gates and the give-up reason on the output.
    fn apply(self, output: &mut ActivationOutput) {
        if let Some((_, PortValue::Bundle(bundle))) =
            output.ports.iter_mut().find(|(port, _)| port == DATA_OUT)
            && let Some(mut merged) = bundle.content_as::<MergedResponses>()
        {
            for (offset, response) in self.responses.iter().enumerate() {
                merged
                    .merged_content
                    .push_str(&format!("\n───── Fix {} ─────\n{response}", offset + 1));
            }
            merged.response_count += self.responses.len();
            output.output_text = merged.merged_content.clone();
            bundle.content = serde_json::to_value(merged).unwrap_or_default();
        }
        output.gates = self.gates;
        output.checks_failed = self.failed;
    }
}

/// Runs an agent task's validators when its chain is done; each failure
/// sends its pattern's prompt as a new turn in the same session (`Fix k`),
/// and the validators run again, up to `on_failure.max_attempts` fixes
/// (PRODUCT §3.11).
async fn validate_and_fix(
    context: &ActivationContext,
    config: &AgentTaskConfig,
    result: &mut ChainResult,
) -> Result<Fixes, ActivationError> {
    let validation = &config.validation;
    let mut fixes = Fixes::default();
    if validation.is_empty() {
        return Ok(fixes);
    }
    let (_, provider, _) = context.provider_and_model(&config.agent_config)?;
    let most = validation.on_failure.max_attempts;
    loop {
        let round = crate::validators::check(context, validation, None).await?;
        fixes.gates = round.gates;
        let Some(failed) = round.failed else {
            return Ok(fixes);
        };
        let done = u32::try_from(fixes.responses.len()).unwrap_or(u32::MAX);
        if done >= most {
            fixes.failed = Some(crate::validators::exhausted(done, &failed));
            return Ok(fixes);
        }
        let fix = done + 1;
        context
            .emit(RunEvent::ModuleFixDispatched {
                module_id: context.module.id.clone(),
                activation: context.activation,
                fix,
                of: most,
                validator: failed.validator.clone(),
            })
            .await;
        context.say(
            &mut result.session,
            turn(context.settings.attachments.as_ref(), failed.prompt, &[]).await?,
        );
        let index =
            u32::try_from(result.responses.len() + fixes.responses.len()).unwrap_or(u32::MAX);
        let reply = context
            .call(
                provider.as_ref(),
                &mut result.session,
                index,
                &format!("Fix {fix}"),
                None,
                &config.agent_config,
            )
            .await?;
        result.tally.add(&reply);
        fixes.responses.push(reply.text);
        if config.session_persist {
            context
                .sessions
                .put(&result.session_key, result.session.clone());
        }
    }
}

/// Keeps a persisting session as of its last answer, so that an attempt
/// that fails further on (a re-prompt's call, the gate's reading) is
/// retried in the conversation so far (PRODUCT §3.9); a turn that got no
/// answer is not kept.
fn keep_answered(context: &ActivationContext, chain: &Chain<'_>, key: &str, session: &Session) {
    if chain.session_persist {
        context.sessions.put(key, session.clone());
    }
}

/// data_out (merged), signal_out and receipt_out of a finished chain.
pub fn standard_outputs(
    context: &ActivationContext,
    result: &ChainResult,
    re_prompt_count: usize,
) -> ActivationOutput {
    let merged = merged_bundle(
        &context.module.id,
        &result.responses,
        re_prompt_count > 0,
        Some(result.session_key.clone()),
    );
    let receipt = context.receipt(
        &result.provider,
        &result.model,
        result.tally,
        u32::try_from(re_prompt_count).unwrap_or(u32::MAX),
    );
    ActivationOutput {
        output_text: merged.as_text(),
        ports: vec![
            (DATA_OUT.to_owned(), PortValue::Bundle(merged)),
            (SIGNAL_OUT.to_owned(), context.signal()),
            (RECEIPT_OUT.to_owned(), PortValue::Receipt(receipt.clone())),
        ],
        receipt: Some(receipt),
        session_key: Some(result.session_key.clone()),
        intent: None,
        state_set: Vec::new(),
        gates: Vec::new(),
        checks_failed: None,
        agent_session: None,
    }
}

pub async fn agent_task(
    context: &ActivationContext,
    config: &AgentTaskConfig,
) -> Result<ActivationOutput, ActivationError> {
    let named: Vec<String> = config
        .named_outputs
        .iter()
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .collect();
    let mut result = run_chain(
        context,
        Chain {
            agent: &config.agent_config,
            instruction: &config.instruction,
            attachments: &config.attachments,
            re_prompts: &config.re_prompts,
            named_outputs: &named,
            session_mode: config.session_mode,
            session_persist: config.session_persist,
            gate: config.intent_gate.as_ref(),
            tools: &config.tools,
            tool_limit: config.tool_call_limit(),
        },
    )
    .await?;
    let fixes = validate_and_fix(context, config, &mut result).await?;
    let mut output = standard_outputs(context, &result, config.re_prompts.len());
    fixes.apply(&mut output);
    if let Some(gate) = &config.intent_gate {
        let last = result.responses.last().map_or("", String::as_str);
        crate::intent::apply(context, gate, last, Some(&result.session_key), &mut output).await?;
        // A repeat or an abort sends nothing on, named outputs included.
        if output
            .intent
            .as_ref()
            .is_some_and(|(intent, _)| intent.port_id().is_none())
        {
            return Ok(output);
        }
    }
    let with_session = |text: &str| {
        let mut bundle = context.text_bundle(text);
        bundle.source_session_key = Some(result.session_key.clone());
        bundle
    };
    if config.separate_outputs {
        for (index, response) in result.responses.iter().enumerate() {
            let port = if index == 0 {
                ORIGINAL_OUT.to_owned()
            } else {
                reprompt_port_id(index)
            };
            output
                .ports
                .push((port, PortValue::Bundle(with_session(response))));
        }
    }
    if !named.is_empty() {
        let last = result
            .responses
            .last()
            .map(String::as_str)
            .unwrap_or_default();
        let sections = named_outputs::extract(last, &named);
        let mut found = std::collections::BTreeMap::new();
        for name in &named {
            // Not labelled: pass the whole last response, and say so.
            let mut bundle = with_session(sections.get(name).map_or(last, String::as_str));
            bundle.add_meta(&NamedSection {
                section_missing: !sections.contains_key(name),
                name: name.clone(),
            });
            if let Some(section) = sections.get(name) {
                found.insert(name.clone(), section.clone());
            }
            output
                .ports
                .push((named_output_port_id(name), PortValue::Bundle(bundle)));
        }
        // A variant's are its own, in the comparison; the experiment
        // keeps the baseline's as the module's.
        if context.variant.is_none()
            && let Ok(mut record) = context.record.lock()
        {
            record.named_outputs = found;
        }
    }
    Ok(output)
}

const RED_TEAM_INSTRUCTION: &str = "Act as a red team. Attack the input above: find its errors, weak \
    arguments, risks and ways it could be misused or fail, and say how each could be exploited.";

pub async fn red_team(
    context: &ActivationContext,
    config: &RedTeamConfig,
) -> Result<ActivationOutput, ActivationError> {
    let instruction = if config.instruction.trim().is_empty() {
        RED_TEAM_INSTRUCTION
    } else {
        &config.instruction
    };
    let result = run_chain(
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
    Ok(standard_outputs(context, &result, config.re_prompts.len()))
}
