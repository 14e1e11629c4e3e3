//! Confined processes end with whoever holds them: a run cancelled, a
//! timeout, a test that drops a command half-way. bubblewrap's process
//! inside its namespaces waits for the outer one during setup; killed
//! then, that inner one would wait for ever, a process left on the
//! operator's machine for each.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use engine::sandbox::{Reach, RunFolder, Sandbox};

/// The processes whose command line mentions `marker`.
fn processes_with(marker: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|line| String::from_utf8_lossy(&line).contains(marker))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn confined_processes_dropped_at_any_moment_leave_nothing_running() {
    let sandbox = Sandbox::detect("bwrap").expect("bubblewrap confines processes here");
    let root = std::env::temp_dir().join(format!("patchbay-sandbox-drop-{}", std::process::id()));
    let folder = RunFolder::new(&root, "run");
    folder.prepare().await.unwrap();
    let marker = folder.home().display().to_string();
    for attempt in 0..40u64 {
        let mut command = sandbox
            .command(
                &folder,
                &Reach::default(),
                "sleep",
                &["60".to_owned()],
                &BTreeMap::new(),
                folder.path(),
            )
            .unwrap();
        let child = command.piped().spawn().unwrap();
        // From at once to well after bubblewrap's setup.
        tokio::time::sleep(Duration::from_micros(attempt * attempt * 5)).await;
        drop(child);
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut left = processes_with(&marker);
    while !left.is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
        left = processes_with(&marker);
    }
    // Whatever this test finds, it does not leave behind.
    for pid in &left {
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status();
    }
    let _ = std::fs::remove_dir_all(&root);
    assert!(
        left.is_empty(),
        "{} confined processes outlived their dropped commands: {left:?}",
        left.len()
    );
    assert!(!Path::new(&root).exists());
}
