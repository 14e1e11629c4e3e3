//! Tools an agent task may call (PRODUCT §3.17): each names an MCP server
//! the operator configured and one of its tools, optionally under another
//! name (`as`) and with arguments locked to a value (the agent-platform
//! seed's `argument_override`: taken out of what the model is shown, merged
//! into every call). A re-prompt may narrow the module's tools to some of
//! them (`allowed_tools`). The checks are here, in words the run uses too,
//! so that validation says before a run exactly what the run would refuse.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::Extra;

/// Tool calls one activation may make when the module says nothing.
pub const DEFAULT_MAX_TOOL_CALLS: u32 = 10;
/// The most a module may allow.
pub const MOST_TOOL_CALLS: u32 = 100;
/// What a locked argument reads as wherever the model, a log or a page
/// that is not the editor's would see its value.
pub const LOCKED: &str = "🔒 locked";

/// One tool of an MCP server, chosen for a module.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ToolChoice {
    /// The server's id in the operator's configuration (`[[mcp_servers]]`).
    pub server: String,
    /// The tool's name on that server.
    pub tool: String,
    /// The name the model calls it by, when not the tool's own.
    #[serde(rename = "as", skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    /// Arguments locked to a value (`{{ … }}` templates allowed): never
    /// shown to the model, merged into every call.
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub arguments: Map<String, Value>,
    /// Whether its calls wait for a person (PRODUCT §3.17); unset, the
    /// server's word (`tool_approval.rs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval: Option<crate::tool_approval::ToolApproval>,
    /// How long a call waits for a person before it is refused to the
    /// model as timed out; unset, as long as the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u32>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// The texts of `choices`' locked arguments, which may hold `{{ … }}`
/// variables, each with its path (`{at}tools[0].arguments.key`), nested
/// values included: validation checks them as it checks prompts.
pub fn locked_texts<'a>(choices: &'a [ToolChoice], at: &str) -> Vec<(String, &'a str)> {
    fn texts<'a>(value: &'a Value, path: String, found: &mut Vec<(String, &'a str)>) {
        match value {
            Value::String(text) => found.push((path, text)),
            Value::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    texts(item, format!("{path}[{index}]"), found);
                }
            }
            Value::Object(fields) => {
                for (name, item) in fields {
                    texts(item, format!("{path}.{name}"), found);
                }
            }
            _ => {}
        }
    }
    let mut found = Vec::new();
    for (index, choice) in choices.iter().enumerate() {
        for (name, value) in &choice.arguments {
            texts(
                value,
                format!("{at}tools[{index}].arguments.{name}"),
                &mut found,
            );
        }
    }
    found
}

impl ToolChoice {
    /// The name the model knows it by.
    pub fn name(&self) -> &str {
        self.alias
            .as_deref()
            .map(str::trim)
            .filter(|alias| !alias.is_empty())
            .unwrap_or(&self.tool)
    }
}

/// What validation knows of one tool of a server: its name and the
/// arguments its input schema takes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub arguments: Vec<String>,
}

/// What validation knows of a server: its tools, or why they could not be
/// listed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerSpec {
    pub tools: Vec<ToolSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// Why it cannot be given to a coding agent, when it cannot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_for_agents: Option<String>,
}

/// Each server the operator configured, by id.
pub type ToolCatalogue = BTreeMap<String, ServerSpec>;

/// Whether a model can be asked to call a tool by this name: what OpenAI's
/// and Anthropic's APIs both take.
pub fn is_callable_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-')
}

/// Why a module's tool cannot be used, in the words both validation and
/// the run use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolProblem {
    /// The server is not in the operator's configuration.
    UnknownServer { server: String },
    /// The server's tools could not be listed.
    ServerUnavailable { server: String, problem: String },
    /// The server has no tool by that name.
    UnknownTool { server: String, tool: String },
    /// A locked argument the tool's input does not take.
    UnknownArgument { name: String, argument: String },
    /// Two of the module's tools the model would know by one name.
    NameTaken { name: String },
    /// A name a model cannot call.
    BadName { name: String },
    /// A re-prompt allows a tool the module does not have.
    NotTheModules { name: String },
    /// The module's provider cannot call tools.
    ProviderCannot { provider: String },
    /// A coding agent is given a server it may not have.
    NotForAgents { server: String, why: String },
}

