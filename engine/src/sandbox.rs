//! Confinement of every process a run starts — coding agents and whatever
//! they start, `step.command`, git on a run's workspace — with bubblewrap
//! (`bwrap`, Debian's `bubblewrap`). Graphs come from strangers, so what they
//! make run must not reach the host: a confined process sees the system's
//! programs and libraries read-only, the few files of `/etc` that name
//! lookup and TLS need, what its caller lists as read-only (an agent's own
//! install) and, writable, only the folders it works in plus its run's own
//! HOME and temporary folder (its `/tmp`); everything else is read-only. It starts with a clean environment, in its own
//! user, process, IPC and (unless allowed) network namespaces, with no
//! capabilities, and dies with the server. The database, the configuration,
//! the server user's HOME and other runs' folders are simply not there.
//!
//! Where bubblewrap is missing or cannot work, nothing is run unconfined:
//! the runs that would start a process are refused with the reason.

mod process;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use process::{ConfinedChild, ConfinedCommand};

/// The system folders a confined process sees read-only. On merged-/usr
/// systems most are links into `/usr`, and stay links.
const SYSTEM_FOLDERS: [&str; 7] = [
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];

/// What of `/etc` programs need to start, resolve names and check TLS
/// certificates; never the rest (`shadow`, the server's own settings).
const ETC_ENTRIES: [&str; 16] = [
    "/etc/alternatives",
    "/etc/ca-certificates",
    "/etc/ca-certificates.conf",
    "/etc/gai.conf",
    "/etc/group",
    "/etc/host.conf",
    "/etc/hosts",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/mime.types",
    "/etc/nsswitch.conf",
    "/etc/passwd",
    "/etc/resolv.conf",
    "/etc/ssl",
];

/// The search path inside: the system's folders only (others are not there).
const SEARCH_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Why processes cannot be confined here. Runs that would start one are
/// refused with this message; nothing runs unconfined instead.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SandboxUnavailable(pub String);

/// bubblewrap, once it has been seen to confine a process on this machine.
#[derive(Clone, Debug)]
pub struct Sandbox {
    bwrap: PathBuf,
}

/// What a confined process may reach besides the system's programs and
/// its run's HOME and temporary folder.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reach {
    /// Folders it may write (its workspace), at their own paths.
    pub writable: Vec<PathBuf>,
    /// Files and folders it may read (its own install), at their own paths.
    pub read_only: Vec<PathBuf>,
    /// Whether it keeps the host's network (a real agent calls its vendor's
    /// API); without it, it has a loopback of its own and nothing else.
    pub network: bool,
    /// Folders it may write, each shown at another path: (on the host, as
    /// it sees it). A module's copy of its upstream's workspace is shown at
    /// the upstream's path, where an agent that keys its sessions by folder
    /// finds the session it continues.
    pub writable_shown_at: Vec<(PathBuf, PathBuf)>,
}

/// One run's folder under the workspaces root: its modules' workspaces,
/// the work folder of its commands, and the HOME and temporary folder its
/// processes share. Removed as a whole when the run's retention ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunFolder {
    path: PathBuf,
}

/// A file name made of an id's letters, digits, `-` and `_` (a run or
/// module id can hold anything; a folder name must not climb or hide).
pub fn folder_name(id: &str) -> String {
    id.chars()
        .map(|character| {
            if character.is_ascii_alphanumeric() || character == '-' || character == '_' {
                character
            } else {
                '_'
            }
        })
        .collect()
}

impl RunFolder {
    pub fn new(root: &Path, run_id: &str) -> RunFolder {
        RunFolder {
            path: root.join(folder_name(run_id)),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// HOME of the run's processes (agents keep their settings there).
    /// Module folders never start with a dot, so this cannot be one.
    pub fn home(&self) -> PathBuf {
        self.path.join(".home")
    }

    pub fn temp(&self) -> PathBuf {
        self.path.join(".tmp")
    }

    /// Where the run's `step.command` modules work.
    pub fn commands(&self) -> PathBuf {
        self.path.join(".commands")
    }

    /// Makes the HOME and temporary folder, readable by the server's user only.
    pub async fn prepare(&self) -> std::io::Result<()> {
        for folder in [self.home(), self.temp()] {
            tokio::fs::create_dir_all(&folder).await?;
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                tokio::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700)).await?;
            }
        }
        Ok(())
    }
}

/// Whether `path` is one the system folders already show.
fn in_system_folders(path: &Path) -> bool {
    SYSTEM_FOLDERS.iter().any(|folder| path.starts_with(folder))
}

