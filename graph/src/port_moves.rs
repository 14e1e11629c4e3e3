//! Cables that follow what they were wired to. A re-prompt's output port
//! id is positional (`reprompt_k_out`, DOC23), and a named output's port id
//! is its name, so removing, reordering or renaming changes which port id
//! carries which reply. The editor makes those list edits through the
//! functions here, which say how each port id moved, and moves the cables
//! in the same undo step: a cable follows *its* re-prompt or output, and a
//! cable whose port was removed is pointed at an id no port will ever have
//! again, so it is shown dangling and reported, never silently re-routed.
//! (A document that arrives by import or the API is taken as it is.)

use crate::config::RePromptOwner;
use crate::ports::{named_output_port_id, reprompt_port_id};
use crate::{Graph, ModuleConfig};

/// Marks a port id whose port was removed.
const REMOVED: &str = "~removed";

/// The id a cable is pointed at when its port is removed: no port has it.
pub fn removed_port_id(old: &str) -> String {
    if old.ends_with(REMOVED) {
        old.to_owned()
    } else {
        format!("{old}{REMOVED}")
    }
}

/// Whether `id` is the id of a removed port.
pub fn is_removed_port_id(id: &str) -> bool {
    id.ends_with(REMOVED)
}

/// How output port ids moved: (old id, new id), all at once.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PortMoves(pub Vec<(String, String)>);

impl PortMoves {
    /// Cables leaving `module_id` from a moved port, with the port they
    /// must leave from now: (cable id, new port id).
    pub fn cables(&self, graph: &Graph, module_id: &str) -> Vec<(String, String)> {
        graph
            .cables
            .iter()
            .filter(|cable| cable.from.module == module_id)
            .filter_map(|cable| {
                self.0
                    .iter()
                    .find(|(old, _)| *old == cable.from.port)
                    .map(|(_, new)| (cable.id.clone(), new.clone()))
            })
            .collect()
    }
}

/// Whether `owner`'s re-prompts have output ports of their own (an agent
/// task's module-level list; a coding agent's re-prompts have none).
fn has_reprompt_ports(config: &ModuleConfig, owner: RePromptOwner) -> bool {
    owner == RePromptOwner::Module && matches!(config, ModuleConfig::AgentTask(_))
}

/// Port moves for a list of re-prompts whose new entry `j` came from old
/// entry `origin[j]` (`None`: new), out of `old_count`.
fn reprompt_moves(origin: &[Option<usize>], old_count: usize) -> PortMoves {
    let mut moves = Vec::new();
    for old in 0..old_count {
        let old_id = reprompt_port_id(old + 1);
        let new_id = match origin.iter().position(|from| *from == Some(old)) {
            Some(new) => reprompt_port_id(new + 1),
            None => removed_port_id(&old_id),
        };
        if new_id != old_id {
            moves.push((old_id, new_id));
        }
    }
    PortMoves(moves)
}

/// Removes re-prompt `index` (0-based) of `owner`.
pub fn remove_re_prompt(
    config: &mut ModuleConfig,
    owner: RePromptOwner,
    index: usize,
) -> PortMoves {
    let ports = has_reprompt_ports(config, owner);
    let Some(list) = config.re_prompts_mut(owner) else {
        return PortMoves::default();
    };
    if index >= list.len() {
        return PortMoves::default();
    }
    let count = list.len();
    list.remove(index);
    if !ports {
        return PortMoves::default();
    }
    let origin: Vec<Option<usize>> = (0..count).filter(|old| *old != index).map(Some).collect();
    reprompt_moves(&origin, count)
}

/// Moves re-prompt `from` to place `to` (0-based) of `owner`.
pub fn move_re_prompt(
    config: &mut ModuleConfig,
    owner: RePromptOwner,
    from: usize,
    to: usize,
) -> PortMoves {
    let ports = has_reprompt_ports(config, owner);
    let Some(list) = config.re_prompts_mut(owner) else {
        return PortMoves::default();
    };
    let count = list.len();
    if from >= count || to >= count || from == to {
        return PortMoves::default();
    }
    let moved = list.remove(from);
    list.insert(to, moved);
    if !ports {
        return PortMoves::default();
    }
    let mut origin: Vec<Option<usize>> = (0..count).map(Some).collect();
    let entry = origin.remove(from);
    origin.insert(to, entry);
    reprompt_moves(&origin, count)
}

