//! The folder a coding module's agents work in: a fresh git repository per
//! run and module (or a copy of the configured folder — never the folder
//! itself), committed after each agent so that what each one changed is a
//! git diff. Parallel agents get a git worktree each.

use std::path::{Path, PathBuf};

use serde::Serialize;

#[derive(Clone, Debug)]
pub struct Workspace {
    pub path: PathBuf,
    /// The commit the module started from.
    pub base: String,
    /// The branch of a worktree (`None` for the module's own folder).
    pub branch: Option<String>,
}

/// A file an agent changed, as `git diff --name-status` says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ChangedFile {
    pub path: String,
    pub status: &'static str,
}

async fn git(folder: &Path, args: &[&str]) -> Result<String, String> {
    let output = tokio::process::Command::new("git")
        .arg("-C")
        .arg(folder)
        .args([
            "-c",
            "user.name=Patchbay",
            "-c",
            "user.email=patchbay@localhost",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "core.hooksPath=/dev/null",
        ])
        .args(args)
        .output()
        .await
        .map_err(|error| format!("git could not be run: {error}"))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(format!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

impl Workspace {
    /// The workspace of `module_id` in `run_id` under `root`: made on the
    /// module's first activation (empty, or a copy of `source`), reused on
    /// the next ones so a revision continues where the agents left off.
    pub async fn prepare(
        root: &Path,
        run_id: &str,
        module_id: &str,
        source: Option<&Path>,
    ) -> Result<Workspace, String> {
        let path = root.join(safe_name(run_id)).join(safe_name(module_id));
        if path.join(".git").exists() {
            let base = git(&path, &["rev-list", "--max-parents=0", "HEAD"]).await?;
            let base = base.lines().next().unwrap_or_default().to_owned();
            return Ok(Workspace {
                path,
                base,
                branch: None,
            });
        }
        tokio::fs::create_dir_all(&path)
            .await
            .map_err(|error| format!("cannot make the workspace {}: {error}", path.display()))?;
        if let Some(source) = source {
            let (from, to) = (source.to_path_buf(), path.clone());
            tokio::task::spawn_blocking(move || copy_folder(&from, &to))
                .await
                .map_err(|error| format!("copying the workspace failed: {error}"))?
                .map_err(|error| {
                    format!("cannot copy the workspace {}: {error}", source.display())
                })?;
        }
        if !path.join(".git").exists() {
            git(&path, &["init", "-q"]).await?;
        }
        git(&path, &["add", "-A"]).await?;
        git(
            &path,
            &[
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                "Patchbay: starting point",
            ],
        )
        .await?;
        let base = git(&path, &["rev-parse", "HEAD"]).await?.trim().to_owned();
        Ok(Workspace {
            path,
            base,
            branch: None,
        })
    }

    pub async fn head(&self) -> Result<String, String> {
        Ok(git(&self.path, &["rev-parse", "HEAD"])
            .await?
            .trim()
            .to_owned())
    }

    /// Commits everything in the folder (new files too); returns the commit.
    pub async fn commit(&self, message: &str) -> Result<String, String> {
        git(&self.path, &["add", "-A"]).await?;
        git(
            &self.path,
            &["commit", "-q", "--allow-empty", "-m", message],
        )
        .await?;
        self.head().await
    }

    pub async fn diff(&self, from: &str, to: &str) -> Result<String, String> {
        git(&self.path, &["diff", "--no-color", from, to]).await
    }

    pub async fn changed_files(&self, from: &str, to: &str) -> Result<Vec<ChangedFile>, String> {
        let listing = git(
            &self.path,
            &["diff", "--name-status", "--no-renames", from, to],
        )
        .await?;
        Ok(listing
            .lines()
            .filter_map(|line| {
                let (status, path) = line.split_once('\t')?;
                Some(ChangedFile {
                    path: path.to_owned(),
                    status: match status.chars().next() {
                        Some('A') => "added",
                        Some('D') => "deleted",
                        _ => "modified",
                    },
                })
            })
            .collect())
    }

    /// A worktree of this repository for one of several agents working at
    /// once, on its own branch from the current commit.
    pub async fn worktree(&self, name: &str) -> Result<Workspace, String> {
        let folder_name = self
            .path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let path = self
            .path
            .with_file_name(format!("{folder_name}.worktrees"))
            .join(safe_name(name));
        let branch = format!("patchbay/{}", safe_name(name));
        if !path.exists() {
            let path_text = path.display().to_string();
            git(
                &self.path,
                &["worktree", "add", "-q", "-B", &branch, &path_text, "HEAD"],
            )
            .await?;
        }
        Ok(Workspace {
            path,
            base: self.head().await?,
            branch: Some(branch),
        })
    }

    /// Merges a worktree's branch into this folder; on a conflict nothing
    /// is merged and the conflict is the error.
    pub async fn merge(&self, worktree: &Workspace) -> Result<(), String> {
        let Some(branch) = &worktree.branch else {
            return Ok(());
        };
        let message = format!("Merge {branch}");
        if let Err(problem) = git(&self.path, &["merge", "--no-ff", "-m", &message, branch]).await {
            let _ = git(&self.path, &["merge", "--abort"]).await;
            return Err(problem);
        }
        Ok(())
    }
}

/// A file name made of the id's letters, digits, `-` and `_`.
fn safe_name(id: &str) -> String {
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

fn copy_folder(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        let kind = entry.file_type()?;
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(entry.path())?, &target)?;
        } else if kind.is_dir() {
            copy_folder(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn each_commit_is_a_diff_and_the_source_folder_is_left_alone() {
        let source = tempfile::tempdir().unwrap();
        std::fs::write(source.path().join("README.md"), "hello\n").unwrap();
        let root = tempfile::tempdir().unwrap();
        let workspace = Workspace::prepare(root.path(), "r1", "m/1", Some(source.path()))
            .await
            .unwrap();
        assert!(workspace.path.ends_with("r1/m_1"));
        std::fs::write(workspace.path.join("README.md"), "hello, world\n").unwrap();
        std::fs::write(workspace.path.join("new.txt"), "new\n").unwrap();
        let head = workspace.commit("builder").await.unwrap();
        let diff = workspace.diff(&workspace.base, &head).await.unwrap();
        assert!(diff.contains("+hello, world"), "{diff}");
        assert_eq!(
            workspace
                .changed_files(&workspace.base, &head)
                .await
                .unwrap(),
            vec![
                ChangedFile {
                    path: "README.md".to_owned(),
                    status: "modified"
                },
                ChangedFile {
                    path: "new.txt".to_owned(),
                    status: "added"
                },
            ]
        );
        assert_eq!(
            std::fs::read_to_string(source.path().join("README.md")).unwrap(),
            "hello\n"
        );
        // The next activation of the module continues in the same folder.
        let again = Workspace::prepare(root.path(), "r1", "m/1", Some(source.path()))
            .await
            .unwrap();
        assert_eq!(again.base, workspace.base);
        assert!(again.path.join("new.txt").exists());
        // A worktree starts from the current commit, on its own.
        let worktree = workspace.worktree("1-tester").await.unwrap();
        assert!(worktree.path.join("new.txt").exists());
        std::fs::write(worktree.path.join("only-here.txt"), "x\n").unwrap();
        worktree.commit("tester").await.unwrap();
        assert!(!workspace.path.join("only-here.txt").exists());
        workspace.merge(&worktree).await.unwrap();
        assert!(workspace.path.join("only-here.txt").exists());
    }
}
