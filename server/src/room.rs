//! Rooms (PRODUCT §3.16): one per graph that someone has open in this
//! process, holding who is here and where this process's streams of that
//! graph hear news: a change stored (by this process, or announced by
//! another on PostgreSQL), someone come, changed or gone. A room is made by
//! the first stream of its graph and goes with the last.
//!
//! A stream's connection is proved without state any process must share:
//! its id is the start of the SHA-256 of a secret only that stream was
//! told, so a presence update or a change posted to any process names a
//! connection only its browser can name.

pub mod apply;
pub mod people;

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};
use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;
use wire::room::{Change, Person};

use crate::error::ApiError;
use crate::store::ROOMS_CHANNEL;
use people::People;

/// News a slow stream may fall behind before it reads the log again.
const BUFFER: usize = 256;
/// Changes and presence updates one connection may send a second, and at
/// once: a drag sends one a frame at most, throttled by the browser.
const PER_SECOND: u32 = 40;
const BURST: u32 = 80;

/// What a room's streams hear.
#[derive(Clone, Debug)]
pub enum News {
    Person(Person),
    Left(String),
    /// Someone started this run of the graph.
    Run(String),
    /// The log has a change up to `revision`; `change` is it when it was
    /// stored here (others read it from the log).
    Changed {
        revision: i64,
        change: Option<Arc<Change>>,
    },
}

pub struct Room {
    pub news: broadcast::Sender<Arc<News>>,
    pub people: Mutex<People>,
}

/// The rooms of this process.
#[derive(Clone)]
pub struct Rooms {
    rooms: Arc<Mutex<HashMap<String, Arc<Room>>>>,
    /// This process, so that it skips its own announcements.
    pub process: String,
    changes: Arc<DefaultKeyedRateLimiter<String>>,
    presence: Arc<DefaultKeyedRateLimiter<String>>,
}

impl Default for Rooms {
    fn default() -> Rooms {
        let quota = Quota::per_second(NonZeroU32::new(PER_SECOND).unwrap_or(NonZeroU32::MIN))
            .allow_burst(NonZeroU32::new(BURST).unwrap_or(NonZeroU32::MIN));
        let process: [u8; 8] = rand::random();
        Rooms {
            rooms: Arc::default(),
            process: process.iter().map(|byte| format!("{byte:02x}")).collect(),
            changes: Arc::new(DefaultKeyedRateLimiter::keyed(quota)),
            presence: Arc::new(DefaultKeyedRateLimiter::keyed(quota)),
        }
    }
}

/// What PostgreSQL carries between processes (`ROOMS_CHANNEL`).
#[derive(Debug, Serialize, Deserialize)]
pub struct Announcement {
    pub process: String,
    pub graph: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub person: Option<Person>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
}

impl Rooms {
    /// The room of a graph, made if nobody here has it open yet.
    pub fn enter(&self, graph_id: &str) -> Arc<Room> {
        let Ok(mut rooms) = self.rooms.lock() else {
            return Arc::new(new_room());
        };
        rooms.retain(|_, room| room.news.receiver_count() > 0);
        rooms
            .entry(graph_id.to_owned())
            .or_insert_with(|| Arc::new(new_room()))
            .clone()
    }

    /// The streams following a room on this process.
    pub fn connections(&self) -> usize {
        self.rooms.lock().map_or(0, |rooms| {
            rooms.values().map(|room| room.news.receiver_count()).sum()
        })
    }

    /// The room of a graph, if someone here has it open.
    pub fn room(&self, graph_id: &str) -> Option<Arc<Room>> {
        self.rooms
            .lock()
            .ok()
            .and_then(|rooms| rooms.get(graph_id).cloned())
    }

    /// Tells this process's streams of the graph.
    pub fn tell(&self, graph_id: &str, news: News) {
        if let Some(room) = self.room(graph_id) {
            if let (News::Person(person), Ok(mut people)) = (&news, room.people.lock()) {
                people.heard(person.clone(), engine::now_millis());
            }
            if let (News::Left(connection), Ok(mut people)) = (&news, room.people.lock()) {
                people.leave(connection);
            }
            let _ = room.news.send(Arc::new(news));
        }
    }

    /// Counts a change from `connection`.
    pub fn check_change_rate(&self, connection: &str) -> Result<(), ApiError> {
        check(&self.changes, connection)
    }

    /// Counts a presence update from `connection`.
    pub fn check_presence_rate(&self, connection: &str) -> Result<(), ApiError> {
        check(&self.presence, connection)
    }

