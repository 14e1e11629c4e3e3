//! Whether the database answers and the migrations this build carries
//! were applied (`GET /api/health`, PRODUCT §6): what a load balancer
//! asks before sending a process requests.

use std::time::Duration;

use super::{Backend, POSTGRES_MIGRATIONS, SQLITE_MIGRATIONS, Store};

/// How long the database has to answer before it is said not to.
pub const ANSWER_WITHIN: Duration = Duration::from_secs(2);

/// What the database said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreHealth {
    /// `None` when it answered; else why not (for the log, not the
    /// answer: it may name the database's address).
    pub problem: Option<String>,
    /// The migrations of this build found applied.
    pub applied: usize,
    /// The migrations this build carries.
    pub expected: usize,
}

impl StoreHealth {
    pub fn is_ok(&self) -> bool {
        self.problem.is_none() && self.applied == self.expected
    }
}

impl Store {
    /// Asks the database which of this build's migrations it has applied,
    /// within [`ANSWER_WITHIN`].
    pub async fn health(&self) -> StoreHealth {
        let migrator = match self.backend {
            Backend::Sqlite => &SQLITE_MIGRATIONS,
            Backend::Postgres => &POSTGRES_MIGRATIONS,
        };
        let carried: Vec<i64> = migrator.iter().map(|migration| migration.version).collect();
        let asked = sqlx::query_scalar::<_, i64>(
            "SELECT version FROM _sqlx_migrations WHERE success = TRUE",
        )
        .fetch_all(&self.pool);
        let (problem, applied) = match tokio::time::timeout(ANSWER_WITHIN, asked).await {
            Ok(Ok(versions)) => (
                None,
                carried
                    .iter()
                    .filter(|version| versions.contains(version))
                    .count(),
            ),
            Ok(Err(error)) => (Some(error.to_string()), 0),
            Err(_) => (
                Some(format!("no answer within {} s", ANSWER_WITHIN.as_secs())),
                0,
            ),
        };
        StoreHealth {
            problem,
            applied,
            expected: carried.len(),
        }
    }
}
