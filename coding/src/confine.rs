//! Keeps an agent's file access inside its workspace: the paths it asks to
//! read or write are resolved against the workspace and refused when they
//! leave it — by `..`, by an absolute path elsewhere, or through a symlink.
//! The server reads and writes for the agent with `openat2` and
//! `RESOLVE_BENEATH` from the workspace folder, so a link the agent swaps in
//! between the check and the access still cannot lead out.

use std::io::Read;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{Mode, OFlags, ResolveFlags};

/// The largest file an agent may read through the client.
pub const MAX_READ_BYTES: u64 = 16 * 1024 * 1024;

/// Why a confined read or write did not happen.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum FileProblem {
    #[error("{0}")]
    Refused(#[from] Refusal),
    #[error("{0} does not exist")]
    NotFound(String),
    #[error("{0}: {1}")]
    Failed(String, String),
}

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("{0} is outside the workspace")]
    Outside(String),
    #[error("{0} goes up with \"..\", which is not allowed")]
    ParentDirectory(String),
    #[error("{0} leads out of the workspace through a symbolic link")]
    SymlinkOut(String),
    #[error("{0}: {1}")]
    Io(String, String),
}

/// A workspace folder, canonical, that paths are confined to; and, when
/// the agent is shown it at another path (a copy at its original's), that
/// path, which the agent's paths name it by.
#[derive(Clone, Debug)]
pub struct Confinement {
    root: PathBuf,
    shown_at: Option<PathBuf>,
}

impl Confinement {
    pub fn new(root: &Path) -> Result<Confinement, Refusal> {
        let root = root
            .canonicalize()
            .map_err(|error| Refusal::Io(root.display().to_string(), error.to_string()))?;
        Ok(Confinement {
            root,
            shown_at: None,
        })
    }

    /// The same workspace, which the agent sees at `seen` (an absolute
    /// path, as the sandbox shows it there).
    pub fn shown_at(mut self, seen: &Path) -> Confinement {
        self.shown_at = Some(seen.to_path_buf());
        self
    }

    /// The workspace on the host: where files are read and written.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The workspace as the agent sees it: its working folder.
    pub fn seen_root(&self) -> &Path {
        self.shown_at.as_deref().unwrap_or(&self.root)
    }

    /// The path `asked` names inside the workspace (relative paths are taken
    /// from the workspace), or why it may not be used. The file itself need
    /// not exist; whatever part of it exists must lie inside the workspace
    /// once symbolic links are followed.
    pub fn resolve(&self, asked: &Path) -> Result<PathBuf, Refusal> {
        let shown = asked.display().to_string();
        if asked
            .components()
            .any(|component| component == Component::ParentDir)
        {
            return Err(Refusal::ParentDirectory(shown));
        }
        // A path the agent names by where it sees the workspace is that
        // place in the workspace.
        let seen_inside = self
            .shown_at
            .as_deref()
            .and_then(|seen| asked.strip_prefix(seen).ok());
        let joined = match seen_inside {
            Some(inside) => self.root.join(inside),
            None if asked.is_absolute() => asked.to_path_buf(),
            None => self.root.join(asked),
        };
        // The agent may name the workspace by the path it was given rather
        // than its canonical form (e.g. /tmp → /private/tmp).
        let relative = match joined.strip_prefix(&self.root) {
            Ok(relative) => relative.to_path_buf(),
            Err(_) => {
                let parent = existing_ancestor(&joined);
                let canonical = parent
                    .canonicalize()
                    .map_err(|error| Refusal::Io(shown.clone(), error.to_string()))?;
                let Ok(inside) = canonical.strip_prefix(&self.root) else {
                    return Err(Refusal::Outside(shown));
                };
                let rest = joined.strip_prefix(&parent).unwrap_or(Path::new(""));
                inside.join(rest)
            }
        };
        let resolved = self.root.join(relative);
        // Follow links in whatever part exists.
        let existing = existing_ancestor(&resolved);
        let canonical = existing
            .canonicalize()
            .map_err(|error| Refusal::Io(shown.clone(), error.to_string()))?;
        if !canonical.starts_with(&self.root) {
            return Err(Refusal::SymlinkOut(shown));
        }
        // `join("")` would add a trailing slash, and "file/" is not a file.
        match resolved.strip_prefix(&existing) {
            Ok(rest) if !rest.as_os_str().is_empty() => Ok(canonical.join(rest)),
            _ => Ok(canonical),
        }
    }
}

