//! `GET /api/health`: whether this process can serve, for load balancers,
//! probes and scripts: `200` with `"status": "ok"` when its database
//! answers and has every migration this build carries, else `503` with
//! `"status": "unavailable"` and what is wrong, in words that name no
//! address or credential.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Health {
    pub status: HealthStatus,
    /// Whether the database answered.
    pub database: DatabaseHealth,
    pub migrations: MigrationsHealth,
    /// What is wrong, when something is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum HealthStatus {
    Ok,
    Unavailable,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum DatabaseHealth {
    Ok,
    NotAnswering,
}

/// The migrations of this build the database has applied, of how many.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MigrationsHealth {
    pub applied: usize,
    pub expected: usize,
}

impl Health {
    /// The answer for a database that answered (or not) with `applied` of
    /// `expected` migrations.
    pub fn of(answered: bool, applied: usize, expected: usize) -> Health {
        let problem = if !answered {
            Some("the database does not answer (the server's log says why)".to_owned())
        } else if applied < expected {
            Some(format!(
                "the database has {applied} of this build's {expected} migrations: it may have been restored from before them (the server applies them when it starts)"
            ))
        } else {
            None
        };
        Health {
            status: if problem.is_none() {
                HealthStatus::Ok
            } else {
                HealthStatus::Unavailable
            },
            database: if answered {
                DatabaseHealth::Ok
            } else {
                DatabaseHealth::NotAnswering
            },
            migrations: MigrationsHealth { applied, expected },
            problem,
        }
    }

    pub fn is_ok(&self) -> bool {
        self.status == HealthStatus::Ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_healthy_answer_still_begins_with_status_ok() {
        let written = serde_json::to_string(&Health::of(true, 12, 12)).unwrap_or_default();
        assert!(written.starts_with(r#"{"status":"ok""#), "{written}");
        assert_eq!(
            written,
            r#"{"status":"ok","database":"ok","migrations":{"applied":12,"expected":12}}"#
        );
    }

    #[test]
    fn a_database_that_does_not_answer_or_lacks_migrations_is_unavailable() {
        let down = Health::of(false, 0, 12);
        assert_eq!(down.status, HealthStatus::Unavailable);
        assert_eq!(down.database, DatabaseHealth::NotAnswering);
        let behind = Health::of(true, 11, 12);
        assert!(!behind.is_ok());
        assert!(
            behind
                .problem
                .as_deref()
                .is_some_and(|problem| problem.contains("11 of this build's 12")),
            "{behind:?}"
        );
    }
}