impl ToolProblem {
    /// The message, about module `module` (its label).
    pub fn message(&self, module: &str) -> String {
        match self {
            ToolProblem::UnknownServer { server } => format!(
                "\"{module}\" uses tools of MCP server \"{server}\", which this server does not have (the operator's [[mcp_servers]])"
            ),
            ToolProblem::ServerUnavailable { server, problem } => format!(
                "\"{module}\" uses tools of MCP server \"{server}\", whose tools could not be listed: {problem}"
            ),
            ToolProblem::UnknownTool { server, tool } => format!(
                "\"{module}\" uses tool \"{tool}\" of MCP server \"{server}\", which has no tool of that name"
            ),
            ToolProblem::UnknownArgument { name, argument } => format!(
                "\"{module}\" locks argument \"{argument}\" of tool \"{name}\", which the tool does not take"
            ),
            ToolProblem::NameTaken { name } => format!(
                "\"{module}\" has two tools the model would call \"{name}\": give one another name (as)"
            ),
            ToolProblem::BadName { name } => format!(
                "\"{module}\" names a tool \"{name}\", which a model cannot call: 1 to 64 letters, digits, _ and -"
            ),
            ToolProblem::NotTheModules { name } => format!(
                "a re-prompt of \"{module}\" allows tool \"{name}\", which is not one of the module's tools"
            ),
            ToolProblem::ProviderCannot { provider } => {
                format!("\"{module}\" has tools, and its provider \"{provider}\" cannot call tools")
            }
            ToolProblem::NotForAgents { server, why } => format!(
                "\"{module}\" gives its agent MCP server \"{server}\", which is not given to coding agents: {why}"
            ),
        }
    }
}

/// The problems of `tools` against `catalogue` (when the server's is
/// known), each with where it is (`tools[2].tool`).
pub fn problems(
    tools: &[ToolChoice],
    catalogue: Option<&ToolCatalogue>,
) -> Vec<(String, ToolProblem)> {
    let mut found = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for (index, choice) in tools.iter().enumerate() {
        let at = |field: &str| format!("tools[{index}].{field}");
        let name = choice.name();
        if !is_callable_name(name) {
            let field = if choice.alias.is_some() { "as" } else { "tool" };
            found.push((
                at(field),
                ToolProblem::BadName {
                    name: name.to_owned(),
                },
            ));
        } else if names.contains(&name) {
            found.push((
                at("as"),
                ToolProblem::NameTaken {
                    name: name.to_owned(),
                },
            ));
        }
        names.push(name);
        let Some(catalogue) = catalogue else {
            continue;
        };
        let Some(server) = catalogue.get(&choice.server) else {
            found.push((
                at("server"),
                ToolProblem::UnknownServer {
                    server: choice.server.clone(),
                },
            ));
            continue;
        };
        if let Some(problem) = &server.problem {
            found.push((
                at("server"),
                ToolProblem::ServerUnavailable {
                    server: choice.server.clone(),
                    problem: problem.clone(),
                },
            ));
            continue;
        }
        let Some(spec) = server.tools.iter().find(|spec| spec.name == choice.tool) else {
            found.push((
                at("tool"),
                ToolProblem::UnknownTool {
                    server: choice.server.clone(),
                    tool: choice.tool.clone(),
                },
            ));
            continue;
        };
        for argument in choice.arguments.keys() {
            if !spec.arguments.contains(argument) {
                found.push((
                    format!("tools[{index}].arguments.{argument}"),
                    ToolProblem::UnknownArgument {
                        name: name.to_owned(),
                        argument: argument.clone(),
                    },
                ));
            }
        }
    }
    found
}

/// The names a re-prompt allows that the module does not have.
pub fn not_the_modules<'a>(tools: &[ToolChoice], allowed: &'a [String]) -> Vec<&'a str> {
    allowed
        .iter()
        .map(String::as_str)
        .filter(|name| !tools.iter().any(|choice| choice.name() == *name))
        .collect()
}

/// The module's tools a turn may call: all of them unless `allowed` narrows
/// them (`[]`: none).
pub fn allowed<'a>(tools: &'a [ToolChoice], allowed: Option<&[String]>) -> Vec<&'a ToolChoice> {
    tools
        .iter()
        .filter(|choice| allowed.is_none_or(|names| names.iter().any(|name| name == choice.name())))
        .collect()
}

/// `schema` as the model is shown it: the locked arguments taken out of
/// its properties and of what it requires.
pub fn schema_without(schema: &Value, locked: &Map<String, Value>) -> Value {
    let mut shown = schema.clone();
    if let Some(properties) = shown.get_mut("properties").and_then(Value::as_object_mut) {
        properties.retain(|name, _| !locked.contains_key(name));
    }
    if let Some(required) = shown.get_mut("required").and_then(Value::as_array_mut) {
        required.retain(|name| name.as_str().is_none_or(|name| !locked.contains_key(name)));
    }
    shown
}

/// The arguments a call is made with: the model's, with the locked ones
/// (already rendered) put over them, whatever the model said.
pub fn with_locked(model: &Value, locked: &Map<String, Value>) -> Value {
    let mut merged = match model {
        Value::Object(object) => object.clone(),
        _ => Map::new(),
    };
    for (name, value) in locked {
        merged.insert(name.clone(), value.clone());
    }
    Value::Object(merged)
}

