//! What copies of a graph are called, so that a list of graphs tells them
//! from their original.

/// A fork's name: "Tide tables" forked is "Tide tables (fork)".
pub fn fork_name(name: &str) -> String {
    format!("{name} (fork)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fork_says_it_is_one() {
        assert_eq!(fork_name("Tide tables"), "Tide tables (fork)");
    }
}
