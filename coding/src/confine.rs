//! Keeps an agent's file access inside its workspace: the paths it asks to
//! read or write are resolved against the workspace and refused when they
//! leave it — by `..`, by an absolute path elsewhere, or through a symlink.

use std::path::{Component, Path, PathBuf};

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

/// A workspace folder, canonical, that paths are confined to.
#[derive(Clone, Debug)]
pub struct Confinement {
    root: PathBuf,
}

impl Confinement {
    pub fn new(root: &Path) -> Result<Confinement, Refusal> {
        let root = root
            .canonicalize()
            .map_err(|error| Refusal::Io(root.display().to_string(), error.to_string()))?;
        Ok(Confinement { root })
    }

    pub fn root(&self) -> &Path {
        &self.root
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
        let joined = if asked.is_absolute() {
            asked.to_path_buf()
        } else {
            self.root.join(asked)
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
}
