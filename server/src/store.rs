//! Storage: one `Store` over SQLite (the default, a file) or PostgreSQL,
//! picked once from the database URL. Both run the same queries through
//! sqlx's Any driver (`$n` placeholders, TEXT and BIGINT columns); each has
//! its own migrations under `migrations/`.

mod approvals;
mod attachments;
mod call_decisions;
mod changes;
mod graphs;
mod health;
mod idempotency;
mod listen;
mod run_tokens;
mod runs;
mod thinning;
mod triggers;
mod writer;

pub use writer::MOST_WAITING as MOST_WRITES_WAITING;

pub use approvals::{StoredDecision, TIMED_OUT};
pub use attachments::{NewAttachment, StoredAttachment};
pub use call_decisions::StoredCallDecision;
pub use changes::{
    ChangeOutcome, KEEP_REVISION_EVERY_MILLIS, Keep, NewChange, ROOMS_CHANNEL, StoredChange,
};
pub use graphs::{GraphHeading, LastRun, NewGraph, StoredGraph, StoredRevision};
pub use health::{ANSWER_WITHIN, StoreHealth};
pub use listen::listen;
pub use run_tokens::StoredRunToken;
pub use runs::{ActivationRow, Claimed, Lease, NewRun, StoredActivation, StoredEvent, StoredRun};
pub use triggers::{DueSchedule, ScheduleRow};

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use sqlx::any::{AnyPoolOptions, install_default_drivers};
use sqlx::migrate::Migrator;
use sqlx::{AnyPool, Connection, Executor};

/// The PostgreSQL channel a process notifies with a run's id when it has
/// stored events of it (PRODUCT §8): processes following that run read them.
pub const EVENTS_CHANNEL: &str = "patchbay_events";

static SQLITE_MIGRATIONS: Migrator = sqlx::migrate!("../migrations/sqlite");
static POSTGRES_MIGRATIONS: Migrator = sqlx::migrate!("../migrations/postgres");

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    #[error("migration failed: {0}")]
    Migration(#[from] sqlx::migrate::MigrateError),
    #[error("{0}")]
    Configuration(String),
    /// Another process took the run over (its lease had run out).
    #[error("run {0} is run by another server process now")]
    LeaseLost(String),
}

#[derive(Clone)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
    /// The run record's writes, committed in groups.
    writer: writer::Writer,
}

impl Backend {
    pub fn from_url(url: &str) -> Result<Backend, StoreError> {
        if url.starts_with("sqlite:") {
            Ok(Backend::Sqlite)
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Ok(Backend::Postgres)
        } else {
            Err(StoreError::Configuration(format!(
                "DATABASE_URL must start with sqlite: or postgres://, not \"{}\"",
                url.split(':').next().unwrap_or_default()
            )))
        }
    }
}

/// The file path of a SQLite URL, if it names a file.
fn sqlite_file(url: &str) -> Option<&str> {
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next().unwrap_or_default();
    (!path.is_empty() && !path.starts_with(":memory:")).then_some(path)
}

/// Adds `mode=rwc` (create the file) unless the URL chooses a mode itself.
fn sqlite_url_creating_file(url: &str) -> String {
    if url.contains("mode=") {
        url.to_owned()
    } else if url.contains('?') {
        format!("{url}&mode=rwc")
    } else {
        format!("{url}?mode=rwc")
    }
}

impl Store {
    /// Connects and applies the migrations. A SQLite file and its folder are
    /// created on first start, in WAL mode.
    pub async fn connect(url: &str) -> Result<Store, StoreError> {
        install_default_drivers();
        let backend = Backend::from_url(url)?;
        let url = match backend {
            Backend::Sqlite => {
                if let Some(parent) = sqlite_file(url).and_then(|file| Path::new(file).parent())
                    && !parent.as_os_str().is_empty()
                {
                    std::fs::create_dir_all(parent).map_err(|error| {
                        StoreError::Configuration(format!(
                            "cannot create the database folder {}: {error}",
                            parent.display()
                        ))
                    })?;
                }
                let url = sqlite_url_creating_file(url);
                // WAL is a property of the file; switching needs a lock the
                // pool's busy timeout cannot wait for, so do it once, alone.
                let mut connection = sqlx::AnyConnection::connect(&url).await?;
                connection.execute("PRAGMA journal_mode = WAL").await?;
                connection.close().await?;
                url
            }
            Backend::Postgres => url.to_owned(),
        };
        let pool = AnyPoolOptions::new()
            .max_connections(match backend {
                Backend::Sqlite => 8,
                Backend::Postgres => 16,
            })
            .after_connect(|connection, _| {
                Box::pin(async move {
                    if connection.backend_name() == "SQLite" {
                        connection.execute("PRAGMA synchronous = NORMAL").await?;
                        connection.execute("PRAGMA foreign_keys = ON").await?;
                        connection.execute("PRAGMA busy_timeout = 10000").await?;
                    } else {
                        // A process frozen in the middle of a commit would
                        // hold its runs' rows locked for as long as it is
                        // frozen, and another process's claim skips locked
                        // rows: its runs would never be taken over. The
                        // database ends such a transaction instead; a
                        // process's own transactions never wait for it.
                        connection
                            .execute("SET idle_in_transaction_session_timeout = '5s'")
                            .await?;
                    }
                    Ok(())
                })
            })
            .connect(&url)
            .await?;
        match backend {
            Backend::Sqlite => SQLITE_MIGRATIONS.run(&pool).await?,
            Backend::Postgres => POSTGRES_MIGRATIONS.run(&pool).await?,
        }
        let writer = writer::Writer::start(pool.clone(), backend, url);
        Ok(Store {
            pool,
            backend,
            writer,
        })
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The most of the run record's writes that waited for the writer at
    /// once since this was last asked.
    pub fn peak_write_backlog(&self) -> usize {
        self.writer.peak_backlog()
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// Unix milliseconds, the time unit of every stored timestamp.
pub fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_urls_name_their_file() {
        assert_eq!(
            sqlite_file("sqlite://data/patchbay.db"),
            Some("data/patchbay.db")
        );
        assert_eq!(sqlite_file("sqlite:data/x.db?mode=rwc"), Some("data/x.db"));
        assert_eq!(sqlite_file("sqlite::memory:"), None);
        assert_eq!(
            sqlite_url_creating_file("sqlite://data/patchbay.db"),
            "sqlite://data/patchbay.db?mode=rwc"
        );
        assert_eq!(
            sqlite_url_creating_file("sqlite://x.db?mode=ro"),
            "sqlite://x.db?mode=ro"
        );
    }

    #[test]
    fn the_backend_comes_from_the_url() {
        assert_eq!(Backend::from_url("sqlite://x.db").unwrap(), Backend::Sqlite);
        assert_eq!(
            Backend::from_url("postgres://u@h/db").unwrap(),
            Backend::Postgres
        );
        assert!(Backend::from_url("mysql://h/db").is_err());
    }
}