/// Opens `relative` under `root` the way the kernel resolves it, never
/// above `root` (whatever links lie on the way).
fn open_beneath(
    root: &OwnedFd,
    relative: &Path,
    flags: OFlags,
    mode: Mode,
) -> std::io::Result<OwnedFd> {
    rustix::fs::openat2(
        root,
        relative,
        flags | OFlags::CLOEXEC,
        mode,
        ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
    )
    .map_err(std::io::Error::from)
}

fn open_root(root: &Path) -> std::io::Result<OwnedFd> {
    rustix::fs::open(
        root,
        OFlags::DIRECTORY | OFlags::PATH | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(std::io::Error::from)
}

/// Makes the folders of `relative` under `root`, one at a time, each
/// opened beneath `root` before the next is made in it.
fn make_folders_beneath(root: &OwnedFd, relative: &Path) -> std::io::Result<()> {
    let mut done = PathBuf::new();
    for component in relative.components() {
        let Component::Normal(name) = component else {
            continue;
        };
        let parent = if done.as_os_str().is_empty() {
            rustix::io::dup(root).map_err(std::io::Error::from)?
        } else {
            open_beneath(root, &done, OFlags::DIRECTORY | OFlags::PATH, Mode::empty())?
        };
        done.push(name);
        match rustix::fs::mkdirat(&parent, name, Mode::from_raw_mode(0o755)) {
            Ok(()) | Err(rustix::io::Errno::EXIST) => {}
            Err(errno) => return Err(errno.into()),
        }
    }
    if done.as_os_str().is_empty() {
        return Ok(());
    }
    // What exists there now must be a folder beneath the root.
    open_beneath(root, &done, OFlags::DIRECTORY | OFlags::PATH, Mode::empty()).map(drop)
}

impl Confinement {
    /// The path an agent asked for, checked, relative to the workspace.
    fn relative(&self, asked: &Path) -> Result<PathBuf, Refusal> {
        let resolved = self.resolve(asked)?;
        Ok(resolved
            .strip_prefix(&self.root)
            .map(Path::to_path_buf)
            .unwrap_or_default())
    }

    /// Reads a text file for the agent.
    pub async fn read(&self, asked: &Path) -> Result<String, FileProblem> {
        let relative = self.relative(asked)?;
        let root = self.root.clone();
        let shown = asked.display().to_string();
        let result = tokio::task::spawn_blocking(move || {
            let root = open_root(&root)?;
            let file = open_beneath(&root, &relative, OFlags::RDONLY, Mode::empty())?;
            let mut text = String::new();
            std::fs::File::from(file)
                .take(MAX_READ_BYTES + 1)
                .read_to_string(&mut text)?;
            Ok::<_, std::io::Error>(text)
        })
        .await
        .map_err(|error| FileProblem::Failed(shown.clone(), error.to_string()))?;
        match result {
            Ok(text) if text.len() as u64 > MAX_READ_BYTES => Err(FileProblem::Failed(
                shown,
                format!("larger than {MAX_READ_BYTES} bytes, the most an agent reads at once"),
            )),
            Ok(text) => Ok(text),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                Err(FileProblem::NotFound(shown))
            }
            Err(error) if error.raw_os_error() == Some(rustix::io::Errno::XDEV.raw_os_error()) => {
                Err(FileProblem::Refused(Refusal::SymlinkOut(shown)))
            }
            Err(error) => Err(FileProblem::Failed(shown, error.to_string())),
        }
    }

    /// Writes a text file for the agent, making the folders it needs.
    pub async fn write(&self, asked: &Path, content: &str) -> Result<(), FileProblem> {
        let relative = self.relative(asked)?;
        if relative.as_os_str().is_empty() {
            return Err(FileProblem::Failed(
                asked.display().to_string(),
                "is the workspace itself, not a file".to_owned(),
            ));
        }
        let root = self.root.clone();
        let shown = asked.display().to_string();
        let content = content.to_owned();
        let result = tokio::task::spawn_blocking(move || {
            let root = open_root(&root)?;
            if let Some(parent) = relative.parent() {
                make_folders_beneath(&root, parent)?;
            }
            let file = open_beneath(
                &root,
                &relative,
                OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC,
                Mode::from_raw_mode(0o644),
            )?;
            std::io::Write::write_all(&mut std::fs::File::from(file), content.as_bytes())
        })
        .await
        .map_err(|error| FileProblem::Failed(shown.clone(), error.to_string()))?;
        result.map_err(|error| {
            if error.raw_os_error() == Some(rustix::io::Errno::XDEV.raw_os_error()) {
                FileProblem::Refused(Refusal::SymlinkOut(shown))
            } else {
                FileProblem::Failed(shown, error.to_string())
            }
        })
    }
}

