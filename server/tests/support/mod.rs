//! Shared test setup: stores on SQLite (always) and PostgreSQL (when
//! `PATCHBAY_TEST_POSTGRES_URL` names one; scripts/test starts it and sets
//! `PATCHBAY_REQUIRE_POSTGRES=1` so a missing server fails instead of skipping).

#![allow(dead_code, clippy::expect_used, clippy::unwrap_used)]

use std::path::PathBuf;

use graph::Limits;
use server::settings::Settings;
use server::state::AppState;
use server::store::Store;

pub struct TestDatabase {
    pub name: &'static str,
    pub url: String,
    /// Keeps a SQLite file's folder alive for the test.
    _folder: Option<tempfile::TempDir>,
}

/// A fresh PostgreSQL database for one test, so tests running side by side
/// never see each other's runs (scripts/test drops them all beforehand).
async fn fresh_postgres(admin_url: &str) -> String {
    use sqlx::Connection;
    let name = format!("patchbay_test_{:016x}", rand::random::<u64>());
    let mut connection = sqlx::PgConnection::connect(admin_url)
        .await
        .unwrap_or_else(|error| panic!("PostgreSQL at PATCHBAY_TEST_POSTGRES_URL: {error}"));
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut connection)
        .await
        .unwrap_or_else(|error| panic!("cannot create a test database: {error}"));
    let (base, _) = admin_url
        .rsplit_once('/')
        .expect("a database URL ends in /name");
    format!("{base}/{name}")
}

pub async fn databases() -> Vec<TestDatabase> {
    let folder = tempfile::tempdir().expect("temporary folder");
    let mut databases = vec![TestDatabase {
        name: "sqlite",
        url: format!("sqlite://{}/patchbay.db", folder.path().display()),
        _folder: Some(folder),
    }];
    match std::env::var("PATCHBAY_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => databases.push(TestDatabase {
            name: "postgres",
            url: fresh_postgres(&url).await,
            _folder: None,
        }),
        _ => {
            assert!(
                std::env::var("PATCHBAY_REQUIRE_POSTGRES").is_err(),
                "PATCHBAY_REQUIRE_POSTGRES is set but PATCHBAY_TEST_POSTGRES_URL is not"
            );
            eprintln!(
                "PostgreSQL tests skipped: PATCHBAY_TEST_POSTGRES_URL is not set (scripts/test sets it)"
            );
        }
    }
    databases
}

pub async fn store(database: &TestDatabase) -> Store {
    Store::connect(&database.url)
        .await
        .unwrap_or_else(|error| panic!("{}: {error}", database.name))
}

pub fn settings(database: &TestDatabase, limits: Limits) -> Settings {
    let mut settings = Settings::for_database(&database.url);
    settings.site_root = PathBuf::from("target/site-for-tests");
    settings.limits = limits;
    // Instant simulated replies unless a test slows them down.
    settings.sim_latency_ms = Some(0);
    settings
}

pub async fn state(database: &TestDatabase, limits: Limits) -> AppState {
    server::build_state(settings(database, limits))
        .await
        .unwrap_or_else(|error| panic!("{}: {error}", database.name))
}