/// The arguments as they may be shown outside the editor: the locked ones
/// read [`LOCKED`].
pub fn shown_arguments(arguments: &Value, locked: &Map<String, Value>) -> Value {
    let mut shown = arguments.clone();
    if let Value::Object(object) = &mut shown {
        for name in locked.keys() {
            if object.contains_key(name) {
                object.insert(name.clone(), Value::String(LOCKED.to_owned()));
            }
        }
    }
    shown
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn choice(server: &str, tool: &str, alias: Option<&str>) -> ToolChoice {
        ToolChoice {
            server: server.to_owned(),
            tool: tool.to_owned(),
            alias: alias.map(str::to_owned),
            ..ToolChoice::default()
        }
    }

    fn catalogue() -> ToolCatalogue {
        BTreeMap::from([(
            "everything".to_owned(),
            ServerSpec {
                tools: vec![
                    ToolSpec {
                        name: "echo".to_owned(),
                        arguments: vec!["message".to_owned()],
                    },
                    ToolSpec {
                        name: "get-sum".to_owned(),
                        arguments: vec!["a".to_owned(), "b".to_owned()],
                    },
                ],
                problem: None,
                not_for_agents: None,
            },
        )])
    }

    #[test]
    fn tools_of_servers_and_names_the_server_has_are_fine_and_the_rest_are_said() {
        let mut locked = choice("everything", "get-sum", Some("sum"));
        locked.arguments.insert("b".to_owned(), json!(2));
        locked.arguments.insert("c".to_owned(), json!(3));
        let tools = vec![
            choice("everything", "echo", None),
            locked,
            choice("everything", "nope", None),
            choice("elsewhere", "echo", Some("echo2")),
            choice("everything", "echo", None),
            choice("everything", "echo", Some("say hi")),
        ];
        let problems = problems(&tools, Some(&catalogue()));
        let messages: Vec<(String, String)> = problems
            .iter()
            .map(|(at, problem)| (at.clone(), problem.message("Look up")))
            .collect();
        assert_eq!(
            messages,
            [
                (
                    "tools[1].arguments.c".to_owned(),
                    "\"Look up\" locks argument \"c\" of tool \"sum\", which the tool does not take".to_owned()
                ),
                (
                    "tools[2].tool".to_owned(),
                    "\"Look up\" uses tool \"nope\" of MCP server \"everything\", which has no tool of that name".to_owned()
                ),
                (
                    "tools[3].server".to_owned(),
                    "\"Look up\" uses tools of MCP server \"elsewhere\", which this server does not have (the operator's [[mcp_servers]])".to_owned()
                ),
                (
                    "tools[4].as".to_owned(),
                    "\"Look up\" has two tools the model would call \"echo\": give one another name (as)".to_owned()
                ),
                (
                    "tools[5].as".to_owned(),
                    "\"Look up\" names a tool \"say hi\", which a model cannot call: 1 to 64 letters, digits, _ and -".to_owned()
                ),
            ]
        );
        // Without the server's catalogue (a document on its own), only
        // what the document alone says.
        assert_eq!(problems_without(&tools).len(), 2);
    }

    fn problems_without(tools: &[ToolChoice]) -> Vec<(String, ToolProblem)> {
        problems(tools, None)
    }

    #[test]
    fn a_re_prompt_narrows_the_tools_and_an_empty_list_allows_none() {
        let tools = vec![
            choice("everything", "echo", None),
            choice("everything", "get-sum", Some("sum")),
        ];
        let names = |chosen: Vec<&ToolChoice>| -> Vec<String> {
            chosen
                .iter()
                .map(|choice| choice.name().to_owned())
                .collect()
        };
        assert_eq!(names(allowed(&tools, None)), ["echo", "sum"]);
        assert_eq!(names(allowed(&tools, Some(&["sum".to_owned()]))), ["sum"]);
        assert!(allowed(&tools, Some(&[])).is_empty());
        assert_eq!(
            not_the_modules(&tools, &["sum".to_owned(), "get-sum".to_owned()]),
            ["get-sum"]
        );
    }

    #[test]
    fn locked_arguments_are_out_of_what_the_model_sees_and_in_every_call() {
        let schema = json!({
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"]
        });
        let locked = Map::from_iter([("b".to_owned(), json!(2))]);
        assert_eq!(
            schema_without(&schema, &locked),
            json!({"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"]})
        );
        // The model's own try at a locked argument does not count.
        let call = with_locked(&json!({"a": 1, "b": 99}), &locked);
        assert_eq!(call, json!({"a": 1, "b": 2}));
        assert_eq!(
            shown_arguments(&call, &locked),
            json!({"a": 1, "b": LOCKED})
        );
    }
}