    /// Forgets what is no longer needed: connections quiet long enough,
    /// people not heard of (their stream's process died).
    pub fn forget_idle(&self) {
        self.changes.retain_recent();
        self.presence.retain_recent();
        let rooms: Vec<(String, Arc<Room>)> = self
            .rooms
            .lock()
            .map(|rooms| {
                rooms
                    .iter()
                    .map(|(id, room)| (id.clone(), room.clone()))
                    .collect()
            })
            .unwrap_or_default();
        for (graph_id, room) in rooms {
            let silent = room
                .people
                .lock()
                .map(|mut people| people.forget_silent(engine::now_millis()))
                .unwrap_or_default();
            for connection in silent {
                self.tell(&graph_id, News::Left(connection));
            }
        }
    }

    /// An announcement from another process.
    pub fn heard(&self, payload: &str) {
        let Ok(announcement) = serde_json::from_str::<Announcement>(payload) else {
            tracing::warn!(payload, "a room announcement this process cannot read");
            return;
        };
        if announcement.process == self.process {
            return;
        }
        if let Some(revision) = announcement.revision {
            self.tell(
                &announcement.graph,
                News::Changed {
                    revision,
                    change: None,
                },
            );
        }
        if let Some(person) = announcement.person {
            self.tell(&announcement.graph, News::Person(person));
        }
        if let Some(connection) = announcement.left {
            self.tell(&announcement.graph, News::Left(connection));
        }
        if let Some(run) = announcement.run {
            self.tell(&announcement.graph, News::Run(run));
        }
    }

    /// The announcement of news of this process, for the others.
    pub fn announcement(&self, graph_id: &str) -> Announcement {
        Announcement {
            process: self.process.clone(),
            graph: graph_id.to_owned(),
            revision: None,
            person: None,
            left: None,
            run: None,
        }
    }
}

fn new_room() -> Room {
    Room {
        news: broadcast::channel(BUFFER).0,
        people: Mutex::new(People::default()),
    }
}

fn check(limiter: &DefaultKeyedRateLimiter<String>, connection: &str) -> Result<(), ApiError> {
    limiter
        .check_key(&connection.to_owned())
        .map_err(|not_until| ApiError::RoomRateLimited {
            retry_after_millis: u64::try_from(
                not_until
                    .wait_time_from(DefaultClock::default().now())
                    .as_millis(),
            )
            .unwrap_or(u64::MAX)
            .max(1),
        })
}

/// A new stream's connection id and the secret that proves it.
pub fn new_connection() -> (String, String) {
    let secret = crate::capability::new_edit_token();
    (connection_of(&secret), secret)
}

fn connection_of(secret: &str) -> String {
    let mut hash = crate::capability::hash_token(secret);
    hash.truncate(24);
    format!("c_{hash}")
}

/// Whether `secret` proves `connection`.
pub fn proves(connection: &str, secret: &str) -> bool {
    // A hash of the secret is compared, so timing says nothing of it.
    !secret.is_empty() && connection_of(secret) == connection
}

/// Forgets, every heartbeat, people not heard of, until `shutdown`.
pub fn spawn_forgetting(rooms: Rooms, shutdown: CancellationToken) {
    tokio::spawn(async move {
        let every =
            Duration::from_millis(u64::try_from(people::HEARTBEAT_MILLIS).unwrap_or(15_000));
        loop {
            tokio::select! {
                () = tokio::time::sleep(every) => rooms.forget_idle(),
                () = shutdown.cancelled() => return,
            }
        }
    });
}

/// Listens for other processes' room news on PostgreSQL until `shutdown`,
/// reconnecting when the connection drops.
pub fn listen(database_url: String, rooms: Rooms, shutdown: CancellationToken) {
    crate::store::listen(
        database_url,
        ROOMS_CHANNEL,
        move |payload| rooms.heard(payload),
        shutdown,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_its_secret_proves_a_connection() {
        let (connection, secret) = new_connection();
        let (other, other_secret) = new_connection();
        assert!(proves(&connection, &secret));
        assert!(!proves(&connection, &other_secret));
        assert!(!proves(&other, &secret));
        assert!(!proves(&connection, ""));
        assert!(!proves(&connection, &connection));
    }

    #[test]
    fn a_connection_sending_too_fast_is_told_to_wait_and_others_are_not() {
        let rooms = Rooms::default();
        let sent = (0..BURST + 5)
            .filter(|_| rooms.check_change_rate("c_fast").is_ok())
            .count();
        assert!(sent <= BURST as usize + 1, "{sent}");
        assert!(matches!(
            rooms.check_change_rate("c_fast"),
            Err(ApiError::RoomRateLimited { .. })
        ));
        assert!(rooms.check_change_rate("c_other").is_ok());
        assert!(rooms.check_presence_rate("c_fast").is_ok());
    }
}
