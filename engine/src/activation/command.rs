//! `step.command`: a shell command as a validator (Climpt validators, Cloche
//! `run`), run confined as `shell` says; it fires `pass_out` on exit 0 and
//! `fail_out` otherwise.

use graph::config::CommandConfig;
use graph::kinds::command::PASS_OUT;
use graph::ports::{FAIL_OUT, SIGNAL_OUT};
use wire::content::meta::CommandRan;

use super::{ActivationContext, ActivationError, ActivationOutput, shell};
use crate::bundle::PortValue;

pub async fn command(
    context: &ActivationContext,
    config: &CommandConfig,
) -> Result<ActivationOutput, ActivationError> {
    let command = shell::script(context, &config.command)?;
    let ran = shell::run(context, &command, &[]).await?;
    let text = ran.text();
    let mut bundle = context.text_bundle(text.clone());
    bundle.add_meta(&CommandRan {
        exit_code: ran.exit_code,
        command: command.text.clone(),
    });
    context.transcript(
        wire::activation::TranscriptRole::User,
        &format!("$ {command}"),
    );
    context.transcript(wire::activation::TranscriptRole::Assistant, &text);
    Ok(ActivationOutput {
        output_text: text,
        ports: vec![
            (
                if ran.success { PASS_OUT } else { FAIL_OUT }.to_owned(),
                PortValue::Bundle(bundle),
            ),
            (SIGNAL_OUT.to_owned(), context.signal()),
        ],
        receipt: None,
        session_key: None,
        intent: None,
        state_set: ran.state_set,
        gates: Vec::new(),
        checks_failed: None,
        agent_session: None,
    })
}
