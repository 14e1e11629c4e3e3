//! What a coding agent's assignment asks of its ACP session — a model
//! (`agent_config.model`), a session mode (`acp_mode`), and the session to
//! take up when it continues one — with the model and mode matched against
//! what the agent offered when the session opened: its modes
//! (`session/set_mode`) and its configuration options, of which one in the
//! `model` category picks the model (`session/set_config_option`). Asking
//! for something the agent does not offer is an error that says what it
//! does offer, never a silent default.

use serde_json::Value;

/// What the assignment asks for; `None` leaves the agent's own default.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionChoices {
    pub model: Option<String>,
    pub mode: Option<String>,
    /// The id of an ACP session of the same agent to take up with
    /// `session/load` rather than open a new one.
    pub continue_session: Option<String>,
}

/// What to send once the session is open.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChoiceRequests {
    /// A mode id for `session/set_mode`.
    pub mode: Option<String>,
    /// A configuration option and the value for `session/set_config_option`.
    pub option: Option<(String, String)>,
}

impl SessionChoices {
    /// Refuses a mode the operator did not allow for `profile` (its
    /// `modes`), before the agent is even started: a graph never picks how
    /// much an agent may do without asking.
    pub fn allowed_by(&self, profile: &crate::profile::AcpProfile) -> Result<(), String> {
        match &self.mode {
            Some(mode) if !profile.modes.contains(mode) => Err(if profile.modes.is_empty() {
                format!(
                    "the server's operator allows no session mode for \"{}\", so mode \"{mode}\" cannot be chosen; leave the mode empty",
                    profile.name
                )
            } else {
                let allowed: Vec<&str> = profile.modes.iter().map(String::as_str).collect();
                format!(
                    "the server's operator allows no session mode \"{mode}\" for \"{}\"; allowed: {}",
                    profile.name,
                    quoted(&allowed)
                )
            }),
            _ => Ok(()),
        }
    }
}

/// Matches `choices` against the agent's `session/new` response (as JSON).
pub fn requests(choices: &SessionChoices, response: &Value) -> Result<ChoiceRequests, String> {
    let mut requests = ChoiceRequests::default();
    if let Some(mode) = &choices.mode {
        let offered = offered_modes(response);
        if offered.is_empty() {
            return Err(format!(
                "the agent offers no session modes, so mode \"{mode}\" cannot be chosen; leave the mode empty"
            ));
        }
        if !offered.contains(&mode.as_str()) {
            return Err(format!(
                "the agent has no session mode \"{mode}\"; it offers {}",
                quoted(&offered)
            ));
        }
        requests.mode = Some(mode.clone());
    }
    if let Some(model) = &choices.model {
        let option = model_option(response);
        let Some(option) = option else {
            return Err(format!(
                "the agent offers no model choice over ACP, so model \"{model}\" cannot be chosen; leave the model empty to use the agent's own"
            ));
        };
        let values = select_values(option);
        if !values.contains(&model.as_str()) {
            return Err(format!(
                "the agent has no model \"{model}\"; it offers {}",
                quoted(&values)
            ));
        }
        let id = option["id"].as_str().unwrap_or_default().to_owned();
        requests.option = Some((id, model.clone()));
    }
    Ok(requests)
}

/// The session modes the agent offers (`modes.availableModes`).
fn offered_modes(response: &Value) -> Vec<&str> {
    response
        .pointer("/modes/availableModes")
        .and_then(Value::as_array)
        .map(|modes| {
            modes
                .iter()
                .filter_map(|mode| mode["id"].as_str())
                .collect()
        })
        .unwrap_or_default()
}

/// The agent's configuration option that picks the model: a select of
/// the `model` category.
fn model_option(response: &Value) -> Option<&Value> {
    response
        .get("configOptions")
        .and_then(Value::as_array)?
        .iter()
        .find(|option| option["category"] == "model" && option["type"] == "select")
}

/// What the agent said it offers when its session opened, as
/// `GET /api/providers` lists it for the editor.
pub fn offers(response: &Value, load_session: bool) -> wire::providers::AgentOffers {
    let owned = |items: Vec<&str>| items.into_iter().map(str::to_owned).collect();
    wire::providers::AgentOffers {
        models: owned(
            model_option(response)
                .map(select_values)
                .unwrap_or_default(),
        ),
        modes: owned(offered_modes(response)),
        load_session,
    }
}

