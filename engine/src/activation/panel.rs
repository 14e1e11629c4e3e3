//! The panel: personas take turns over a number of rounds, each seeing the
//! discussion so far; then a conclusion is drawn. Its own multi-turn model,
//! so it takes no re-prompts.

use graph::config::{PanelConfig, Persona};
use graph::ports::{DATA_OUT, RECEIPT_OUT, SIGNAL_OUT};

use super::{ActivationContext, ActivationError, ActivationOutput, Tally};
use crate::bundle::PortValue;
use crate::prompt::{InputSelection, primary_turn, turn};
use crate::provider::ChatMessage;
use crate::session::Session;

pub async fn panel(
    context: &ActivationContext,
    config: &PanelConfig,
) -> Result<ActivationOutput, ActivationError> {
    let personas: Vec<Persona> = if config.personas.is_empty() {
        vec![
            Persona {
                name: "Advocate".to_owned(),
                perspective: "You argue for the proposal.".to_owned(),
                ..Persona::default()
            },
            Persona {
                name: "Sceptic".to_owned(),
                perspective: "You look for what is wrong with it.".to_owned(),
                ..Persona::default()
            },
        ]
    } else {
        config.personas.clone()
    };
    let (info, provider, model) = context.provider_and_model(&config.agent_config)?;
    let topic = primary_turn(
        context,
        &context.render(&config.instruction)?,
        InputSelection::All,
    );
    let rounds = config.rounds.max(1);
    let mut discussion = String::new();
    let mut tally = Tally::default();
    let mut index = 0;
    for round in 1..=rounds {
        for persona in &personas {
            let perspective = context.render(&persona.perspective)?;
            let mut session = Session {
                provider: info.id.clone(),
                model: model.clone(),
                system: Some(format!(
                    "You are {} on a panel. {perspective}",
                    persona.name
                )),
                messages: Vec::new(),
            };
            let prompt = format!(
                "{topic}\n\n## Discussion so far\n\n{}\n\nGive your contribution as {} (round {round} of {rounds}). Be brief.",
                if discussion.is_empty() {
                    "(nobody has spoken yet)"
                } else {
                    discussion.trim_end()
                },
                persona.name
            );
            context.say(&mut session, turn(None, prompt, &[]).await?);
            let reply = context
                .call(
                    provider.as_ref(),
                    &mut session,
                    index,
                    &format!("{} (round {round})", persona.name),
                    None,
                    &config.agent_config,
                )
                .await?;
            tally.add(&reply);
            discussion.push_str(&format!(
                "**{}** (round {round}): {}\n\n",
                persona.name,
                reply.text.trim()
            ));
            index += 1;
        }
    }
    let mut session = Session {
        provider: info.id.clone(),
        model: model.clone(),
        system: config.agent_config.system.clone(),
        messages: Vec::new(),
    };
    context.say(
        &mut session,
        ChatMessage::user(format!(
            "{topic}\n\n## Discussion\n\n{}\n\nState the panel's conclusion: where it agrees, where it does not, and what follows.",
            discussion.trim_end()
        )),
    );
    let conclusion = context
        .call(
            provider.as_ref(),
            &mut session,
            index,
            "Conclusion",
            None,
            &config.agent_config,
        )
        .await?;
    tally.add(&conclusion);
    let text = format!(
        "{}\n\n## Conclusion\n\n{}",
        discussion.trim_end(),
        conclusion.text.trim()
    );
    let receipt = context.receipt(&info, &model, tally, 0);
    Ok(ActivationOutput {
        output_text: text.clone(),
        ports: vec![
            (
                DATA_OUT.to_owned(),
                PortValue::Bundle(context.text_bundle(text)),
            ),
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
    })
}
