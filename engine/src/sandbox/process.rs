//! A confined command and the process it starts. bubblewrap runs in a
//! process group of its own, and a child dropped or killed before it has
//! been waited for takes that whole group with it.
//!
//! Why the group: bubblewrap's process inside the new namespaces waits
//! for the outer one to finish setting them up. Killing only the outer one
//! in that moment (tokio's `kill_on_drop`, a run cancelled, a timeout) left
//! the inner one waiting for ever, since `--die-with-parent` is not armed
//! yet and a namespace's first process ignores the signals it is not made
//! to take. A SIGKILL sent to the group from outside the namespace is.
//! Once set up, the program has a session of its own (`--new-session`)
//! and dies with bubblewrap (`--die-with-parent`). In between, the inner
//! one may have left the group for that session before `--die-with-parent`
//! is armed (one dropped command in about a hundred, at random moments):
//! so it is also killed by its own id, found among the outer one's
//! children, and the namespace (its processes included) ends with it.

use std::io;
use std::ops::{Deref, DerefMut};
use std::process::{Output, Stdio};

use rustix::process::{Pid, Signal, kill_process, kill_process_group};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, Command};

/// A command that runs a program confined (`Sandbox::command`).
#[derive(Debug)]
pub struct ConfinedCommand {
    command: Command,
}

impl ConfinedCommand {
    pub(super) fn new(mut command: Command) -> ConfinedCommand {
        command.process_group(0).kill_on_drop(true);
        ConfinedCommand { command }
    }

    /// Its standard input, output and error are pipes to the caller.
    pub fn piped(&mut self) -> &mut ConfinedCommand {
        self.command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        self
    }

    pub fn spawn(&mut self) -> io::Result<ConfinedChild> {
        Ok(ConfinedChild {
            child: self.command.spawn()?,
        })
    }

    /// Runs it to its end with no input, and gives what it printed.
    pub async fn output(&mut self) -> io::Result<Output> {
        self.command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        self.spawn()?.wait_with_output().await
    }
}

/// A confined process. Dropped before it has ended and been waited for, it
/// is killed with everything in its process group.
#[derive(Debug)]
pub struct ConfinedChild {
    child: Child,
}

impl ConfinedChild {
    /// Waits for its end, reading what it prints meanwhile (a full pipe
    /// would stop it).
    pub async fn wait_with_output(&mut self) -> io::Result<Output> {
        let (stdout, stderr, status) = tokio::join!(
            read_all(self.child.stdout.take()),
            read_all(self.child.stderr.take()),
            self.child.wait()
        );
        Ok(Output {
            status: status?,
            stdout: stdout?,
            stderr: stderr?,
        })
    }

    /// Kills it and its group, and waits for its end.
    pub async fn kill(&mut self) -> io::Result<()> {
        self.kill_group();
        self.child.kill().await
    }

    /// Stops it as a well-behaved server is stopped, its input closed
    /// already: it has `grace` to end on its own, then SIGTERM goes to its
    /// group (bubblewrap alone would not pass it on), and after another
    /// `grace`, SIGKILL.
    pub async fn stop(&mut self, grace: std::time::Duration) {
        if tokio::time::timeout(grace, self.child.wait()).await.is_ok() {
            return;
        }
        self.signal_group(Signal::TERM);
        if tokio::time::timeout(grace, self.child.wait()).await.is_ok() {
            return;
        }
        let _ = self.kill().await;
    }

    fn signal_group(&self, signal: Signal) {
        // Only while it has not been waited for: until then its id, which
        // is its group's, cannot have been given to another process.
        let Some(id) = self.child.id() else {
            return;
        };
        if let Some(group) = i32::try_from(id).ok().and_then(Pid::from_raw) {
            // Gone already is fine.
            let _ = kill_process_group(group, signal);
        }
    }

    fn kill_group(&self) {
        // Only while it has not been waited for: until then its id, which
        // is its group's, cannot have been given to another process.
        let Some(id) = self.child.id() else {
            return;
        };
        // Its children first, while it lives: until it has reaped them,
        // their ids cannot be another process's either.
        for inner in children(id) {
            let _ = kill_process(inner, Signal::KILL);
        }
        if let Some(group) = i32::try_from(id).ok().and_then(Pid::from_raw) {
            // Gone already is fine.
            let _ = kill_process_group(group, Signal::KILL);
        }
    }
}

impl Drop for ConfinedChild {
    fn drop(&mut self) {
        self.kill_group();
    }
}

impl Deref for ConfinedChild {
    type Target = Child;

    fn deref(&self) -> &Child {
        &self.child
    }
}

impl DerefMut for ConfinedChild {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.child
    }
}

/// The processes whose parent is `id` (none when /proc cannot say).
/// Every process's `stat` is read: the kernel's own list of a process's
/// children (`/proc/*/task/*/children`) is not built into every kernel.
fn children(id: u32) -> Vec<Pid> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<i32>().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            // "pid (name) state ppid …": the name may hold spaces and
            // parentheses, so the fields are counted from its last one.
            let parent = stat.rsplit_once(')')?.1.split_whitespace().nth(1)?;
            (parent.parse::<u32>().ok()? == id).then(|| Pid::from_raw(pid))?
        })
        .collect()
}

async fn read_all(stream: Option<impl AsyncRead + Unpin>) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    if let Some(mut stream) = stream {
        stream.read_to_end(&mut bytes).await?;
    }
    Ok(bytes)
}
