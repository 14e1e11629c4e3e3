//! Which revisions a graph's history keeps (PRODUCT §6). Every autosave is
//! a revision, and a day of editing a large graph saved every second would
//! keep gigabytes (a 1000-module document is about 0.5 MB), so the history
//! thins out with age: every revision of the last two minutes, then the
//! last of each minute for an hour, of each ten minutes for a day, of each
//! hour for thirty days, and of each day after. The first revision, the
//! current one and every revision a run ran are always kept.

use std::collections::{HashMap, HashSet};

const MINUTE: i64 = 60_000;
const HOUR: i64 = 60 * MINUTE;
const DAY: i64 = 24 * HOUR;

/// How wide the buckets are for a revision this old (ms); each keeps its
/// newest revision. `None`: too young to thin. Each width divides the
/// next, so a revision kept in a coarser bucket was kept in the finer one.
fn bucket_width(age: i64) -> Option<i64> {
    match age {
        age if age < 2 * MINUTE => None,
        age if age < HOUR => Some(MINUTE),
        age if age < DAY => Some(10 * MINUTE),
        age if age < 30 * DAY => Some(HOUR),
        _ => Some(DAY),
    }
}

/// The revisions to drop from `revisions` (number, saved at), given those
/// runs ran (`ran`), at `now`.
pub fn dropped(revisions: &[(i64, i64)], ran: &HashSet<i64>, now: i64) -> Vec<i64> {
    let (Some(first), Some(current)) = (
        revisions.iter().map(|(revision, _)| *revision).min(),
        revisions.iter().map(|(revision, _)| *revision).max(),
    ) else {
        return Vec::new();
    };
    // The newest revision of each bucket, by (width, bucket).
    let mut newest: HashMap<(i64, i64), i64> = HashMap::new();
    for &(revision, saved_at) in revisions {
        if let Some(width) = bucket_width(now.saturating_sub(saved_at)) {
            let slot = newest
                .entry((width, saved_at.div_euclid(width)))
                .or_insert(revision);
            *slot = (*slot).max(revision);
        }
    }
    revisions
        .iter()
        .filter(|&&(revision, saved_at)| {
            let Some(width) = bucket_width(now.saturating_sub(saved_at)) else {
                return false;
            };
            revision != first
                && revision != current
                && !ran.contains(&revision)
                && newest.get(&(width, saved_at.div_euclid(width))) != Some(&revision)
        })
        .map(|(revision, _)| *revision)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A working day of autosaves, one every 700 ms for eight hours, from
    /// `start`: (revision, saved at).
    fn a_day_of_saves(start: i64) -> Vec<(i64, i64)> {
        (0..(8 * HOUR / 700))
            .map(|index| (index + 1, start + index * 700))
            .collect()
    }

    /// What is kept when the history is thinned after every save.
    fn kept_after(saves: &[(i64, i64)], ran: &HashSet<i64>, at: i64) -> Vec<(i64, i64)> {
        let mut kept: Vec<(i64, i64)> = Vec::new();
        for &save in saves {
            kept.push(save);
            // As the server does: after each save (every 20th here, to be quick).
            if save.0 % 20 == 0 {
                let gone: HashSet<i64> = dropped(&kept, ran, save.1).into_iter().collect();
                kept.retain(|(revision, _)| !gone.contains(revision));
            }
        }
        let gone: HashSet<i64> = dropped(&kept, ran, at).into_iter().collect();
        kept.retain(|(revision, _)| !gone.contains(revision));
        kept
    }

    #[test]
    fn a_day_of_autosaves_keeps_a_few_hundred_revisions_and_a_week_later_fewer() {
        let start = 10 * DAY;
        let saves = a_day_of_saves(start);
        assert_eq!(saves.len(), 41_142);
        let end = start + 8 * HOUR;
        let ran = HashSet::from([1_000, 30_000]);
        let kept = kept_after(&saves, &ran, end);
        let numbers: Vec<i64> = kept.iter().map(|(revision, _)| *revision).collect();
        // The first, the last, the runs', all of the last two minutes.
        for wanted in [1, 41_142, 1_000, 30_000, 41_142 - 150] {
            assert!(numbers.contains(&wanted), "{wanted}");
        }
        // 171 of the last two minutes, 58 minutes, 45 ten-minute spans, and
        // the first and the runs' revisions.
        assert!((270..=285).contains(&kept.len()), "{}", kept.len());
        // A week later: one an hour, and the first, last and runs'.
        let week_later = kept_after(&kept, &ran, end + 7 * DAY);
        assert!((9..=13).contains(&week_later.len()), "{}", week_later.len());
    }

    #[test]
    fn nothing_younger_than_two_minutes_goes() {
        let saves: Vec<(i64, i64)> = (1..=100)
            .map(|revision| (revision, revision * 1000))
            .collect();
        assert!(dropped(&saves, &HashSet::new(), 101_000).is_empty());
        // Three minutes on, the first minute's go but for the first and its last.
        let gone = dropped(&saves, &HashSet::new(), 101_000 + MINUTE);
        assert!(!gone.contains(&1) && !gone.contains(&59) && gone.contains(&30));
        assert!(!gone.contains(&100));
    }
}
