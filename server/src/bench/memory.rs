//! The process's memory as Linux counts it, for the benchmark's figures:
//! resident now, and the most resident since the peak was last reset.

/// Resets the peak to what is resident now (Linux 4.0+; elsewhere the peak
/// stays the process's own).
pub fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// (resident now, peak) in MiB, when the system says.
pub fn resident_mib() -> Option<(f64, f64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| -> Option<f64> {
        let line = status.lines().find(|line| line.starts_with(name))?;
        let kib: f64 = line
            .trim_start_matches(name)
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()?;
        Some(kib / 1024.0)
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}
