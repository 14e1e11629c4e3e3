//! Editing together over HTTP (PRODUCT §3.16, §6): a graph's room stream
//! (`GET /api/graphs/{id}/room`, SSE, for anyone with the view link), where
//! its person is (`POST …/presence`, the same; with the edit token they show
//! as an editor) and changes (`POST …/changes`, the edit token only), which
//! `room/apply.rs` applies. A save through the API (`PUT`) is a change too,
//! so open editors see it.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use tokio::sync::{broadcast, mpsc};
use tokio_stream::wrappers::ReceiverStream;
use wire::room::{
    Change, ChangeRequest, DocumentNow, Hello, Left, PeopleHere, PersonNow, PresenceUpdate, Role,
    RoomEvent,
};

use crate::capability::{bearer_token, is_graph_id, require_edit_token, token_matches};
use crate::error::ApiError;
use crate::room::apply::{Author, Base, apply_change};
use crate::room::{News, Room, proves};
use crate::state::AppState;
use crate::store::{Keep, StoredChange, StoredGraph};

/// Changes a stream sends from the log at once; a browser further behind
/// gets the document instead.
const MOST_CHANGES_CAUGHT_UP: i64 = 1000;
/// How often a stream looks at the log without being told (a notification
/// lost while a listener reconnects only delays a change this long).
const LOOK_EVERY: Duration = Duration::from_secs(5);

pub type RoomStream = ReceiverStream<Result<Event, Infallible>>;

#[derive(Debug, Deserialize)]
pub struct StreamQuery {
    /// The revision the browser has: the stream starts with what came
    /// after it.
    since: Option<i64>,
}

pub async fn stored(state: &AppState, id: &str) -> Result<StoredGraph, ApiError> {
    if !is_graph_id(id) {
        return Err(ApiError::GraphNotFound);
    }
    state.store.graph(id).await?.ok_or(ApiError::GraphNotFound)
}

fn event(news: &RoomEvent) -> Event {
    let data = serde_json::to_string(news).unwrap_or_default();
    Event::default().event(news.name()).data(data)
}

/// `GET /api/graphs/{id}/room`: this browser's connection, who is here,
/// the changes since `since`, then everything as it happens.
pub async fn stream(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(query): Query<StreamQuery>,
) -> Result<Sse<axum::response::sse::KeepAliveStream<RoomStream>>, ApiError> {
    // Entered before the graph is read: a change stored in between is
    // both read and heard, and the revisions drop the second copy.
    let room = state.rooms.enter(&id);
    let graph = stored(&state, &id).await?;
    let (connection, secret) = crate::room::new_connection();
    let (sender, receiver) = mpsc::channel(64);
    let news = room.news.subscribe();
    let people = room
        .people
        .lock()
        .map(|people| people.list())
        .unwrap_or_default();
    let opening = [
        RoomEvent::Hello(Hello {
            connection: connection.clone(),
            secret,
            revision: graph.revision,
        }),
        RoomEvent::People(PeopleHere { people }),
    ];
    tokio::spawn(async move {
        let mut follower = Follower {
            state: state.clone(),
            graph_id: id.clone(),
            sender,
            last: query.since.unwrap_or(graph.revision),
        };
        for news in &opening {
            if follower.send(news).await.is_err() {
                return;
            }
        }
        if follower.catch_up().await.is_ok() {
            follower.follow(news).await;
        }
        leave(&state, &id, &room, &connection).await;
    });
    Ok(Sse::new(ReceiverStream::new(receiver))
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}

/// Someone's stream closed: they are no longer here, on any process.
async fn leave(state: &AppState, graph_id: &str, room: &Arc<Room>, connection: &str) {
    let was_here = room
        .people
        .lock()
        .map(|mut people| people.leave(connection))
        .unwrap_or(false);
    if was_here {
        state
            .rooms
            .tell(graph_id, News::Left(connection.to_owned()));
        let mut announcement = state.rooms.announcement(graph_id);
        announcement.left = Some(connection.to_owned());
        announce(state, &announcement).await;
    }
}

/// A run of the graph started: everyone who has it open follows it.
pub async fn run_started(state: &AppState, graph_id: &str, run_id: &str) {
    state.rooms.tell(graph_id, News::Run(run_id.to_owned()));
    let mut announcement = state.rooms.announcement(graph_id);
    announcement.run = Some(run_id.to_owned());
    announce(state, &announcement).await;
}

async fn announce(state: &AppState, announcement: &crate::room::Announcement) {
    let Ok(payload) = serde_json::to_string(announcement) else {
        return;
    };
    if let Err(error) = state.store.announce_to_rooms(&payload).await {
        tracing::warn!(%error, "room news could not be announced to other processes");
    }
}

/// One stream: sends each change once, in order, from what it hears or
/// from the log.
struct Follower {
    state: AppState,
    graph_id: String,
    sender: mpsc::Sender<Result<Event, Infallible>>,
    /// The revision the browser has.
    last: i64,
}

/// The browser went away.
struct Gone;

impl Follower {
    async fn send(&self, news: &RoomEvent) -> Result<(), Gone> {
        self.sender.send(Ok(event(news))).await.map_err(|_| Gone)
    }

    async fn follow(&mut self, mut news: broadcast::Receiver<Arc<News>>) {
        let shutdown = self.state.shutdown.clone();
        loop {
            let heard = tokio::select! {
                heard = news.recv() => heard,
                () = tokio::time::sleep(LOOK_EVERY) => {
                    if self.catch_up().await.is_err() { return; }
                    continue;
                }
                () = shutdown.cancelled() => return,
                () = self.sender.closed() => return,
            };
            let sent = match heard {
                Ok(heard) => self.tell(&heard).await,
                // Fell behind: the log has the changes; who is here is sent
                // afresh.
                Err(broadcast::error::RecvError::Lagged(_)) => self.catch_up().await,
                Err(broadcast::error::RecvError::Closed) => return,
            };
            if sent.is_err() {
                return;
            }
        }
    }

    async fn tell(&mut self, news: &News) -> Result<(), Gone> {
        match news {
            News::Person(person) => {
                self.send(&RoomEvent::Person(PersonNow {
                    person: person.clone(),
                }))
                .await
            }
            News::Left(connection) => {
                self.send(&RoomEvent::Left(Left {
                    connection: connection.clone(),
                }))
                .await
            }
            News::Run(_) => self.send(&RoomEvent::Run).await,
            News::Changed { revision, .. } if *revision <= self.last => Ok(()),
            News::Changed {
                revision,
                change: Some(change),
            } if change.previous == self.last => {
                self.send(&RoomEvent::Change(Change::clone(change))).await?;
                self.last = *revision;
                Ok(())
            }
            News::Changed { .. } => self.catch_up().await,
        }
    }

    /// Sends the changes after the browser's revision from the log, or the
    /// document when the log cannot bring them all.
    async fn catch_up(&mut self) -> Result<(), Gone> {
        let Ok(changes) = self
            .state
            .store
            .changes_after(&self.graph_id, self.last, MOST_CHANGES_CAUGHT_UP)
            .await
        else {
            return Ok(());
        };
        let contiguous = changes
            .iter()
            .try_fold(self.last, |last, change| {
                (change.previous == last).then_some(change.revision)
            })
            .is_some();
        let complete =
            i64::try_from(changes.len()).is_ok_and(|count| count < MOST_CHANGES_CAUGHT_UP);
        if contiguous && complete {
            for stored in changes {
                let Some(change) = from_stored(stored) else {
                    return self.send_document().await;
                };
                let revision = change.revision;
                self.send(&RoomEvent::Change(change)).await?;
                self.last = revision;
            }
            return Ok(());
        }
        self.send_document().await
    }

    async fn send_document(&mut self) -> Result<(), Gone> {
        let Ok(Some(graph)) = self.state.store.graph(&self.graph_id).await else {
            return Ok(());
        };
        let Ok(document) = serde_json::from_str(&graph.document) else {
            return Ok(());
        };
        self.send(&RoomEvent::Document(DocumentNow {
            revision: graph.revision,
            document,
        }))
        .await?;
        self.last = graph.revision;
        Ok(())
    }
}

pub fn from_stored(stored: StoredChange) -> Option<Change> {
    Some(Change {
        revision: stored.revision,
        previous: stored.previous,
        author: stored.author,
        author_name: stored.author_name,
        edits: serde_json::from_str(&stored.edits).ok()?,
        replaced: serde_json::from_str(&stored.replaced).ok()?,
    })
}

/// A room request's body, or `room.invalid_request` saying where it is wrong.
fn read_body<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    let mut reader = serde_json::Deserializer::from_slice(body);
    serde_path_to_error::deserialize(&mut reader).map_err(|error| ApiError::RoomRequest {
        path: error.path().to_string(),
        message: error.inner().to_string(),
    })
}

