//! The graph document (PRODUCT §1): its types, and loading and saving it.
//!
//! Loading goes JSON text → `Value` → R3.1 migration → typed document, and
//! every failure says where it is (`modules[2].config.agent_config.temperature`).
//! Fields this build does not know are kept at every level and written back.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::config::ModuleConfig;
use crate::migrate::{MigrationNote, migrate_r31};
use crate::{Extra, ModuleKind};

/// The `format` string of documents this build writes.
pub const FORMAT: &str = "patchbay.graph/1";

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Position {
    pub x: f64,
    pub y: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    pub id: String,
    pub label: String,
    pub position: Position,
    pub config: ModuleConfig,
    pub extra: Extra,
}

impl Module {
    pub fn new(id: impl Into<String>, kind: ModuleKind, position: Position) -> Module {
        Module {
            id: id.into(),
            label: kind.title().to_owned(),
            position,
            config: ModuleConfig::new_for(kind),
            extra: Extra::new(),
        }
    }

    pub fn kind(&self) -> Option<ModuleKind> {
        self.config.kind()
    }

    /// The label, or the kind's title when the label is empty.
    pub fn display_label(&self) -> &str {
        if self.label.trim().is_empty() {
            self.kind().map_or("Unknown module", ModuleKind::title)
        } else {
            &self.label
        }
    }
}

/// One end of a cable: a port on a module.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Endpoint {
    pub module: String,
    pub port: String,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Endpoint {
    pub fn new(module: impl Into<String>, port: impl Into<String>) -> Endpoint {
        Endpoint {
            module: module.into(),
            port: port.into(),
            extra: Extra::new(),
        }
    }
}

/// A cable from an output port to an input port.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cable {
    pub id: String,
    pub from: Endpoint,
    pub to: Endpoint,
    /// When it carries its port's value ([`crate::condition`]); the cables
    /// of one port are tried in document order, and one without a condition
    /// is the catch-all. `None` (the usual case) carries every value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Cable {
    pub fn new(id: impl Into<String>, from: Endpoint, to: Endpoint) -> Cable {
        Cable {
            id: id.into(),
            from,
            to,
            condition: None,
            extra: Extra::new(),
        }
    }

    /// The condition, when it has one that is not blank.
    pub fn condition(&self) -> Option<&str> {
        self.condition
            .as_deref()
            .map(str::trim)
            .filter(|condition| !condition.is_empty())
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Graph {
    pub format: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub name: String,
    pub revision: u64,
    pub modules: Vec<Module>,
    pub cables: Vec<Cable>,
    /// Notes left by the R3.1 migration, so the editor can say once what
    /// changed; the editor removes them when the person has seen them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub migrations: Vec<MigrationNote>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// The document as the API's OpenAPI document describes it: its custom
/// reading (migration, kept fields) has no derived schema.
#[cfg(feature = "schema")]
impl schemars::JsonSchema for Graph {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "GraphDocument".into()
    }

    fn json_schema(_generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "object",
            "description": "A graph document (PRODUCT §1): its modules, cables, triggers, notes and groups; fields this server does not know are kept.",
            "properties": {
                "format": { "type": "string" },
                "id": { "type": "string" },
                "name": { "type": "string" },
                "revision": { "type": "integer", "minimum": 0 },
                "modules": { "type": "array", "items": {
                    "type": "object",
                    "required": ["id", "kind"],
                    "properties": {
                        "id": { "type": "string" },
                        "kind": { "type": "string" },
                        "label": { "type": "string" },
                        "position": { "type": "object", "properties": { "x": { "type": "number" }, "y": { "type": "number" } } },
                        "config": { "type": "object" }
                    }
                } },
                "cables": { "type": "array", "items": {
                    "type": "object",
                    "required": ["id", "from", "to"],
                    "properties": {
                        "id": { "type": "string" },
                        "from": { "type": "object", "required": ["module", "port"] },
                        "to": { "type": "object", "required": ["module", "port"] },
                        "condition": { "type": "string" }
                    }
                } },
                "triggers": { "type": "array", "items": { "type": "object", "required": ["id", "kind"] } },
                "notes": { "type": "array", "items": { "type": "object", "required": ["id"], "properties": {
                    "id": { "type": "string" },
                    "text": { "type": "string", "description": "Markdown" },
                    "position": { "type": "object", "properties": { "x": { "type": "number" }, "y": { "type": "number" } } },
                    "size": { "type": "object", "properties": { "width": { "type": "number" }, "height": { "type": "number" } } },
                    "colour": { "type": "string", "enum": ["yellow", "blue", "green", "pink", "grey"] }
                } } },
                "groups": { "type": "array", "items": { "type": "object", "required": ["id"], "properties": {
                    "id": { "type": "string" },
                    "title": { "type": "string" },
                    "position": { "type": "object", "properties": { "x": { "type": "number" }, "y": { "type": "number" } } },
                    "size": { "type": "object", "properties": { "width": { "type": "number" }, "height": { "type": "number" } } },
                    "colour": { "type": "string", "enum": ["yellow", "blue", "green", "pink", "grey"] },
                    "collapsed": { "type": "boolean" }
                } } }
            }
        })
    }
}

