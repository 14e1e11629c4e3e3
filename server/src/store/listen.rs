//! Hearing what other processes announce on PostgreSQL (`LISTEN`): a run's
//! new events (`runs/follow.rs`), a room's news (`room.rs`). One connection
//! per channel, made again a second after it drops, until the server stops.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

/// Calls `heard` with each notification's payload on `channel` until
/// `shutdown`.
pub fn listen(
    database_url: String,
    channel: &'static str,
    heard: impl Fn(&str) + Send + Sync + 'static,
    shutdown: CancellationToken,
) {
    tokio::spawn(async move {
        loop {
            let listening = async {
                let mut listener = sqlx::postgres::PgListener::connect(&database_url).await?;
                listener.listen(channel).await?;
                loop {
                    let notification = listener.recv().await?;
                    heard(notification.payload());
                }
                #[allow(unreachable_code)]
                Ok::<(), sqlx::Error>(())
            };
            tokio::select! {
                result = listening => {
                    if let Err(error) = result {
                        tracing::warn!(%error, channel, "listening for other processes failed; trying again");
                    }
                }
                () = shutdown.cancelled() => return,
            }
            tokio::select! {
                () = tokio::time::sleep(Duration::from_secs(1)) => {}
                () = shutdown.cancelled() => return,
            }
        }
    });
}
