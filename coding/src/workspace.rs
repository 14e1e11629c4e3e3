//! The folder a coding module's agents work in: a fresh git repository per
//! run and module (or a copy of an allowed folder — never the folder
//! itself), committed after each agent so that what each one changed is a
//! git diff. Parallel agents get a git worktree each. Git runs confined
//! like the agents: an agent can write `.git/config`, and git runs the
//! programs that file names.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use engine::sandbox::{Reach, RunFolder, Sandbox, folder_name};

/// Files a copied folder may hold at most, besides the byte cap.
const MAX_COPIED_FILES: u64 = 100_000;

/// Runs git on one module's folders, and nothing else of the host.
#[derive(Clone, Debug)]
struct Git {
    sandbox: Sandbox,
    folder: RunFolder,
    /// The module's folder and its worktrees' folder.
    writable: Vec<PathBuf>,
}

impl Git {
    async fn run(&self, working_folder: &Path, args: &[&str]) -> Result<String, String> {
        let mut all: Vec<String> = [
            "-c",
            "user.name=Patchbay",
            "-c",
            "user.email=patchbay@localhost",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "core.fsmonitor=false",
        ]
        .iter()
        .map(|part| (*part).to_owned())
        .collect();
        all.extend(args.iter().map(|part| (*part).to_owned()));
        let reach = Reach {
            writable: self.writable.clone(),
            ..Reach::default()
        };
        let environment = BTreeMap::from([
            ("GIT_CONFIG_NOSYSTEM".to_owned(), "1".to_owned()),
            ("GIT_TERMINAL_PROMPT".to_owned(), "0".to_owned()),
        ]);
        let output = self
            .sandbox
            .command(
                &self.folder,
                &reach,
                "git",
                &all,
                &environment,
                working_folder,
            )?
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
}

#[derive(Clone, Debug)]
pub struct Workspace {
    pub path: PathBuf,
    /// The commit the module started from.
    pub base: String,
    /// The branch of a worktree (`None` for the module's own folder).
    pub branch: Option<String>,
    git: Git,
}

pub use wire::content::{ChangedFile, FileChange};

/// Where a workspace starts from: an allowed folder of the server (its
/// path with links resolved), or the workspace an upstream coding module
/// left, at the commit it left (`at_commit`), whatever is on disk since;
/// and the most it may hold.
#[derive(Clone, Copy, Debug)]
pub struct Source<'a> {
    pub folder: &'a Path,
    pub max_bytes: u64,
    pub at_commit: Option<&'a str>,
}

/// Where a workspace started from an upstream's keeps that commit, so its
/// diff is its own work, on every activation.
const BASE_REF: &str = "refs/patchbay/base";

/// A commit named by its hash, as git prints it (never an option or a
/// ref expression).
fn is_commit(text: &str) -> bool {
    (7..=64).contains(&text.len()) && text.bytes().all(|byte| byte.is_ascii_hexdigit())
}

