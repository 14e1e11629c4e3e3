//! The operator's MCP servers (`[[mcp_servers]]`, PRODUCT §3.17): read
//! from the configuration, their environment and headers resolved from the
//! server's own environment (a graph never names a command, a URL, a header
//! or a value), and their tools listed when the server starts, for the
//! catalogue and validation.
//!
//! ```toml
//! [[mcp_servers]]
//! id = "files"
//! name = "Project files"
//! command = "node"
//! args = ["/opt/mcp/server-filesystem/dist/index.js", "/srv/project"]
//! read_only = ["/opt/mcp/server-filesystem"]
//! folder = "/srv/project"          # its own folder: where it works and writes
//! env = { LOG_LEVEL = "warn" }
//! pass_env = ["FILES_TOKEN"]      # taken from the server's environment
//! network = false                 # the default: a loopback of its own
//! timeout_seconds = 60
//!
//! [[mcp_servers]]
//! id = "search"
//! url = "https://mcp.example/mcp"
//! headers_env = { Authorization = "SEARCH_AUTHORIZATION" }
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use engine::tools::{ServerTransport, StdioServer, ToolServerConfig};
use serde::Deserialize;

/// The longest a call may be allowed to take.
const MOST_TIMEOUT_SECONDS: u64 = 3600;

/// An `[[mcp_servers]]` entry as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerEntry {
    pub id: String,
    pub name: Option<String>,
    /// A program speaking MCP on its standard input and output…
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Variables of the server's environment it is given.
    #[serde(default)]
    pub pass_env: Vec<String>,
    #[serde(default)]
    pub network: bool,
    pub folder: Option<PathBuf>,
    #[serde(default)]
    pub read_only: Vec<PathBuf>,
    /// …or a server over Streamable HTTP.
    pub url: Option<String>,
    /// Header name → the variable of the server's environment holding its
    /// value.
    #[serde(default)]
    pub headers_env: BTreeMap<String, String>,
    pub timeout_seconds: Option<u64>,
    /// Whether the operator believes its tools' annotations (PRODUCT
    /// §3.17): a tool it marks read-only runs without asking by default,
    /// and a call of one in flight when a run stopped is made again.
    #[serde(default)]
    pub trusted: bool,
    /// Whether its calls wait for a person: `ask` is a floor no graph
    /// lowers; `auto` lets them run unless a module asks; unset,
    /// `by_annotation`.
    #[serde(default)]
    pub approval: graph::tool_approval::ToolApproval,
}

/// Why the entries cannot be used, naming the entry.
pub fn check(entries: &[McpServerEntry]) -> Result<(), String> {
    let mut seen: Vec<&str> = Vec::new();
    for entry in entries {
        let id = entry.id.as_str();
        let at = format!("mcp_servers \"{id}\"");
        if !graph::tools::is_callable_name(id) {
            return Err(format!("{at}: an id is 1 to 64 letters, digits, _ and -"));
        }
        if id == engine::tools::BUILT_IN_ID {
            return Err(format!("{at}: that id is the built-in server's"));
        }
        if seen.contains(&id) {
            return Err(format!("{at}: two servers have that id"));
        }
        seen.push(id);
        match (&entry.command, &entry.url) {
            (Some(_), Some(_)) => return Err(format!("{at}: either a command or a url, not both")),
            (None, None) => {
                return Err(format!(
                    "{at}: a command (stdio) or a url (Streamable HTTP)"
                ));
            }
            (None, Some(url)) if !(url.starts_with("http://") || url.starts_with("https://")) => {
                return Err(format!("{at}: the url must start with http:// or https://"));
            }
            _ => {}
        }
        if let Some(seconds) = entry.timeout_seconds
            && !(1..=MOST_TIMEOUT_SECONDS).contains(&seconds)
        {
            return Err(format!(
                "{at}: timeout_seconds is from 1 to {MOST_TIMEOUT_SECONDS}"
            ));
        }
        let stdio_only = !entry.args.is_empty()
            || !entry.env.is_empty()
            || !entry.pass_env.is_empty()
            || entry.network
            || entry.folder.is_some()
            || !entry.read_only.is_empty();
        if entry.url.is_some() && stdio_only {
            return Err(format!(
                "{at}: args, env, pass_env, network, folder and read_only are a command's"
            ));
        }
        if entry.command.is_some() && !entry.headers_env.is_empty() {
            return Err(format!("{at}: headers_env is a url's"));
        }
    }
    Ok(())
}