/// `program` as an absolute path: as given when it has a slash, else
/// found on the server's search path. Links are kept: a Python
/// environment's `bin/python` finds its environment by its own path.
fn resolve_program(program: &str) -> Result<PathBuf, String> {
    if program.contains('/') {
        let path = std::path::absolute(program).unwrap_or_else(|_| PathBuf::from(program));
        return if path.is_file() {
            Ok(path)
        } else {
            Err(format!("the program {program} does not exist"))
        };
    }
    let search = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&search)
        .map(|folder| folder.join(program))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| format!("the program \"{program}\" is not on the server's PATH"))
}

/// bubblewrap's arguments for a process that may reach `reach`, runs in
/// `folder`, and works in `working_folder`.
fn arguments(folder: &RunFolder, reach: &Reach, working_folder: &Path) -> Vec<String> {
    let mut arguments: Vec<String> = Vec::new();
    let mut add = |parts: &[&str]| arguments.extend(parts.iter().map(|part| (*part).to_owned()));
    add(&["--unshare-all"]);
    if reach.network {
        add(&["--share-net"]);
    }
    add(&["--die-with-parent", "--new-session", "--cap-drop", "ALL"]);
    for system in SYSTEM_FOLDERS {
        let path = Path::new(system);
        match std::fs::read_link(path) {
            Ok(target) => {
                let target = target.to_string_lossy().into_owned();
                add(&["--symlink", &target, system]);
            }
            Err(_) if path.is_dir() => add(&["--ro-bind", system, system]),
            Err(_) => {}
        }
    }
    for entry in ETC_ENTRIES {
        add(&["--ro-bind-try", entry, entry]);
    }
    let text = |path: &Path| path.to_string_lossy().into_owned();
    // The run's temporary folder is the process's /tmp. Places bound below
    // that lie under /tmp on the host get their mount points made inside
    // it, so nothing but the run's own folders is ever written.
    let temp = text(&folder.temp());
    add(&["--proc", "/proc", "--dev", "/dev", "--bind", &temp, "/tmp"]);
    for path in &reach.read_only {
        let path = text(path);
        add(&["--ro-bind", &path, &path]);
    }
    for path in std::iter::once(&folder.home()).chain(&reach.writable) {
        let path = text(path);
        add(&["--bind", &path, &path]);
    }
    for (host, seen) in &reach.writable_shown_at {
        add(&["--bind", &text(host), &text(seen)]);
    }
    // Whatever bubblewrap made to hold the mounts stays read-only.
    add(&["--remount-ro", "/"]);
    let working_folder = text(working_folder);
    add(&["--chdir", &working_folder]);
    arguments
}