impl Default for Graph {
    fn default() -> Graph {
        Graph {
            format: FORMAT.to_owned(),
            id: None,
            name: "Untitled graph".to_owned(),
            revision: 0,
            modules: Vec::new(),
            cables: Vec::new(),
            migrations: Vec::new(),
            extra: Extra::new(),
        }
    }
}

/// Why a document could not be loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadErrorKind {
    /// Not JSON at all.
    Syntax,
    /// JSON, but a field has the wrong type or a required field is missing.
    Shape,
    /// A `format` this build does not read.
    Format,
    /// Two modules or two cables share an id, or an id is empty.
    Identity,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadError {
    pub kind: LoadErrorKind,
    /// Where in the document, e.g. `modules[2].config.re_prompts[0]`; empty
    /// for the document as a whole.
    pub path: String,
    pub message: String,
}

impl LoadError {
    /// The error code of the API (`{ "error": { "code" } }`).
    pub fn code(&self) -> &'static str {
        match self.kind {
            LoadErrorKind::Syntax => "document.malformed_json",
            LoadErrorKind::Shape => "document.invalid",
            LoadErrorKind::Format => "document.unsupported_format",
            LoadErrorKind::Identity => "document.duplicate_id",
        }
    }
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            formatter.write_str(&self.message)
        } else {
            write!(formatter, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for LoadError {}

pub(crate) fn json_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn default_format() -> String {
    FORMAT.to_owned()
}

fn default_name() -> String {
    Graph::default().name
}

#[derive(Deserialize)]
struct GraphWire {
    #[serde(default = "default_format")]
    format: String,
    #[serde(default)]
    id: Option<String>,
    #[serde(default = "default_name")]
    name: String,
    #[serde(default)]
    revision: u64,
    #[serde(default)]
    modules: Vec<ModuleWire>,
    #[serde(default)]
    cables: Vec<Cable>,
    #[serde(default)]
    migrations: Vec<MigrationNote>,
    #[serde(flatten)]
    extra: Extra,
}

#[derive(Deserialize)]
struct ModuleWire {
    id: String,
    kind: String,
    #[serde(default)]
    label: String,
    #[serde(default)]
    position: Position,
    #[serde(default)]
    config: Value,
    #[serde(flatten)]
    extra: Extra,
}

impl ModuleWire {
    fn into_module(self) -> Result<Module, crate::config::ConfigError> {
        Ok(Module {
            config: ModuleConfig::from_kind_and_value(&self.kind, self.config)?,
            id: self.id,
            label: self.label,
            position: self.position,
            extra: self.extra,
        })
    }
}

/// Serialization view of a module: `kind` and `config` side by side.
#[derive(Serialize)]
struct ModuleRef<'a> {
    id: &'a str,
    kind: &'a str,
    label: &'a str,
    position: Position,
    config: &'a ModuleConfig,
    #[serde(flatten)]
    extra: &'a Extra,
}

impl Serialize for Module {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        ModuleRef {
            id: &self.id,
            kind: self.config.kind_name(),
            label: &self.label,
            position: self.position,
            config: &self.config,
            extra: &self.extra,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Module {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Module, D::Error> {
        ModuleWire::deserialize(deserializer)?
            .into_module()
            .map_err(|error| D::Error::custom(format!("config.{}: {}", error.path, error.message)))
    }
}

impl<'de> Deserialize<'de> for Graph {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Graph, D::Error> {
        Graph::from_value(Value::deserialize(deserializer)?).map_err(D::Error::custom)
    }
}

impl Graph {
    /// Loads a document from JSON text.
    pub fn load(text: &str) -> Result<Graph, LoadError> {
        let value: Value = serde_json::from_str(text).map_err(|error| LoadError {
            kind: LoadErrorKind::Syntax,
            path: String::new(),
            message: format!(
                "not valid JSON: {} (line {}, column {})",
                strip_position(&error.to_string()),
                error.line(),
                error.column()
            ),
        })?;
        Graph::from_value(value)
    }

    /// Loads a document that is already parsed JSON.
    pub fn from_value(mut value: Value) -> Result<Graph, LoadError> {
        if !value.is_object() {
            return Err(LoadError {
                kind: LoadErrorKind::Shape,
                path: String::new(),
                message: format!(
                    "a graph document is a JSON object, not {}",
                    json_type_name(&value)
                ),
            });
        }
        if let Some(format) = value.get("format")
            && format.as_str() != Some(FORMAT)
        {
            return Err(LoadError {
                kind: LoadErrorKind::Format,
                path: "format".to_owned(),
                message: format!("this server reads \"{FORMAT}\" documents, not {format}"),
            });
        }
        let notes = migrate_r31(&mut value);
        #[cfg(feature = "error-paths")]
        let wire: GraphWire = serde_path_to_error::deserialize(value).map_err(|error| {
            let path = error.path().to_string();
            LoadError {
                kind: LoadErrorKind::Shape,
                path: if path == "." { String::new() } else { path },
                message: error.into_inner().to_string(),
            }
        })?;
        #[cfg(not(feature = "error-paths"))]
        let wire: GraphWire = serde_json::from_value(value).map_err(|error| LoadError {
            kind: LoadErrorKind::Shape,
            path: String::new(),
            message: error.to_string(),
        })?;
        let mut modules = Vec::with_capacity(wire.modules.len());
        for (index, module) in wire.modules.into_iter().enumerate() {
            let module = module.into_module().map_err(|error| LoadError {
                kind: LoadErrorKind::Shape,
                path: if error.path.is_empty() {
                    format!("modules[{index}].config")
                } else {
                    format!("modules[{index}].config.{}", error.path)
                },
                message: error.message,
            })?;
            modules.push(module);
        }
        let mut migrations = wire.migrations;
        migrations.extend(notes);
        let graph = Graph {
            format: wire.format,
            id: wire.id,
            name: wire.name,
            revision: wire.revision,
            modules,
            cables: wire.cables,
            migrations,
            extra: wire.extra,
        };
        graph.check_identities()?;
        Ok(graph)
    }

    /// The document as compact JSON.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string(self)
    }

    /// The document as parsed JSON (what `edits` address). Through the
    /// text, not `serde_json::to_value`: that would be a second copy of
    /// every type's serializer in the browser bundle (about 60 KB gzip).
    pub fn to_value(&self) -> Option<Value> {
        serde_json::from_str(&self.to_json().ok()?).ok()
    }

    fn check_identities(&self) -> Result<(), LoadError> {
        let mut seen = std::collections::HashSet::new();
        for (index, module) in self.modules.iter().enumerate() {
            if module.id.is_empty() {
                return Err(identity_error(
                    format!("modules[{index}].id"),
                    "a module id must not be empty".to_owned(),
                ));
            }
            if !seen.insert(module.id.as_str()) {
                return Err(identity_error(
                    format!("modules[{index}].id"),
                    format!("two modules have the id \"{}\"", module.id),
                ));
            }
        }
        seen.clear();
        for (index, cable) in self.cables.iter().enumerate() {
            if cable.id.is_empty() {
                return Err(identity_error(
                    format!("cables[{index}].id"),
                    "a cable id must not be empty".to_owned(),
                ));
            }
            if !seen.insert(cable.id.as_str()) {
                return Err(identity_error(
                    format!("cables[{index}].id"),
                    format!("two cables have the id \"{}\"", cable.id),
                ));
            }
        }
        Ok(())
    }

    pub fn module(&self, id: &str) -> Option<&Module> {
        self.modules.iter().find(|module| module.id == id)
    }

    /// An id of the form `m<n>` that no module has yet.
    pub fn next_module_id(&self) -> String {
        next_id("m", self.modules.iter().map(|module| module.id.as_str()))
    }

    /// An id of the form `c<n>` that no cable has yet.
    pub fn next_cable_id(&self) -> String {
        next_id("c", self.cables.iter().map(|cable| cable.id.as_str()))
    }
}

fn identity_error(path: String, message: String) -> LoadError {
    LoadError {
        kind: LoadErrorKind::Identity,
        path,
        message,
    }
}

fn next_id<'a>(prefix: &str, taken: impl Iterator<Item = &'a str>) -> String {
    let highest = taken
        .filter_map(|id| id.strip_prefix(prefix)?.parse::<u64>().ok())
        .max()
        .unwrap_or(0);
    format!("{prefix}{}", highest + 1)
}

/// serde_json appends " at line L column C"; the load error says it its own way.
fn strip_position(message: &str) -> &str {
    message
        .rsplit_once(" at line ")
        .map_or(message, |(head, _)| head)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn module_json(id: &str, kind: &str, config: Value) -> Value {
        json!({"id": id, "kind": kind, "label": id, "position": {"x": 0, "y": 0}, "config": config})
    }

    #[test]
    fn syntax_errors_give_line_and_column() {
        let error = Graph::load("{\"modules\": [}").unwrap_err();
        assert_eq!(error.kind, LoadErrorKind::Syntax);
        assert!(
            error.message.contains("line 1, column 14"),
            "{}",
            error.message
        );
    }

    #[test]
    fn a_wrong_type_deep_in_a_config_names_its_path() {
        let document = json!({
            "format": FORMAT,
            "modules": [
                module_json("m1", "step.input", json!({})),
                module_json("m2", "step.agent_task", json!({"re_prompts": ["ok", 7]}))
            ]
        });
        let error = Graph::from_value(document).unwrap_err();
        assert_eq!(error.kind, LoadErrorKind::Shape);
        assert_eq!(error.path, "modules[1].config.re_prompts[1]");
    }

    #[test]
    fn a_missing_module_id_is_a_shape_error_with_a_path() {
        let document = json!({"modules": [{"kind": "step.input"}]});
        let error = Graph::from_value(document).unwrap_err();
        assert_eq!(error.path, "modules[0]");
        assert!(
            error.message.contains("missing field `id`"),
            "{}",
            error.message
        );
    }

    #[test]
    fn other_formats_are_refused() {
        let error = Graph::from_value(json!({"format": "patchbay.graph/9"})).unwrap_err();
        assert_eq!(error.kind, LoadErrorKind::Format);
    }

    #[test]
    fn duplicate_module_ids_are_refused() {
        let document = json!({"modules": [
            module_json("m1", "step.input", json!({})),
            module_json("m1", "step.output", json!({}))
        ]});
        let error = Graph::from_value(document).unwrap_err();
        assert_eq!(error.kind, LoadErrorKind::Identity);
        assert_eq!(error.path, "modules[1].id");
    }

    #[test]
    fn unknown_fields_survive_a_round_trip_at_every_level() {
        let document = json!({
            "format": FORMAT,
            "id": "g_1",
            "name": "Spec review",
            "revision": 3,
            "theme": {"dark": true},
            "modules": [{
                "id": "m1", "kind": "step.agent_task", "label": "Draft",
                "position": {"x": 10.5, "y": 20.0},
                "colour": "teal",
                "config": {
                    "instruction": "Write",
                    "attachments": [],
                    "agent_config": {"provider": "sim", "model": "sim-1", "top_p": 0.9},
                    "re_prompts": ["Review your work above. What did you miss?", "Finalize."],
                    "separate_outputs": false,
                    "named_outputs": [],
                    "session_mode": "new",
                    "session_persist": false,
                    "future_field": [1, 2, 3]
                }
            }, {
                "id": "m2", "kind": "step.teleport", "label": "", "position": {"x": 0.0, "y": 0.0},
                "config": {"beam": "me up"}
            }],
            "cables": [{"id": "c1", "from": {"module": "m1", "port": "data_out", "side": "right"},
                        "to": {"module": "m2", "port": "data_in"}, "style": "dotted"}]
        });
        let graph = Graph::from_value(document.clone()).unwrap();
        let written = serde_json::to_value(&graph).unwrap();
        assert_eq!(written, document);
        // And once more through text.
        let again = Graph::load(&graph.to_json().unwrap()).unwrap();
        assert_eq!(again, graph);
    }

    #[test]
    fn a_doc23_string_array_of_re_prompts_is_written_back_as_strings() {
        let document = json!({"modules": [module_json(
            "m1",
            "step.agent_task",
            json!({"instruction": "Draft", "re_prompts": ["One", "Two"]})
        )]});
        let graph = Graph::from_value(document).unwrap();
        let written = serde_json::to_value(&graph).unwrap();
        assert_eq!(
            written["modules"][0]["config"]["re_prompts"],
            json!(["One", "Two"])
        );
    }

    #[test]
    fn next_ids_skip_the_ones_taken() {
        let document = json!({"modules": [
            module_json("m1", "step.input", json!({})),
            module_json("m7", "step.output", json!({})),
            module_json("draft", "step.output", json!({}))
        ]});
        let graph = Graph::from_value(document).unwrap();
        assert_eq!(graph.next_module_id(), "m8");
        assert_eq!(graph.next_cable_id(), "c1");
    }
}
