//! `GET /workspaces/{ws}/stream`: server-sent events of live updates.

use std::convert::Infallible;
use std::time::Duration;

use axum::Extension;
use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures::Stream;
use kandev_core::access::StreamRefusal;
use kandev_core::api::LiveUpdate;
use tokio::sync::broadcast::error::RecvError;

use super::error::HttpResult;
use super::extract::ApiPath;
use super::{ApiRoutes, AppState};
use crate::access::Caller;
use crate::error::ServiceError;

pub fn routes() -> ApiRoutes {
    ApiRoutes::new().get("/api/v1/workspaces/{ws}/stream", stream)
}

/// Live notices of one workspace, as server-sent events; a caller holds at
/// most `STREAMS_PER_CALLER` at once, a replica `STREAMS_PER_REPLICA`.
#[utoipa::path(get, path = "/api/v1/workspaces/{ws}/stream", params(("ws" = String, Path)),
    responses((status = 200, description = "text/event-stream of `task.updated`, `task_pr.updated`, `automation_run.updated`, `session.updated` and `resync`", content_type = "text/event-stream", body = String),
        (status = 429, description = "the caller holds as many live streams as it may", body = kandev_core::api::ApiError),
        (status = 503, description = "this replica holds as many live streams as it may", body = kandev_core::api::ApiError)))]
pub async fn stream(
    State(s): State<AppState>,
    Extension(caller): Extension<Caller>,
    ApiPath(ws): ApiPath<String>,
) -> HttpResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    let who = caller.user_id.as_deref().unwrap_or("admin token");
    let slot = s.streams.take(who).map_err(|refused| match refused {
        StreamRefusal::Caller => ServiceError::TooManyStreams(refused.message()),
        StreamRefusal::Replica => ServiceError::Unavailable(refused.message()),
    })?;
    let mut rx = s.live.subscribe();
    let streams = s.streams.clone();
    let events = async_stream(move |tx| async move {
        // Held while the producer runs: it ends as soon as the client leaves.
        let _slot = slot;
        loop {
            // A closed client ends the producer at once, not at the next
            // notice; a stopping server ends it too.
            let next = tokio::select! {
                _ = tx.closed() => break,
                _ = streams.closed() => break,
                next = rx.recv() => next,
            };
            match next {
                Ok((audience, update)) if audience.includes(&ws) => {
                    if tx.send(Ok(event(&update))).await.is_err() {
                        break;
                    }
                }
                Ok(_) => {}
                // A slow reader missed some notices: tell it to reload.
                Err(RecvError::Lagged(_)) => {
                    if tx.send(Ok(event(&LiveUpdate::resync()))).await.is_err() {
                        break;
                    }
                }
                Err(RecvError::Closed) => break,
            }
        }
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}

fn event(update: &LiveUpdate) -> Event {
    let data = serde_json::to_string(update).unwrap_or_default();
    Event::default().event(update.kind.clone()).data(data)
}

/// A stream fed by a spawned producer through a small channel.
fn async_stream<F, Fut>(producer: F) -> impl Stream<Item = Result<Event, Infallible>>
where
    F: FnOnce(tokio::sync::mpsc::Sender<Result<Event, Infallible>>) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    tokio::spawn(producer(tx));
    tokio_stream_from(rx)
}

fn tokio_stream_from<T: Send + 'static>(mut rx: tokio::sync::mpsc::Receiver<T>) -> impl Stream<Item = T> {
    futures::stream::poll_fn(move |cx| rx.poll_recv(cx))
}