/// The longest leading part of `path` that exists (at worst `/`).
fn existing_ancestor(path: &Path) -> PathBuf {
    let mut current = path.to_path_buf();
    while current.symlink_metadata().is_err() {
        if !current.pop() {
            break;
        }
    }
    current
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn reads_and_writes_stay_inside_and_make_their_folders() {
        let (_folder, confinement) = workspace();
        confinement
            .write(Path::new("notes/today.md"), "hello\n")
            .await
            .unwrap();
        confinement
            .write(Path::new("top.md"), "top\n")
            .await
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(confinement.root().join("top.md")).unwrap(),
            "top\n"
        );
        assert_eq!(
            confinement.read(Path::new("notes/today.md")).await.unwrap(),
            "hello\n"
        );
        assert_eq!(
            confinement.read(Path::new("missing.md")).await,
            Err(FileProblem::NotFound("missing.md".to_owned()))
        );
        let big = vec![b'a'; usize::try_from(MAX_READ_BYTES).unwrap() + 1];
        std::fs::write(confinement.root().join("big.txt"), big).unwrap();
        assert!(matches!(
            confinement.read(Path::new("big.txt")).await,
            Err(FileProblem::Failed(_, reason)) if reason.contains("larger than")
        ));
    }

    #[test]
    fn a_link_out_swapped_in_after_the_check_still_leads_nowhere() {
        // What the server does after `resolve` said yes: opens beneath the
        // workspace. Here the link is already there, as if the agent had
        // swapped it in between.
        let (_folder, confinement) = workspace();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "no").unwrap();
        std::os::unix::fs::symlink(outside.path(), confinement.root().join("d")).unwrap();
        let root = open_root(confinement.root()).unwrap();
        let error =
            open_beneath(&root, Path::new("d/secret"), OFlags::RDONLY, Mode::empty()).unwrap_err();
        assert_eq!(
            error.raw_os_error(),
            Some(rustix::io::Errno::XDEV.raw_os_error())
        );
        let error = make_folders_beneath(&root, Path::new("d/new")).unwrap_err();
        assert_eq!(
            error.raw_os_error(),
            Some(rustix::io::Errno::XDEV.raw_os_error())
        );
        assert!(!outside.path().join("new").exists());
        // A link that stays inside is fine.
        std::fs::create_dir(confinement.root().join("real")).unwrap();
        std::fs::write(confinement.root().join("real/file"), "yes").unwrap();
        std::os::unix::fs::symlink("real", confinement.root().join("alias")).unwrap();
        assert!(
            open_beneath(
                &root,
                Path::new("alias/file"),
                OFlags::RDONLY,
                Mode::empty()
            )
            .is_ok()
        );
    }

    fn workspace() -> (tempfile::TempDir, Confinement) {
        let folder = tempfile::tempdir().unwrap();
        let confinement = Confinement::new(folder.path()).unwrap();
        (folder, confinement)
    }

    #[test]
    fn paths_inside_resolve_whether_relative_absolute_or_not_yet_there() {
        let (folder, confinement) = workspace();
        let root = confinement.root().to_path_buf();
        assert_eq!(
            confinement.resolve(Path::new("src/main.rs")).unwrap(),
            root.join("src/main.rs")
        );
        assert_eq!(
            confinement
                .resolve(&folder.path().join("README.md"))
                .unwrap(),
            root.join("README.md")
        );
        assert_eq!(
            confinement.resolve(&root.join("a/b/c.txt")).unwrap(),
            root.join("a/b/c.txt")
        );
    }

    #[test]
    fn an_existing_file_resolves_to_a_path_that_can_be_read() {
        let (folder, confinement) = workspace();
        std::fs::write(folder.path().join("notes.md"), "draft\n").unwrap();
        let resolved = confinement.resolve(Path::new("notes.md")).unwrap();
        // Path equality ignores a trailing slash; reading does not.
        assert!(!resolved.as_os_str().to_string_lossy().ends_with('/'));
        assert_eq!(std::fs::read_to_string(&resolved).unwrap(), "draft\n");
    }

    #[test]
    fn parent_steps_other_folders_and_links_out_are_refused() {
        let (folder, confinement) = workspace();
        assert!(matches!(
            confinement.resolve(Path::new("../x")),
            Err(Refusal::ParentDirectory(_))
        ));
        assert!(matches!(
            confinement.resolve(&folder.path().join("sub/../../x")),
            Err(Refusal::ParentDirectory(_))
        ));
        assert!(matches!(
            confinement.resolve(Path::new("/etc/passwd")),
            Err(Refusal::Outside(_))
        ));
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), folder.path().join("link")).unwrap();
        assert!(matches!(
            confinement.resolve(Path::new("link/secret.txt")),
            Err(Refusal::SymlinkOut(_))
        ));
        std::os::unix::fs::symlink("/etc/hostname", folder.path().join("file-link")).unwrap();
        assert!(matches!(
            confinement.resolve(Path::new("file-link")),
            Err(Refusal::SymlinkOut(_))
        ));
        // A link that stays inside is fine.
        std::fs::create_dir(folder.path().join("real")).unwrap();
        std::os::unix::fs::symlink(folder.path().join("real"), folder.path().join("alias"))
            .unwrap();
        assert_eq!(
            confinement.resolve(Path::new("alias/f.txt")).unwrap(),
            confinement.root().join("real/f.txt")
        );
    }

    #[tokio::test]
    async fn a_workspace_shown_at_another_path_is_named_by_it_and_stays_confined() {
        let (folder, confinement) = workspace();
        let seen = Path::new("/runs/r1/build");
        let confinement = confinement.shown_at(seen);
        assert_eq!(confinement.seen_root(), seen);
        confinement
            .write(&seen.join("notes.md"), "from the copy\n")
            .await
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(folder.path().join("notes.md")).unwrap(),
            "from the copy\n"
        );
        assert_eq!(
            confinement.read(&seen.join("notes.md")).await.unwrap(),
            "from the copy\n"
        );
        // Its own path still names it; a step out of the shown path does not
        // leave it.
        assert!(confinement.resolve(&folder.path().join("notes.md")).is_ok());
        assert!(matches!(
            confinement.resolve(&seen.join("../other/x")),
            Err(Refusal::ParentDirectory(_))
        ));
        assert!(matches!(
            confinement.resolve(Path::new("/runs/r1/other/x")),
            Err(Refusal::Outside(_) | Refusal::Io(..))
        ));
    }
}