/// The values a select option offers, its groups' included.
fn select_values(option: &Value) -> Vec<&str> {
    let mut values = Vec::new();
    for entry in option["options"].as_array().into_iter().flatten() {
        match entry.get("options").and_then(Value::as_array) {
            Some(group) => values.extend(group.iter().filter_map(|item| item["value"].as_str())),
            None => values.extend(entry["value"].as_str()),
        }
    }
    values
}

fn quoted(items: &[&str]) -> String {
    items
        .iter()
        .map(|item| format!("\"{item}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn offered() -> Value {
        json!({
            "sessionId": "s1",
            "modes": {"currentModeId": "code", "availableModes": [{"id": "code", "name": "Code"}, {"id": "ask", "name": "Ask"}]},
            "configOptions": [
                {"id": "effort", "name": "Effort", "type": "select", "currentValue": "low", "options": [{"value": "low", "name": "Low"}]},
                {"id": "model", "name": "Model", "category": "model", "type": "select", "currentValue": "a",
                 "options": [{"group": "fast", "name": "Fast", "options": [{"value": "a", "name": "A"}]}, {"value": "b", "name": "B"}]}
            ]
        })
    }

    fn choose(
        model: Option<&str>,
        mode: Option<&str>,
        response: &Value,
    ) -> Result<ChoiceRequests, String> {
        requests(
            &SessionChoices {
                model: model.map(str::to_owned),
                mode: mode.map(str::to_owned),
                continue_session: None,
            },
            response,
        )
    }

    #[test]
    fn a_model_and_a_mode_the_agent_offers_are_sent() {
        assert_eq!(
            choose(Some("a"), Some("ask"), &offered()),
            Ok(ChoiceRequests {
                mode: Some("ask".to_owned()),
                option: Some(("model".to_owned(), "a".to_owned())),
            })
        );
        assert_eq!(
            choose(Some("b"), None, &offered()).unwrap().option,
            Some(("model".to_owned(), "b".to_owned()))
        );
        assert_eq!(
            choose(None, None, &json!({"sessionId": "s"})),
            Ok(ChoiceRequests::default())
        );
    }

    #[test]
    fn a_mode_is_the_operators_to_allow() {
        let mut profile = crate::profile::AcpProfile::simulated(std::path::Path::new("patchbay"));
        profile.name = "Claude Code".to_owned();
        profile.modes = vec!["default".to_owned(), "plan".to_owned()];
        let asking = |mode: Option<&str>| SessionChoices {
            model: Some("any".to_owned()),
            mode: mode.map(str::to_owned),
            continue_session: None,
        };
        assert_eq!(asking(Some("plan")).allowed_by(&profile), Ok(()));
        assert_eq!(asking(None).allowed_by(&profile), Ok(()));
        assert_eq!(
            asking(Some("bypassPermissions")).allowed_by(&profile),
            Err("the server's operator allows no session mode \"bypassPermissions\" for \"Claude Code\"; allowed: \"default\", \"plan\"".to_owned())
        );
        profile.modes.clear();
        assert!(
            asking(Some("plan"))
                .allowed_by(&profile)
                .unwrap_err()
                .contains("allows no session mode for \"Claude Code\"")
        );
    }

    #[test]
    fn what_the_agent_does_not_offer_is_refused_saying_what_it_does() {
        assert_eq!(
            choose(Some("c"), None, &offered()),
            Err("the agent has no model \"c\"; it offers \"a\", \"b\"".to_owned())
        );
        assert_eq!(
            choose(None, Some("plan"), &offered()),
            Err("the agent has no session mode \"plan\"; it offers \"code\", \"ask\"".to_owned())
        );
        let bare = json!({"sessionId": "s"});
        assert!(
            choose(Some("a"), None, &bare)
                .unwrap_err()
                .contains("offers no model choice")
        );
        assert!(
            choose(None, Some("ask"), &bare)
                .unwrap_err()
                .contains("offers no session modes")
        );
    }
}
