//! Ordering lists by a number, stably, with one sort shared by every caller.
//!
//! Each `sort_by_key` over a new element type is a fresh copy of the
//! standard library's sort (about 3 kB of WebAssembly each, eleven of them
//! in the browser bundle); here only a list of (rank, position) pairs is
//! ever sorted, and each caller adds just the small reordering loop.

/// Sorts `items` by `rank`, keeping the order of items of equal rank.
pub fn by_rank<T>(items: &mut Vec<T>, rank: impl Fn(&T) -> usize) {
    let mut order: Vec<(usize, usize)> = items.iter().map(rank).zip(0..).collect();
    // Positions are unique, so an unstable sort of the pairs is stable for
    // the items.
    order.sort_unstable();
    let mut slots: Vec<Option<T>> = std::mem::take(items).into_iter().map(Some).collect();
    items.extend(
        order
            .into_iter()
            .filter_map(|(_, position)| slots.get_mut(position).and_then(Option::take)),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_are_ordered_by_rank_and_equal_ranks_keep_their_order() {
        let mut items = vec![
            (3, "c"),
            (1, "a"),
            (2, "b1"),
            (0, "z"),
            (2, "b2"),
            (1, "a2"),
        ];
        by_rank(&mut items, |(rank, _)| *rank);
        assert_eq!(
            items,
            [
                (0, "z"),
                (1, "a"),
                (1, "a2"),
                (2, "b1"),
                (2, "b2"),
                (3, "c")
            ]
        );
        let mut empty: Vec<u8> = Vec::new();
        by_rank(&mut empty, |value| usize::from(*value));
        assert!(empty.is_empty());
    }
}
