//! The built-in simulated provider ("Simulated"): deterministic, offline,
//! and honest about being fake. It exists so the app runs out of the box and
//! tests are repeatable; it is never presented as a real model.
//!
//! Its replies are built from the conversation: the same history gives the
//! same reply. It streams word by word with a configurable delay, counts
//! tokens as words, follows the named-output instruction, answers structured
//! requests with JSON for their schema, and obeys directives in a prompt:
//! `[sim:revise]` makes a review decision ask for revision, `[sim:fail]`
//! makes the call fail, and `[sim:reply TEXT]` makes every reply of the
//! session from then on exactly TEXT (to the last `]` of its line), so a
//! test or a demo can steer what a condition on a cable reads, e.g.
//! `[sim:reply {"intent": "sales"}]`. `[sim:intent X]` makes a structured
//! gate's reply choose X (any text, so a test can send an alias or an
//! unknown value), `[sim:intent repeat, next]` one per attempt.
//! `[sim:fail before attempt N]` fails while the attempt a retried
//! activation's note names is below N (a first attempt is 1), and
//! `[sim:sleep S]` waits S seconds before it answers, for timeouts.
//!
//! Tools (PRODUCT §3.17): a line `[sim:tool NAME {ARGUMENTS}]` in a turn
//! makes the first reply of that turn call tool NAME with those arguments
//! (several lines, several calls at once), when the request offers a tool
//! of that name; once their results are back it answers, saying what they
//! gave. `[sim:tool-forever NAME {ARGUMENTS}]` calls it again after every
//! result, as a model that never stops would.

use std::time::Duration;

use serde_json::Value;
use wire::content::CriterionScore;
use wire::status::ReviewDecision;

use super::{
    ChatRequest, ChatResponse, ContentPart, DeltaSink, Provider, ProviderError, ProviderFuture,
    Role, ToolCall, Usage,
};
use crate::structured::{
    self, ClaimsReply, ComparisonReply, ReviewReply, TargetReply, VariantReply,
};

pub const PROVIDER_ID: &str = "sim";
pub const MODELS: [&str; 2] = ["sim-1", "sim-long"];

#[derive(Clone, Debug)]
pub struct SimProvider {
    /// Delay per streamed word; zero for tests and benchmarks.
    pub latency_per_token: Duration,
    /// Length of a plain reply, in words (`sim-long` writes four times more).
    pub words_per_reply: usize,
}

impl Default for SimProvider {
    fn default() -> SimProvider {
        SimProvider {
            latency_per_token: Duration::ZERO,
            words_per_reply: 36,
        }
    }
}

/// Sentences a simulated reply is made of, picked by the conversation's hash.
const SENTENCES: [&str; 12] = [
    "The main point is stated first, with the reasoning that supports it.",
    "Each claim is paired with an example a reader can check.",
    "Where the evidence is thin, the text says so instead of overstating it.",
    "The structure moves from the problem to the options to a recommendation.",
    "Two counter-arguments are addressed directly rather than ignored.",
    "Jargon is replaced with plain words where it does not carry meaning.",
    "The conclusion restates the recommendation and what it depends on.",
    "Open questions are listed so that a reviewer knows what is not settled.",
    "Numbers are given with their source and the date they refer to.",
    "The opening paragraph says who the text is for and what it asks of them.",
    "Risks are named with the condition that would trigger each one.",
    "Every section ends with the decision or action it leads to.",
];

/// FNV-1a: a stable hash, the same on every machine and build.
fn fingerprint(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn words(text: &str) -> u64 {
    text.split_whitespace().count() as u64
}

fn first_line(text: &str, limit: usize) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty() && !line.starts_with('#'))
        .unwrap_or_default();
    let mut short: String = line.chars().take(limit).collect();
    if line.chars().count() > limit {
        short.push('…');
    }
    short
}

/// Names from "- 📄 Name" lines of the named-output instruction.
fn requested_sections(prompt: &str) -> Vec<String> {
    if !prompt.contains("label the following sections clearly") {
        return Vec::new();
    }
    prompt
        .lines()
        .filter_map(|line| line.trim().strip_prefix("- 📄 "))
        .map(|name| name.trim().to_owned())
        .collect()
}