/// `POST /api/graphs/{id}/presence`: where this connection's person is and
/// what they look at. Anyone who can view the graph; with its edit token,
/// they show as an editor.
pub async fn presence(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    let graph = stored(&state, &id).await?;
    let update: PresenceUpdate = read_body(&body)?;
    if !proves(&update.connection, &update.secret) {
        return Err(ApiError::RoomConnectionInvalid);
    }
    let role = match bearer_token(&headers) {
        None => Role::Viewer,
        Some(token) => {
            let hash = state
                .store
                .edit_token_hash(&graph.id)
                .await?
                .ok_or(ApiError::GraphNotFound)?;
            if !token_matches(token, &hash) {
                return Err(ApiError::EditTokenInvalid);
            }
            Role::Editor
        }
    };
    state.rooms.check_presence_rate(&update.connection)?;
    let room = state.rooms.enter(&id);
    let person = room
        .people
        .lock()
        .map_err(|_| ApiError::Internal("a room's people could not be read".to_owned()))?
        .update(&update, role, engine::now_millis());
    state.rooms.tell(&id, News::Person(person.clone()));
    let mut announcement = state.rooms.announcement(&id);
    announcement.person = Some(person);
    announce(&state, &announcement).await;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `POST /api/graphs/{id}/changes`: edits made on the graph at `base`,
/// applied in the order the server takes them (the edit token only).
pub async fn changes(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    require_edit_token(&state.store, &id, &headers, "changing the graph").await?;
    let request: ChangeRequest = read_body(&body)?;
    if !proves(&request.connection, &request.secret) {
        return Err(ApiError::RoomConnectionInvalid);
    }
    state.rooms.check_change_rate(&request.connection)?;
    let author_name = state
        .rooms
        .room(&id)
        .and_then(|room| {
            room.people.lock().ok().and_then(|people| {
                people
                    .list()
                    .into_iter()
                    .find(|person| person.connection == request.connection)
                    .map(|person| person.name)
            })
        })
        .unwrap_or_else(|| "An editor".to_owned());
    let accepted = apply_change(
        &state,
        &id,
        Author {
            connection: &request.connection,
            name: &author_name,
            keep: if request.checkpoint {
                Keep::Always
            } else {
                Keep::Every
            },
        },
        Base::Rebased(request.base),
        &request.edits,
    )
    .await?;
    Ok(Json(accepted).into_response())
}