/// Renames named output `index` of an agent task.
pub fn rename_named_output(config: &mut ModuleConfig, index: usize, name: &str) -> PortMoves {
    let ModuleConfig::AgentTask(task) = config else {
        return PortMoves::default();
    };
    let Some(current) = task.named_outputs.get_mut(index) else {
        return PortMoves::default();
    };
    if current == name {
        return PortMoves::default();
    }
    // Port ids are made of the trimmed name (see `ports`).
    let old = named_output_port_id(current.trim());
    *current = name.to_owned();
    let new = named_output_port_id(name.trim());
    if old == new {
        return PortMoves::default();
    }
    PortMoves(vec![(old, new)])
}

/// Removes named output `index` of an agent task.
pub fn remove_named_output(config: &mut ModuleConfig, index: usize) -> PortMoves {
    let ModuleConfig::AgentTask(task) = config else {
        return PortMoves::default();
    };
    if index >= task.named_outputs.len() {
        return PortMoves::default();
    }
    let old = named_output_port_id(task.named_outputs.remove(index).trim());
    PortMoves(vec![(old.clone(), removed_port_id(&old))])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RePrompt;
    use crate::config::AgentTaskConfig;

    fn task(texts: &[&str]) -> ModuleConfig {
        ModuleConfig::AgentTask(AgentTaskConfig {
            re_prompts: texts.iter().copied().map(RePrompt::from).collect(),
            separate_outputs: true,
            ..AgentTaskConfig::default()
        })
    }

    fn texts(config: &ModuleConfig) -> Vec<String> {
        config
            .re_prompts(RePromptOwner::Module)
            .into_iter()
            .flatten()
            .map(|re_prompt| re_prompt.text.clone())
            .collect()
    }

    fn pair(old: &str, new: &str) -> (String, String) {
        (old.to_owned(), new.to_owned())
    }

    #[test]
    fn removing_a_re_prompt_renumbers_the_rest_and_strands_its_own_port() {
        let mut config = task(&["AAA", "BBB", "CCC"]);
        let moves = remove_re_prompt(&mut config, RePromptOwner::Module, 0);
        assert_eq!(texts(&config), ["BBB", "CCC"]);
        assert_eq!(
            moves.0,
            [
                pair("reprompt_1_out", "reprompt_1_out~removed"),
                pair("reprompt_2_out", "reprompt_1_out"),
                pair("reprompt_3_out", "reprompt_2_out"),
            ]
        );
        let mut config = task(&["AAA", "BBB", "CCC"]);
        let moves = remove_re_prompt(&mut config, RePromptOwner::Module, 2);
        assert_eq!(moves.0, [pair("reprompt_3_out", "reprompt_3_out~removed")]);
    }

    #[test]
    fn reordering_moves_each_port_with_its_re_prompt() {
        let mut config = task(&["AAA", "BBB", "CCC"]);
        let moves = move_re_prompt(&mut config, RePromptOwner::Module, 2, 0);
        assert_eq!(texts(&config), ["CCC", "AAA", "BBB"]);
        assert_eq!(
            moves.0,
            [
                pair("reprompt_1_out", "reprompt_2_out"),
                pair("reprompt_2_out", "reprompt_3_out"),
                pair("reprompt_3_out", "reprompt_1_out"),
            ]
        );
    }

    #[test]
    fn named_outputs_carry_their_cables_through_a_rename_and_strand_them_when_removed() {
        let mut config = ModuleConfig::AgentTask(AgentTaskConfig {
            named_outputs: vec!["Summary".to_owned(), "Risks".to_owned()],
            ..AgentTaskConfig::default()
        });
        assert_eq!(
            rename_named_output(&mut config, 0, "Digest").0,
            [pair("named:Summary", "named:Digest")]
        );
        assert_eq!(
            remove_named_output(&mut config, 1).0,
            [pair("named:Risks", "named:Risks~removed")]
        );
        assert!(is_removed_port_id(&removed_port_id("named:Risks")));
        assert_eq!(
            removed_port_id("named:Risks~removed"),
            "named:Risks~removed"
        );
    }

    #[test]
    fn the_cables_that_move_are_those_leaving_the_module_from_a_moved_port() {
        let graph = Graph::from_value(serde_json::json!({
            "modules": [
                {"id": "a", "kind": "step.agent_task", "config": {}},
                {"id": "b", "kind": "step.output", "config": {}},
            ],
            "cables": [
                {"id": "c1", "from": {"module": "a", "port": "reprompt_1_out"}, "to": {"module": "b", "port": "data_in"}},
                {"id": "c2", "from": {"module": "a", "port": "data_out"}, "to": {"module": "b", "port": "data_in"}},
            ],
        }))
        .unwrap();
        let moves = PortMoves(vec![pair("reprompt_1_out", "reprompt_2_out")]);
        assert_eq!(moves.cables(&graph, "a"), [pair("c1", "reprompt_2_out")]);
        assert_eq!(moves.cables(&graph, "b"), []);
    }
}
