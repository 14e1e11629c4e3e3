//! What the optional real-agent tests share: finding an agent scripts/test
//! installed from npm, skipping (saying why) when it is not there, and the
//! install folder its sandbox may read.

use std::path::{Path, PathBuf};

/// The agent's script: `variable` names it, or it is `installed` under
/// HOME; or why there is none (`package` is what scripts/test installs).
pub fn script(variable: &str, installed: &str, package: &str) -> Result<PathBuf, String> {
    let script = match std::env::var(variable) {
        Ok(path) if !path.is_empty() => PathBuf::from(path),
        _ => {
            let home = std::env::var("HOME").map_err(|_| "HOME is not set".to_owned())?;
            PathBuf::from(home).join(installed)
        }
    };
    if !script.exists() {
        return Err(format!(
            "{} is not installed (scripts/test installs {package}; {variable} names another copy)",
            script.display()
        ));
    }
    match std::process::Command::new("node").arg("--version").output() {
        Ok(output) if output.status.success() => Ok(script),
        _ => Err("node is not on PATH".to_owned()),
    }
}

/// The script, or `None` after saying why the test skips; never a silent
/// skip, and none at all under `PATCHBAY_REQUIRE_REAL_AGENT`.
pub fn or_skip(found: Result<PathBuf, String>) -> Option<PathBuf> {
    match found {
        Ok(script) => Some(script),
        Err(reason) => {
            assert!(
                std::env::var("PATCHBAY_REQUIRE_REAL_AGENT").is_err(),
                "the real agent is required here: {reason}"
            );
            eprintln!("skipped: no real ACP agent: {reason}");
            None
        }
    }
}

/// The `node_modules` folder holding the agent's package and what it
/// needs: readable in its sandbox.
pub fn package_folder(script: &Path) -> PathBuf {
    script
        .ancestors()
        .find(|folder| {
            folder
                .file_name()
                .is_some_and(|name| name == "node_modules")
        })
        .or_else(|| script.parent().and_then(Path::parent))
        .unwrap_or(script)
        .to_path_buf()
}