/// The text of the conversation's last user turn.
fn last_user_text(request: &ChatRequest) -> String {
    request
        .messages
        .iter()
        .rev()
        .find(|message| message.role == Role::User)
        .map(|message| message.text())
        .unwrap_or_default()
}

impl SimProvider {
    fn reply_text(&self, request: &ChatRequest) -> Result<String, ProviderError> {
        let turn = request
            .messages
            .iter()
            .filter(|message| message.role == Role::User)
            .count();
        let last = last_user_text(request);
        if last.contains("[sim:fail]") {
            return Err(ProviderError::fatal(
                "the simulated provider was told to fail ([sim:fail])",
            ));
        }
        if let Some(until) = directive_text(&last, "[sim:fail before attempt ")
            .and_then(|number| number.parse::<usize>().ok())
        {
            let attempt = attempt_of(request);
            if attempt < until {
                return Err(ProviderError::fatal(format!(
                    "the simulated provider was told to fail before attempt {until}, and this is attempt {attempt}"
                )));
            }
        }
        // The latest directive in the session steers every reply after it,
        // re-prompts' included, so a chain's last response obeys it too.
        let directed = request
            .messages
            .iter()
            .rev()
            .filter(|message| message.role == Role::User)
            .find_map(|message| directed_reply(&message.text()));
        if let Some(reply) = directed {
            return Ok(reply);
        }
        if let Some(schema) = &request.response_schema {
            return Ok(structured_reply(&schema.name, &schema.schema, request));
        }
        let history: String = request
            .messages
            .iter()
            .map(|message| message.text())
            .collect::<Vec<_>>()
            .join("\n");
        let mut seed = fingerprint(&format!("{}|{history}", request.model));
        let length = if request.model == "sim-long" {
            self.words_per_reply * 4
        } else {
            self.words_per_reply
        };
        let messages = request.messages.len();
        let mut reply = format!(
            "Simulated reply {turn} ({}, {messages} message{} in session) to \"{}\":",
            request.model,
            if messages == 1 { "" } else { "s" },
            first_line(&last, 60)
        );
        let mut written = 0;
        while written < length {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let sentence = SENTENCES[usize::try_from(seed >> 60).unwrap_or(0) % SENTENCES.len()];
            reply.push(' ');
            reply.push_str(sentence);
            written += sentence.split_whitespace().count();
        }
        for name in requested_sections(&last) {
            reply.push_str(&format!(
                "\n📄 {name}\nSimulated {name} section of reply {turn}."
            ));
        }
        Ok(reply)
    }
}

/// The messages of the turn being answered: those after its user message
/// (the replies and tool results so far).
fn this_turn(request: &ChatRequest) -> &[super::ChatMessage] {
    let start = request
        .messages
        .iter()
        .rposition(|message| message.role == Role::User)
        .map_or(0, |position| position + 1);
    &request.messages[start..]
}

/// The calls a turn's `[sim:tool …]` directives ask for now: on its first
/// reply, or on every reply for `[sim:tool-forever …]`; only of tools the
/// request offers.
fn tool_calls_asked(request: &ChatRequest) -> Vec<ToolCall> {
    if request.tools.is_empty() {
        return Vec::new();
    }
    let last = last_user_text(request);
    let replies = this_turn(request)
        .iter()
        .filter(|message| message.role == Role::Assistant)
        .count();
    let mut calls = Vec::new();
    for line in last.lines() {
        let (forever, rest) = if let Some(rest) = line.trim().strip_prefix("[sim:tool-forever ") {
            (true, rest)
        } else if let Some(rest) = line.trim().strip_prefix("[sim:tool ") {
            (false, rest)
        } else {
            continue;
        };
        if replies > 0 && !forever {
            continue;
        }
        let Some(end) = rest.rfind(']') else { continue };
        let directive = rest[..end].trim();
        let (name, arguments) = directive.split_once(' ').unwrap_or((directive, "{}"));
        if !request.tools.iter().any(|tool| tool.name == name) {
            continue;
        }
        calls.push(ToolCall {
            id: format!(
                "sim_call_{}_{replies}_{}",
                request.messages.len(),
                calls.len()
            ),
            name: name.to_owned(),
            arguments: serde_json::from_str(arguments.trim())
                .unwrap_or_else(|_| Value::String(arguments.trim().to_owned())),
        });
    }
    calls
}