impl Workspace {
    /// The workspace of `module_id` in the run of `folder`: made on the
    /// module's first activation (empty, or a copy of `source`), reused on
    /// the next ones so a revision continues where the agents left off.
    pub async fn prepare(
        sandbox: &Sandbox,
        folder: &RunFolder,
        module_id: &str,
        source: Option<Source<'_>>,
    ) -> Result<Workspace, String> {
        let name = folder_name(module_id);
        let path = folder.path().join(&name);
        let worktrees = folder.path().join(format!("{name}.worktrees"));
        folder
            .prepare()
            .await
            .map_err(|error| format!("cannot make the run's folder: {error}"))?;
        for made in [&path, &worktrees] {
            tokio::fs::create_dir_all(made).await.map_err(|error| {
                format!("cannot make the workspace {}: {error}", made.display())
            })?;
        }
        let git = Git {
            sandbox: sandbox.clone(),
            folder: folder.clone(),
            writable: vec![path.clone(), worktrees.clone()],
        };
        if path.join(".git").exists() {
            // Every activation commits what its agents did, so changes
            // not committed are an interrupted activation's (the server
            // stopped): the module goes on from its last commit.
            git.run(&path, &["reset", "-q", "--hard"]).await?;
            git.run(&path, &["clean", "-q", "-fd"]).await?;
            // The worktrees of the activation before (or of one
            // interrupted): parallel agents start afresh from this commit.
            empty_folder(worktrees).await?;
            git.run(&path, &["worktree", "prune"]).await?;
            let base = match git
                .run(&path, &["rev-parse", "--verify", "-q", BASE_REF])
                .await
            {
                Ok(base) => base,
                Err(_) => {
                    git.run(&path, &["rev-list", "--max-parents=0", "HEAD"])
                        .await?
                }
            };
            let base = base.lines().next().unwrap_or_default().trim().to_owned();
            return Ok(Workspace {
                path,
                base,
                branch: None,
                git,
            });
        }
        if let Some(commit) = source.and_then(|source| source.at_commit)
            && !is_commit(commit)
        {
            return Err(format!("\"{commit}\" is not a commit"));
        }
        if let Some(source) = source {
            let (from, to, max_bytes) =
                (source.folder.to_path_buf(), path.clone(), source.max_bytes);
            tokio::task::spawn_blocking(move || {
                let mut budget = Budget {
                    bytes_left: max_bytes,
                    files_left: MAX_COPIED_FILES,
                    max_bytes,
                };
                copy_folder(&from, &to, &mut budget)
            })
            .await
            .map_err(|error| format!("copying the workspace failed: {error}"))?
            .map_err(|error| {
                format!(
                    "cannot copy the workspace folder {}: {error}",
                    source.folder.display()
                )
            })?;
        }
        if let Some(commit) = source.and_then(|source| source.at_commit) {
            return Workspace::at_upstream_commit(path, git, commit).await;
        }
        if !path.join(".git").exists() {
            git.run(&path, &["init", "-q"]).await?;
        }
        git.run(&path, &["add", "-A"]).await?;
        git.run(
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
        let base = git
            .run(&path, &["rev-parse", "HEAD"])
            .await?
            .trim()
            .to_owned();
        Ok(Workspace {
            path,
            base,
            branch: None,
            git,
        })
    }

    /// A copy of an upstream's workspace, put back to the commit it left:
    /// what it changed after, or what is on its disk now, does not count.
    async fn at_upstream_commit(
        path: PathBuf,
        git: Git,
        commit: &str,
    ) -> Result<Workspace, String> {
        if !path.join(".git").exists() {
            return Err("the upstream's workspace is not a git repository".to_owned());
        }
        git.run(&path, &["reset", "-q", "--hard", commit]).await?;
        git.run(&path, &["clean", "-q", "-fdx"]).await?;
        // Its worktrees were the upstream's, in a folder not copied.
        git.run(&path, &["worktree", "prune"]).await?;
        git.run(&path, &["update-ref", BASE_REF, commit]).await?;
        Ok(Workspace {
            path,
            base: commit.to_owned(),
            branch: None,
            git,
        })
    }

    async fn git(&self, args: &[&str]) -> Result<String, String> {
        self.git.run(&self.path, args).await
    }

    pub async fn head(&self) -> Result<String, String> {
        Ok(self.git(&["rev-parse", "HEAD"]).await?.trim().to_owned())
    }

    /// Commits everything in the folder (new files too); returns the commit.
    pub async fn commit(&self, message: &str) -> Result<String, String> {
        self.git(&["add", "-A"]).await?;
        self.git(&["commit", "-q", "--allow-empty", "-m", message])
            .await?;
        self.head().await
    }

    pub async fn diff(&self, from: &str, to: &str) -> Result<String, String> {
        self.git(&["diff", "--no-color", from, to]).await
    }

    pub async fn changed_files(&self, from: &str, to: &str) -> Result<Vec<ChangedFile>, String> {
        let listing = self
            .git(&["diff", "--name-status", "--no-renames", from, to])
            .await?;
        Ok(listing
            .lines()
            .filter_map(|line| {
                let (status, path) = line.split_once('\t')?;
                Some(ChangedFile {
                    path: path.to_owned(),
                    status: match status.chars().next() {
                        Some('A') => FileChange::Added,
                        Some('D') => FileChange::Deleted,
                        _ => FileChange::Modified,
                    },
                })
            })
            .collect())
    }

    /// Where this module's worktrees are.
    pub fn worktrees_folder(&self) -> PathBuf {
        let folder_name_of_module = self
            .path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        self.path
            .with_file_name(format!("{folder_name_of_module}.worktrees"))
    }

    /// A worktree of this repository for one of several agents working at
    /// once, on its own branch from the current commit.
    pub async fn worktree(&self, name: &str) -> Result<Workspace, String> {
        let path = self.worktrees_folder().join(folder_name(name));
        let branch = format!("patchbay/{}", folder_name(name));
        if !path.exists() {
            let path_text = path.display().to_string();
            self.git(&["worktree", "add", "-q", "-B", &branch, &path_text, "HEAD"])
                .await?;
        }
        Ok(Workspace {
            path,
            base: self.head().await?,
            branch: Some(branch),
            git: self.git.clone(),
        })
    }

    /// Merges a worktree's branch into this folder; on a conflict nothing
    /// is merged and the conflict is the error.
    pub async fn merge(&self, worktree: &Workspace) -> Result<(), String> {
        let Some(branch) = &worktree.branch else {
            return Ok(());
        };
        let message = format!("Merge {branch}");
        if let Err(problem) = self
            .git(&["merge", "--no-ff", "-m", &message, branch])
            .await
        {
            let _ = self.git(&["merge", "--abort"]).await;
            return Err(problem);
        }
        Ok(())
    }
}

/// Removes what `folder` holds, and keeps it (an agent's files are ours
/// to remove: the sandbox runs them as this user). A cancelled agent's
/// processes are killed, not waited for: one still dying may write into
/// its worktree while it goes (the removal then finds a folder not empty),
/// so a failed removal is tried again for about two seconds.
async fn empty_folder(folder: PathBuf) -> Result<(), String> {
    const ATTEMPTS: u32 = 20;
    tokio::task::spawn_blocking(move || -> std::io::Result<()> {
        let mut attempt = 1;
        loop {
            match remove_entries(&folder) {
                Ok(()) => return Ok(()),
                Err(_) if attempt < ATTEMPTS => {
                    attempt += 1;
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
                Err(error) => return Err(error),
            }
        }
    })
    .await
    .map_err(|error| format!("removing worktrees failed: {error}"))?
    .map_err(|error| format!("cannot remove the worktrees left before: {error}"))
}

fn remove_entries(folder: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(folder)? {
        let path = entry?.path();
        if path.is_dir() && !path.is_symlink() {
            std::fs::remove_dir_all(&path)?;
        } else {
            std::fs::remove_file(&path)?;
        }
    }
    Ok(())
}

/// Removes a module's worktrees when dropped armed: the parallel agents'
/// activation was cancelled (its future dropped mid-way), and no one else
/// will. The next activation of the module would remove them too, but a
/// cancelled run has none.
pub struct WorktreesCleanup {
    folder: Option<PathBuf>,
}

impl WorktreesCleanup {
    pub fn arm(workspace: &Workspace) -> WorktreesCleanup {
        WorktreesCleanup {
            folder: Some(workspace.worktrees_folder()),
        }
    }

    /// The agents finished: their worktrees stay to be looked at until the
    /// run's folder goes.
    pub fn disarm(mut self) {
        self.folder = None;
    }
}

impl Drop for WorktreesCleanup {
    fn drop(&mut self) {
        let Some(folder) = self.folder.take() else {
            return;
        };
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Err(error) = empty_folder(folder).await {
                    tracing::warn!(%error, "a cancelled activation's worktrees stay");
                }
            });
        }
    }
}

