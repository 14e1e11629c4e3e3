//! What runs leave on the disk goes once their retention has passed: each
//! run's folder (workspaces, copies of allowed folders, its HOME and
//! temporary files) is removed that long after the run ended, never while
//! it is queued or running. The run record keeps the diff and the changed
//! files. Folders of runs this database does not know (another server's,
//! a headless run's) are left alone.

use std::time::Duration;

use engine::now_millis;

use crate::capability::is_run_id;
use crate::state::AppState;

/// How long the log keeps a change (a browser away longer gets the
/// document when it comes back).
const CHANGES_KEPT_MILLIS: i64 = 24 * 60 * 60 * 1000;

/// How often the janitor looks.
const INTERVAL: Duration = Duration::from_secs(10 * 60);

/// Removes the folders of runs that ended more than the retention ago;
/// says how many went.
pub async fn sweep(state: &AppState) -> usize {
    let root = state.settings.workspace_root.clone();
    let retention =
        i64::try_from(state.settings.workspace_retention.as_millis()).unwrap_or(i64::MAX);
    let mut entries = match tokio::fs::read_dir(&root).await {
        Ok(entries) => entries,
        // Nothing has run yet.
        Err(_) => return 0,
    };
    let mut removed = 0;
    while let Ok(Some(entry)) = entries.next_entry().await {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !is_run_id(&name) {
            continue;
        }
        let ended_at = match state.store.run(&name).await {
            Ok(Some(run)) => run.ended_at(),
            Ok(None) => continue,
            Err(error) => {
                tracing::warn!(%error, run = %name, "cannot tell whether a run's folder may go");
                continue;
            }
        };
        let Some(ended_at) = ended_at else { continue };
        if now_millis().saturating_sub(ended_at) < retention {
            continue;
        }
        match tokio::fs::remove_dir_all(entry.path()).await {
            Ok(()) => removed += 1,
            // Another server on the same database got there first.
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => {
                tracing::warn!(%error, folder = %entry.path().display(), "a run's folder could not be removed");
            }
        }
    }
    if removed > 0 {
        tracing::info!(removed, "removed the folders of runs past their retention");
    }
    removed
}

/// Sweeps now and every few minutes, and lets the run limiter forget
/// clients that have been quiet.
pub fn spawn(state: AppState) {
    tokio::spawn(async move {
        loop {
            sweep(&state).await;
            state.run_rate.forget_idle();
            match state.store.prune_changes(CHANGES_KEPT_MILLIS).await {
                Ok(0) => {}
                Ok(pruned) => {
                    tracing::info!(pruned, "dropped changes older than a day from the log")
                }
                Err(error) => {
                    tracing::warn!(%error, "old changes could not be dropped from the log")
                }
            }
            tokio::time::sleep(INTERVAL).await;
        }
    });
}
