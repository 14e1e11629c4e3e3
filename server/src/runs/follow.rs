//! Following runs that another process runs (PRODUCT §8). On PostgreSQL a
//! process that stores events of a run notifies every process with the
//! run's id (`LISTEN`/`NOTIFY`); here a listener wakes the SSE streams of
//! this process that follow it, which read what is new from the log. A
//! stream also looks every second, so a notification lost while the
//! listener reconnects only delays it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::store::EVENTS_CHANNEL;

/// Streams following runs not in progress here, by run id.
#[derive(Clone, Default)]
pub struct Followers {
    runs: Arc<Mutex<HashMap<String, watch::Sender<u64>>>>,
}

impl Followers {
    /// Wakes when the run has new events.
    pub fn follow(&self, run_id: &str) -> watch::Receiver<u64> {
        match self.runs.lock() {
            Ok(mut runs) => {
                // Runs nobody follows any more (on SQLite no notification
                // comes to clear them): the map holds only live streams.
                runs.retain(|_, sender| sender.receiver_count() > 0);
                runs.entry(run_id.to_owned())
                    .or_insert_with(|| watch::channel(0).0)
                    .subscribe()
            }
            // Without the map, the stream still looks every second.
            Err(_) => watch::channel(0).1,
        }
    }

    /// The run has new events in the log.
    pub fn wake(&self, run_id: &str) {
        if let Ok(mut runs) = self.runs.lock()
            && let Some(sender) = runs.get(run_id)
        {
            if sender.receiver_count() == 0 {
                runs.remove(run_id);
            } else {
                sender.send_modify(|count| *count += 1);
            }
        }
    }
}

/// Listens for the events of every process on PostgreSQL until
/// `shutdown`, reconnecting when the connection drops.
pub fn listen(database_url: String, followers: Followers, shutdown: CancellationToken) {
    crate::store::listen(
        database_url,
        EVENTS_CHANNEL,
        move |run_id| followers.wake(run_id),
        shutdown,
    );
}