/// What the tools of this turn gave back, as the answer says it.
fn tool_results_said(request: &ChatRequest) -> String {
    let turn = this_turn(request);
    let name_of = |call_id: &str| {
        turn.iter()
            .flat_map(super::ChatMessage::tool_calls)
            .find(|call| call.id == call_id)
            .map_or("a tool", |call| call.name.as_str())
            .to_owned()
    };
    let said: Vec<String> = turn
        .iter()
        .filter(|message| message.role == Role::Tool)
        .flat_map(|message| &message.content)
        .filter_map(|part| match part {
            ContentPart::ToolResult {
                call_id,
                text,
                is_error,
            } => Some(format!(
                "{}{} → {}",
                name_of(call_id),
                if *is_error { " failed" } else { "" },
                first_line(text, 120)
            )),
            _ => None,
        })
        .collect();
    if said.is_empty() {
        String::new()
    } else {
        let said = said.join("; ");
        // A result that ends a sentence is not given a second stop.
        let stop = if said.ends_with(['.', '!', '?']) {
            ""
        } else {
            "."
        };
        format!(" The tools said: {said}{stop}")
    }
}

/// The TEXT of a `[sim:reply TEXT]` directive.
fn directed_reply(prompt: &str) -> Option<String> {
    directive_text(prompt, "[sim:reply ")
}

/// What follows `opening` to the last `]` of its line.
fn directive_text(prompt: &str, opening: &str) -> Option<String> {
    let start = prompt.find(opening)?;
    let rest = &prompt[start + opening.len()..];
    let line = rest.lines().next().unwrap_or_default();
    let end = line.rfind(']')?;
    Some(line[..end].trim().to_owned())
}