/// What a copy may still take.
struct Budget {
    bytes_left: u64,
    files_left: u64,
    max_bytes: u64,
}

fn too_large(message: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::FileTooLarge, message)
}

/// Copies regular files, folders and links (as links, never followed);
/// anything else (a device, a pipe) is left out, and the copy stops when
/// the budget runs out.
fn copy_folder(from: &Path, to: &Path, budget: &mut Budget) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        let kind = entry.file_type()?;
        if budget.files_left == 0 {
            return Err(too_large(format!(
                "it holds more than {MAX_COPIED_FILES} files, the most a workspace copy may have"
            )));
        }
        budget.files_left -= 1;
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(entry.path())?, &target)?;
        } else if kind.is_dir() {
            copy_folder(&entry.path(), &target, budget)?;
        } else if kind.is_file() {
            let size = entry.metadata()?.len();
            if size > budget.bytes_left {
                return Err(too_large(format!(
                    "it holds more than {} bytes, the most a workspace copy may have (--workspace-copy-max-bytes)",
                    budget.max_bytes
                )));
            }
            budget.bytes_left -= size;
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sandbox() -> Sandbox {
        Sandbox::detect("bwrap")
            .unwrap_or_else(|unavailable| panic!("these tests need bubblewrap: {unavailable}"))
    }

    fn source(folder: &Path) -> Option<Source<'_>> {
        Some(Source {
            folder,
            max_bytes: 1024 * 1024,
            at_commit: None,
        })
    }

    #[tokio::test]
    async fn a_copy_stops_at_its_cap_and_leaves_out_what_is_not_a_file() {
        let sandbox = sandbox();
        let big = tempfile::tempdir().unwrap();
        std::fs::write(big.path().join("large.bin"), vec![0_u8; 2048]).unwrap();
        let root = tempfile::tempdir().unwrap();
        let folder = RunFolder::new(root.path(), "r1");
        let capped = Source {
            folder: big.path(),
            max_bytes: 1000,
            at_commit: None,
        };
        let error = Workspace::prepare(&sandbox, &folder, "m", Some(capped))
            .await
            .unwrap_err();
        assert!(error.contains("more than 1000 bytes"), "{error}");
        // A pipe would block a plain copy for ever; it is left out.
        let odd = tempfile::tempdir().unwrap();
        std::fs::write(odd.path().join("a.txt"), "a\n").unwrap();
        let status = std::process::Command::new("mkfifo")
            .arg(odd.path().join("pipe"))
            .status()
            .unwrap();
        assert!(status.success());
        let workspace = Workspace::prepare(&sandbox, &folder, "n", source(odd.path()))
            .await
            .unwrap();
        assert!(workspace.path.join("a.txt").exists());
        assert!(!workspace.path.join("pipe").exists());
    }

    #[tokio::test]
    async fn a_workspace_from_an_upstream_s_starts_at_its_commit_and_diffs_only_its_own_work() {
        let sandbox = sandbox();
        let root = tempfile::tempdir().unwrap();
        let first_run = RunFolder::new(root.path(), "r1");
        let build = Workspace::prepare(&sandbox, &first_run, "build", None)
            .await
            .unwrap();
        std::fs::write(build.path.join("plan.txt"), "the plan\n").unwrap();
        let left = build.commit("builder").await.unwrap();
        // What happens on its disk after does not count.
        std::fs::write(build.path.join("plan.txt"), "changed on disk\n").unwrap();
        std::fs::write(build.path.join("stray.txt"), "stray\n").unwrap();
        let upstream = |commit| Source {
            folder: &build.path,
            max_bytes: 1024 * 1024,
            at_commit: Some(commit),
        };
        let second_run = RunFolder::new(root.path(), "r2");
        let fix = Workspace::prepare(&sandbox, &second_run, "fix", Some(upstream(&left)))
            .await
            .unwrap();
        assert_eq!(fix.base, left);
        assert_eq!(
            std::fs::read_to_string(fix.path.join("plan.txt")).unwrap(),
            "the plan\n"
        );
        assert!(!fix.path.join("stray.txt").exists());
        std::fs::write(fix.path.join("fix.txt"), "fixed\n").unwrap();
        let head = fix.commit("fixer").await.unwrap();
        let changed = fix.changed_files(&fix.base, &head).await.unwrap();
        let paths: Vec<&str> = changed.iter().map(|file| file.path.as_str()).collect();
        assert_eq!(paths, ["fix.txt"]);
        // Used again (a loop), it keeps that base.
        let again = Workspace::prepare(&sandbox, &second_run, "fix", Some(upstream(&left)))
            .await
            .unwrap();
        assert_eq!(again.base, left);
        // Anything but a commit's hash is refused before git sees it.
        let error = Workspace::prepare(&sandbox, &second_run, "odd", Some(upstream("--help")))
            .await
            .unwrap_err();
        assert!(error.contains("is not a commit"), "{error}");
    }

    #[tokio::test]
    async fn a_workspace_used_again_goes_on_from_its_last_commit() {
        let sandbox = sandbox();
        let root = tempfile::tempdir().unwrap();
        let folder = RunFolder::new(root.path(), "r1");
        let workspace = Workspace::prepare(&sandbox, &folder, "m", None)
            .await
            .unwrap();
        std::fs::write(workspace.path.join("kept.txt"), "committed\n").unwrap();
        workspace.commit("builder").await.unwrap();
        // What an agent cut off by a stopped server left.
        std::fs::write(workspace.path.join("kept.txt"), "half written\n").unwrap();
        std::fs::write(workspace.path.join("stray.txt"), "stray\n").unwrap();
        let again = Workspace::prepare(&sandbox, &folder, "m", None)
            .await
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(again.path.join("kept.txt")).unwrap(),
            "committed\n"
        );
        assert!(!again.path.join("stray.txt").exists());
        assert_eq!(again.base, workspace.base);
    }

    #[tokio::test]
    async fn git_runs_confined_so_a_planted_git_config_reaches_nothing() {
        let sandbox = sandbox();
        let root = tempfile::tempdir().unwrap();
        let folder = RunFolder::new(root.path(), "r1");
        let workspace = Workspace::prepare(&sandbox, &folder, "m", None)
            .await
            .unwrap();
        // What an agent could write: `git diff` runs diff.external.
        let outside = tempfile::tempdir().unwrap();
        let witness = outside.path().join("escaped");
        let config = workspace.path.join(".git/config");
        let mut text = std::fs::read_to_string(&config).unwrap();
        text.push_str(&format!(
            "[diff]\n\texternal = \"touch {} inside.txt; true\"\n",
            witness.display()
        ));
        std::fs::write(&config, text).unwrap();
        std::fs::write(workspace.path.join("x.txt"), "x\n").unwrap();
        let head = workspace.commit("agent").await.unwrap();
        let _ = workspace.diff(&workspace.base, &head).await;
        assert!(
            workspace.path.join("inside.txt").exists(),
            "the planted command ran (confined), so the test means something"
        );
        assert!(!witness.exists(), "git ran the planted command on the host");
    }

    #[tokio::test]
    async fn each_commit_is_a_diff_and_the_source_folder_is_left_alone() {
        let sandbox = sandbox();
        let source_folder = tempfile::tempdir().unwrap();
        std::fs::write(source_folder.path().join("README.md"), "hello\n").unwrap();
        let root = tempfile::tempdir().unwrap();
        let folder = RunFolder::new(root.path(), "r1");
        let workspace = Workspace::prepare(&sandbox, &folder, "m/1", source(source_folder.path()))
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
                    status: FileChange::Modified
                },
                ChangedFile {
                    path: "new.txt".to_owned(),
                    status: FileChange::Added
                },
            ]
        );
        assert_eq!(
            std::fs::read_to_string(source_folder.path().join("README.md")).unwrap(),
            "hello\n"
        );
        // The next activation of the module continues in the same folder.
        let again = Workspace::prepare(&sandbox, &folder, "m/1", source(source_folder.path()))
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

    #[tokio::test]
    async fn worktrees_an_activation_left_are_removed_when_the_module_goes_on() {
        let sandbox = sandbox();
        let root = tempfile::tempdir().unwrap();
        let folder = RunFolder::new(root.path(), "r1");
        let workspace = Workspace::prepare(&sandbox, &folder, "m", None)
            .await
            .unwrap();
        // Parallel agents cut off half-way (the server stopped).
        let worktree = workspace.worktree("0-builder").await.unwrap();
        std::fs::write(worktree.path.join("half.txt"), "half written\n").unwrap();
        let again = Workspace::prepare(&sandbox, &folder, "m", None)
            .await
            .unwrap();
        let left: Vec<_> = std::fs::read_dir(again.worktrees_folder())
            .unwrap()
            .collect();
        assert!(left.is_empty(), "{left:?}");
        let listed = again.git(&["worktree", "list"]).await.unwrap();
        assert_eq!(listed.lines().count(), 1, "{listed}");
        // The same agent's worktree is made afresh from the current commit.
        let fresh = again.worktree("0-builder").await.unwrap();
        assert!(!fresh.path.join("half.txt").exists());
    }

    #[tokio::test]
    async fn a_cancelled_activation_s_worktrees_are_removed() {
        let sandbox = sandbox();
        let root = tempfile::tempdir().unwrap();
        let folder = RunFolder::new(root.path(), "r1");
        let workspace = Workspace::prepare(&sandbox, &folder, "m", None)
            .await
            .unwrap();
        let finished = WorktreesCleanup::arm(&workspace);
        workspace.worktree("0-a").await.unwrap();
        finished.disarm();
        assert!(workspace.worktrees_folder().join("0-a").exists());
        let cancelled = WorktreesCleanup::arm(&workspace);
        workspace.worktree("1-b").await.unwrap();
        drop(cancelled);
        for _ in 0..100 {
            if std::fs::read_dir(workspace.worktrees_folder())
                .unwrap()
                .next()
                .is_none()
            {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        panic!("the worktrees stayed");
    }
}