/// The engine's servers for `entries`, their variables read through
/// `lookup` (the environment). An entry whose variable is not set is left
/// out with the reason (never a value in it).
pub fn resolve(
    entries: &[McpServerEntry],
    lookup: &dyn Fn(&str) -> Option<String>,
) -> (Vec<ToolServerConfig>, Vec<String>) {
    let mut servers = Vec::new();
    let mut problems = Vec::new();
    for entry in entries {
        match resolve_one(entry, lookup) {
            Ok(server) => servers.push(server),
            Err(problem) => problems.push(format!("mcp_servers \"{}\": {problem}", entry.id)),
        }
    }
    (servers, problems)
}

fn resolve_one(
    entry: &McpServerEntry,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<ToolServerConfig, String> {
    let variable = |name: &str| {
        lookup(name)
            .filter(|value| !value.is_empty())
            .ok_or_else(|| format!("{name} is not set"))
    };
    let transport = match (&entry.command, &entry.url) {
        (Some(command), _) => {
            let mut env = entry.env.clone();
            for name in &entry.pass_env {
                env.insert(name.clone(), variable(name)?);
            }
            ServerTransport::Stdio(StdioServer {
                command: command.clone(),
                args: entry.args.clone(),
                env,
                network: entry.network,
                folder: entry.folder.clone(),
                read_only: entry.read_only.clone(),
            })
        }
        (None, Some(url)) => {
            let mut headers = Vec::new();
            for (header, name) in &entry.headers_env {
                headers.push((header.clone(), variable(name)?));
            }
            ServerTransport::Http {
                url: url.clone(),
                headers,
            }
        }
        (None, None) => return Err("a command or a url".to_owned()),
    };
    Ok(ToolServerConfig {
        id: entry.id.clone(),
        name: entry.name.clone().unwrap_or_else(|| entry.id.clone()),
        transport,
        timeout: entry
            .timeout_seconds
            .map_or(engine::tools::DEFAULT_TIMEOUT, Duration::from_secs),
        trusted: entry.trusted,
        approval: entry.approval,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(text: &str) -> Result<Vec<McpServerEntry>, String> {
        let file = crate::config::ConfigFile::parse(text)?;
        Ok(file.mcp_servers)
    }

    #[test]
    fn servers_are_read_their_variables_resolved_and_nonsense_refused() {
        let read = entries(
            r#"
            [[mcp_servers]]
            id = "files"
            command = "node"
            args = ["index.js"]
            env = { LOG_LEVEL = "warn" }
            pass_env = ["FILES_TOKEN"]
            timeout_seconds = 5

            [[mcp_servers]]
            id = "search"
            name = "Search"
            url = "https://mcp.example/mcp"
            headers_env = { Authorization = "SEARCH_AUTHORIZATION" }
            "#,
        )
        .unwrap();
        let lookup = |name: &str| match name {
            "FILES_TOKEN" => Some("token-123456".to_owned()),
            "SEARCH_AUTHORIZATION" => Some("Bearer abcdef".to_owned()),
            _ => None,
        };
        let (servers, problems) = resolve(&read, &lookup);
        assert!(problems.is_empty(), "{problems:?}");
        let ServerTransport::Stdio(files) = &servers[0].transport else {
            panic!("stdio")
        };
        assert_eq!(files.env["FILES_TOKEN"], "token-123456");
        assert_eq!(servers[0].timeout, Duration::from_secs(5));
        assert_eq!(servers[1].name, "Search");
        // A variable that is not set leaves the server out, saying which.
        let (servers, problems) = resolve(&read, &|_| None);
        assert_eq!(servers.len(), 0);
        assert_eq!(problems[0], "mcp_servers \"files\": FILES_TOKEN is not set");
        for (wrong, said) in [
            (
                "id = \"patchbay\"\ncommand = \"x\"",
                "the built-in server's",
            ),
            ("id = \"a b\"\ncommand = \"x\"", "1 to 64 letters"),
            ("id = \"x\"", "a command (stdio) or a url"),
            (
                "id = \"x\"\ncommand = \"x\"\nurl = \"https://x\"",
                "not both",
            ),
            ("id = \"x\"\nurl = \"ftp://x\"", "http:// or https://"),
            (
                "id = \"x\"\nurl = \"https://x\"\nnetwork = true",
                "are a command's",
            ),
            (
                "id = \"x\"\ncommand = \"x\"\ntimeout_seconds = 0",
                "timeout_seconds",
            ),
            (
                "id = \"x\"\ncommand = \"x\"\nsecret = \"y\"",
                "unknown field",
            ),
        ] {
            let error = entries(&format!("[[mcp_servers]]\n{wrong}\n")).unwrap_err();
            assert!(error.contains(said), "{wrong}: {error}");
        }
    }
}