impl Sandbox {
    /// bubblewrap at `program` (a path, or a name on PATH), after checking
    /// that it confines a process on this machine.
    pub fn detect(program: &str) -> Result<Sandbox, SandboxUnavailable> {
        let bwrap = resolve_program(program).map_err(|problem| {
            SandboxUnavailable(format!(
                "bubblewrap is needed to confine the processes of runs and is not available ({problem}); install it (Debian: apt-get install bubblewrap, which scripts/start and scripts/test do)"
            ))
        })?;
        // A folder of this try's own: tries may run side by side.
        static TRIES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let probe = std::env::temp_dir().join(format!(
            "patchbay-sandbox-probe-{}-{}",
            std::process::id(),
            TRIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let folder = RunFolder { path: probe };
        let checked = std::fs::create_dir_all(folder.home())
            .and_then(|()| std::fs::create_dir_all(folder.temp()))
            .map_err(|error| error.to_string())
            .and_then(|()| {
                std::process::Command::new(&bwrap)
                    .args(arguments(&folder, &Reach::default(), Path::new("/")))
                    .arg("--")
                    .arg("true")
                    .env_clear()
                    .env("PATH", SEARCH_PATH)
                    .output()
                    .map_err(|error| error.to_string())
            });
        let _ = std::fs::remove_dir_all(folder.path());
        match checked {
            Ok(output) if output.status.success() => Ok(Sandbox { bwrap }),
            Ok(output) => Err(SandboxUnavailable(format!(
                "bubblewrap ({}) cannot confine a process on this machine: {}",
                bwrap.display(),
                String::from_utf8_lossy(&output.stderr).trim()
            ))),
            Err(problem) => Err(SandboxUnavailable(format!(
                "bubblewrap ({}) could not be tried: {problem}",
                bwrap.display()
            ))),
        }
    }

    /// A command that runs `program` with `args` confined: in `folder`'s
    /// HOME and temporary folder, reaching `reach`, working in
    /// `working_folder`, with a clean environment plus `environment`. The
    /// program itself is made readable when it lives outside the system
    /// folders. Dropping the child before it has ended kills it and
    /// everything it started (`ConfinedChild`).
    pub fn command(
        &self,
        folder: &RunFolder,
        reach: &Reach,
        program: &str,
        args: &[String],
        environment: &BTreeMap<String, String>,
        working_folder: &Path,
    ) -> Result<ConfinedCommand, String> {
        let resolved = resolve_program(program)?;
        let mut reach = reach.clone();
        let readable = in_system_folders(&resolved)
            || reach
                .read_only
                .iter()
                .any(|path| resolved.starts_with(path));
        if !readable {
            reach.read_only.push(resolved.clone());
        }
        for path in &reach.read_only {
            if !path.exists() {
                return Err(format!(
                    "{} is to be readable by the process, and does not exist",
                    path.display()
                ));
            }
        }
        let mut command = tokio::process::Command::new(&self.bwrap);
        command
            .args(arguments(folder, &reach, working_folder))
            .arg("--")
            .arg(&resolved)
            .args(args)
            .env_clear()
            .env("PATH", SEARCH_PATH)
            .env("LANG", "C.UTF-8")
            .envs(environment)
            // Always the run's own, whatever a profile says.
            .env("HOME", folder.home())
            .env("TMPDIR", "/tmp")
            .current_dir(working_folder);
        Ok(ConfinedCommand::new(command))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_folders_hold_home_temp_and_commands_apart_from_modules() {
        let folder = RunFolder::new(Path::new("/w"), "r_../x");
        assert_eq!(folder.path(), Path::new("/w/r____x"));
        assert_eq!(folder.home(), Path::new("/w/r____x/.home"));
        assert_eq!(folder.temp(), Path::new("/w/r____x/.tmp"));
        assert_eq!(folder.commands(), Path::new("/w/r____x/.commands"));
        assert!(!folder_name(".home").starts_with('.'));
    }

    #[test]
    fn writable_places_are_bound_after_read_only_ones() {
        let folder = RunFolder::new(Path::new("/w"), "r1");
        let reach = Reach {
            writable: vec![PathBuf::from("/w/r1/build")],
            read_only: vec![PathBuf::from("/opt/agent")],
            network: false,
            writable_shown_at: Vec::new(),
        };
        let arguments = arguments(&folder, &reach, Path::new("/w/r1/build"));
        let position = |wanted: &[&str]| {
            arguments
                .windows(wanted.len())
                .position(|window| window == wanted)
        };
        let read_only = position(&["--ro-bind", "/opt/agent", "/opt/agent"]).unwrap();
        let workspace = position(&["--bind", "/w/r1/build", "/w/r1/build"]).unwrap();
        assert!(read_only < workspace);
        assert!(position(&["--bind", "/w/r1/.home", "/w/r1/.home"]).is_some());
        assert!(position(&["--bind", "/w/r1/.tmp", "/tmp"]).is_some());
        assert!(position(&["--remount-ro", "/"]).unwrap() > workspace);
        assert!(position(&["--cap-drop", "ALL"]).is_some());
        assert!(!arguments.contains(&"--share-net".to_owned()));
        assert!(!arguments.iter().any(|argument| argument == "/etc/shadow"));
        assert_eq!(arguments.last().map(String::as_str), Some("/w/r1/build"));
    }

    #[test]
    fn a_copy_is_shown_at_its_original_s_path_and_worked_in_there() {
        let folder = RunFolder::new(Path::new("/w"), "r1");
        let reach = Reach {
            writable_shown_at: vec![(PathBuf::from("/w/r1/fix"), PathBuf::from("/w/r1/build"))],
            ..Reach::default()
        };
        let arguments = arguments(&folder, &reach, Path::new("/w/r1/build"));
        let position = |wanted: &[&str]| {
            arguments
                .windows(wanted.len())
                .position(|window| window == wanted)
        };
        let shown = position(&["--bind", "/w/r1/fix", "/w/r1/build"]).unwrap();
        assert!(position(&["--remount-ro", "/"]).unwrap() > shown);
        // The copy's own path is not shown: only where it stands in.
        assert!(position(&["--bind", "/w/r1/fix", "/w/r1/fix"]).is_none());
        assert_eq!(
            arguments[arguments.len() - 2..],
            ["--chdir".to_owned(), "/w/r1/build".to_owned()]
        );
    }
}