/// The values a schema's `enum` at `pointer` allows.
fn enum_names(schema: &Value, pointer: &str) -> Vec<String> {
    schema
        .pointer(pointer)
        .and_then(Value::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// A JSON reply for the schemas the engine asks for.
fn structured_reply(name: &str, schema: &Value, request: &ChatRequest) -> String {
    let everything: String = request
        .messages
        .iter()
        .map(|message| message.text())
        .collect::<Vec<_>>()
        .join("\n");
    // Scores on the schema's scale for each criterion it names, the same
    // for the same text.
    let scores = |criteria_at: &str, own: &str, whose: &str| -> Vec<CriterionScore> {
        let maximum = schema
            .pointer(&format!("{criteria_at}/score/maximum"))
            .and_then(Value::as_u64)
            .unwrap_or(10);
        enum_names(schema, &format!("{criteria_at}/criterion/enum"))
            .into_iter()
            .map(|criterion| CriterionScore {
                score: (fingerprint(&format!("{criterion}|{own}")) % (maximum + 1)).into(),
                reasoning: format!("Simulated reasoning for {whose}{criterion}."),
                criterion,
            })
            .collect()
    };
    let reply = match name {
        structured::REVIEW_DECISION => {
            let reply = if everything.contains("[sim:revise]") {
                ReviewReply {
                    decision: ReviewDecision::Revise,
                    feedback:
                        "Simulated feedback: tighten the argument and cite a source for each claim."
                            .to_owned(),
                }
            } else {
                ReviewReply {
                    decision: ReviewDecision::Approve,
                    feedback: "Simulated approval: the work meets the instruction.".to_owned(),
                }
            };
            serde_json::to_string(&reply)
        }
        structured::JUDGE_SCORES => serde_json::to_string(&TargetReply {
            scores: scores("/properties/scores/items/properties", &everything, ""),
            summary: "Simulated verdict.".to_owned(),
        }),
        structured::JUDGE_COMPARISON => {
            let item = "/properties/variants/items/properties";
            // Scored on the variant's own text, so that a different text
            // may score differently.
            let variants = enum_names(schema, &format!("{item}/variant/enum"))
                .into_iter()
                .map(|variant| {
                    let own = everything
                        .split(&format!("## Variant \"{variant}\""))
                        .nth(1)
                        .and_then(|rest| rest.split("\n## Variant").next())
                        .unwrap_or_default();
                    VariantReply {
                        scores: scores(
                            &format!("{item}/scores/items/properties"),
                            own,
                            &format!("{variant} on "),
                        ),
                        variant,
                    }
                })
                .collect();
            serde_json::to_string(&ComparisonReply {
                variants,
                summary: "Simulated comparison.".to_owned(),
            })
        }
        graph::intent::SCHEMA_NAME => serde_json::to_string(&intent_reply(schema, request)),
        structured::CLAIMS => {
            let last = last_user_text(request);
            let claims: Vec<String> = last
                .split(['.', '\n'])
                .map(str::trim)
                .filter(|sentence| words(sentence) >= 4 && !sentence.starts_with('#'))
                .take(5)
                .map(|sentence| format!("{sentence}."))
                .collect();
            serde_json::to_string(&ClaimsReply { claims })
        }
        _ => Ok("{}".to_owned()),
    };
    reply.unwrap_or_default()
}

/// A reply to a structured gate: the intent a `[sim:intent …]` directive
/// names (`[sim:intent repeat, next]` says one per attempt, the last one
/// staying), else the first the schema allows; for a handoff field held to
/// values, the one the person's text mentions first.
fn intent_reply(schema: &Value, request: &ChatRequest) -> Value {
    let directive = request
        .messages
        .iter()
        .rev()
        .filter(|message| message.role == Role::User)
        .find_map(|message| directive_text(&message.text(), "[sim:intent "));
    // The person's words: inputs, not the instruction or the gate's request.
    let person = request
        .messages
        .iter()
        .filter(|message| message.role == Role::User)
        .map(|message| {
            let text = message.text();
            let end = ["## Instruction", graph::intent::INSTRUCTION_HEADING]
                .iter()
                .filter_map(|marker| text.find(marker))
                .min()
                .unwrap_or(text.len());
            text[..end].to_lowercase()
        })
        .collect::<Vec<_>>()
        .join("\n");
    let attempt = attempt_of(request);
    let mut intent_placed = false;
    fill(schema, &mut |name, leaf| {
        let choices: Vec<&str> = leaf
            .get("enum")
            .and_then(Value::as_array)
            .map(|values| values.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if !intent_placed && !choices.is_empty() {
            intent_placed = true;
            let said = directive.as_ref().and_then(|list| {
                let items: Vec<&str> = list.split(',').map(str::trim).collect();
                items
                    .get(attempt.saturating_sub(1).min(items.len().saturating_sub(1)))
                    .map(|item| (*item).to_owned())
            });
            return Value::String(said.unwrap_or_else(|| choices[0].to_owned()));
        }
        if name == graph::intent::REASON_FIELD {
            return Value::String("Simulated reason for this decision.".to_owned());
        }
        let mentioned = choices
            .iter()
            .filter_map(|choice| Some((person.find(&choice.to_lowercase())?, *choice)))
            .min();
        match mentioned
            .map(|(_, choice)| choice)
            .or(choices.first().copied())
        {
            Some(choice) => Value::String(choice.to_owned()),
            None => Value::String(format!("Simulated {name}.")),
        }
    })
}

/// The attempt a repeated activation's note names, else 1.
fn attempt_of(request: &ChatRequest) -> usize {
    request
        .messages
        .iter()
        .filter(|message| message.role == Role::User)
        .filter_map(|message| {
            let text = message.text();
            let start = text.find("(attempt ")? + "(attempt ".len();
            let digits: String = text[start..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().ok()
        })
        .max()
        .unwrap_or(1)
}

/// A value for an object schema, each leaf from `leaf(name, schema)`, in
/// the schema's order.
fn fill(schema: &Value, leaf: &mut dyn FnMut(&str, &Value) -> Value) -> Value {
    let mut object = serde_json::Map::new();
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            let value = if property.get("type").and_then(Value::as_str) == Some("object") {
                fill(property, leaf)
            } else {
                leaf(name, property)
            };
            object.insert(name.clone(), value);
        }
    }
    Value::Object(object)
}

impl Provider for SimProvider {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_delta: DeltaSink<'a>,
    ) -> ProviderFuture<'a> {
        Box::pin(async move {
            if let Some(seconds) = directive_text(&last_user_text(request), "[sim:sleep ")
                .and_then(|seconds| seconds.parse::<u64>().ok())
            {
                tokio::time::sleep(Duration::from_secs(seconds)).await;
            }
            let tool_calls = tool_calls_asked(request);
            let text = if tool_calls.is_empty() {
                let mut text = self.reply_text(request)?;
                if directed_reply(&last_user_text(request)).is_none() {
                    text.push_str(&tool_results_said(request));
                }
                text
            } else {
                String::new()
            };
            let mut first = true;
            for word in text.split_inclusive(' ') {
                if !first && !self.latency_per_token.is_zero() {
                    tokio::time::sleep(self.latency_per_token).await;
                }
                first = false;
                on_delta(word);
            }
            let input_tokens = request.system.as_deref().map_or(0, words)
                + request
                    .messages
                    .iter()
                    .map(|message| words(&message.text()))
                    .sum::<u64>();
            Ok(ChatResponse {
                usage: Usage {
                    input_tokens,
                    output_tokens: words(&text),
                    cached_input_tokens: 0,
                },
                text,
                finish_reason: Some(
                    if tool_calls.is_empty() {
                        "stop"
                    } else {
                        "tool_calls"
                    }
                    .to_owned(),
                ),
                tool_calls,
                cost: None,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::ChatMessage;
    use serde_json::json;

    fn request(messages: Vec<ChatMessage>) -> ChatRequest {
        ChatRequest {
            model: "sim-1".to_owned(),
            system: None,
            messages,
            temperature: None,
            max_tokens: None,
            response_schema: None,
            tools: Vec::new(),
        }
    }

    async fn complete(request: &ChatRequest) -> (ChatResponse, String) {
        let mut streamed = String::new();
        let mut sink = |text: &str| streamed.push_str(text);
        let response = SimProvider::default()
            .complete(request, &mut sink)
            .await
            .unwrap();
        (response, streamed)
    }

    #[tokio::test]
    async fn replies_are_deterministic_streamed_and_counted() {
        let conversation = request(vec![ChatMessage::user("Write about tides")]);
        let (first, streamed) = complete(&conversation).await;
        let (second, _) = complete(&conversation).await;
        assert_eq!(first, second);
        assert_eq!(streamed, first.text);
        assert!(first.text.starts_with(
            "Simulated reply 1 (sim-1, 1 message in session) to \"Write about tides\":"
        ));
        assert_eq!(first.usage.input_tokens, 3);
        assert_eq!(first.usage.output_tokens, words(&first.text));
    }

    #[tokio::test]
    async fn later_turns_see_the_history() {
        let conversation = request(vec![
            ChatMessage::user("Write"),
            ChatMessage::assistant("Draft"),
            ChatMessage::user("Review it"),
        ]);
        let (response, _) = complete(&conversation).await;
        assert!(
            response
                .text
                .starts_with("Simulated reply 2 (sim-1, 3 messages in session) to \"Review it\"")
        );
    }

    #[tokio::test]
    async fn named_sections_are_produced_when_asked() {
        let conversation = request(vec![ChatMessage::user(
            "Finish.\nWhen producing your final output, label the following sections clearly:\n- 📄 Analysis\n- 📄 Summary",
        )]);
        let (response, _) = complete(&conversation).await;
        assert!(
            response
                .text
                .contains("\n📄 Analysis\nSimulated Analysis section")
        );
        assert!(response.text.contains("\n📄 Summary\n"));
    }

    #[tokio::test]
    async fn directives_fail_revise_and_reply() {
        let mut sink = |_: &str| {};
        let steered = request(vec![ChatMessage::user(
            "Classify this. [sim:reply {\"intent\": \"sales\", \"tags\": [1]}]\nMore text",
        )]);
        let (response, _) = complete(&steered).await;
        assert_eq!(response.text, "{\"intent\": \"sales\", \"tags\": [1]}");
        // A re-prompt later in the session is answered the same way.
        let mut later = steered.clone();
        later
            .messages
            .push(ChatMessage::assistant(response.text.clone()));
        later.messages.push(ChatMessage::user("Check your answer."));
        assert_eq!(complete(&later).await.0.text, response.text);
        let failing = request(vec![ChatMessage::user("please [sim:fail]")]);
        assert!(
            SimProvider::default()
                .complete(&failing, &mut sink)
                .await
                .is_err()
        );

        let mut review = request(vec![ChatMessage::user("Review this [sim:revise]")]);
        review.response_schema = Some(super::super::ResponseSchema {
            name: structured::REVIEW_DECISION.to_owned(),
            schema: json!({}),
        });
        let (response, _) = complete(&review).await;
        let decision: Value = serde_json::from_str(&response.text).unwrap();
        assert_eq!(decision["decision"], "revise");
    }
}
