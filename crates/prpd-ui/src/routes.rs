//! The dashboard's reading routes: the pages, an iteration's detail, the timeline as a file,
//! the event stream and the two assets. Each page is built on the blocking pool (it reads
//! files and git objects), and a run id in a URL is only ever looked up among the
//! repository's runs, never joined to a path unchecked.

use std::sync::Arc;

use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse as _, Response};
use prpd_base::paths::SessionPaths;
use prpd_run::driver::unix_now;
use prpd_run::record::RunRecord;
use prpd_run::session;
use prpd_run::timeline::Timeline;

use crate::events::Stamps;
use crate::server::Shared;
use crate::{html, pages};

/// A JSON refusal: `{ok: false, message}`.
pub(crate) fn refusal(status: StatusCode, message: &str) -> Response {
    (
        status,
        axum::Json(serde_json::json!({ "ok": false, "message": message })),
    )
        .into_response()
}

/// Runs `work` on the blocking pool.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    tokio::task::spawn_blocking(work).await.ok()
}

/// Whether `run` is a run of the repository.
pub(crate) fn known(session: &SessionPaths, run: &str) -> bool {
    session
        .run_ids()
        .is_ok_and(|ids| ids.iter().any(|id| id == run))
}

fn failed() -> Response {
    StatusCode::INTERNAL_SERVER_ERROR.into_response()
}

pub(crate) async fn not_found() -> Response {
    (StatusCode::NOT_FOUND, "not found").into_response()
}

fn not_a_run(run: &str) -> Response {
    (
        StatusCode::NOT_FOUND,
        Html(html::page(
            "Not found",
            0,
            &format!(
                "<h1>No run {}</h1><p><a href=\"/\">The runs</a></p>",
                html::escape(run)
            ),
        )),
    )
        .into_response()
}

pub(crate) async fn runs_page(State(shared): State<Arc<Shared>>) -> Response {
    blocking(move || {
        // The version before the rows: a change in between makes the page look again.
        let version = Stamps::read(&shared.session).version(None);
        let rows = crate::runs::rows(&shared.repo);
        Html(pages::runs::page(&shared.repo, &rows, unix_now(), version)).into_response()
    })
    .await
    .unwrap_or_else(failed)
}

/// The sealed record of `run`, or the page that says why there is none to show.
fn sealed(shared: &Shared, run: &str, version: u64) -> Result<RunRecord, Box<Response>> {
    if !known(&shared.session, run) {
        return Err(Box::new(not_a_run(run)));
    }
    session::verified(&shared.session, &shared.repo, run).map_err(|error| {
        Box::new(
            (
                StatusCode::CONFLICT,
                Html(html::page(
                    run,
                    version,
                    &format!(
                        "<h1>{}</h1><p class=\"refused\">{}</p>",
                        html::escape(run),
                        html::escape(&error.to_string())
                    ),
                )),
            )
                .into_response(),
        )
    })
}

pub(crate) async fn run_page(
    State(shared): State<Arc<Shared>>,
    UrlPath(run): UrlPath<String>,
) -> Response {
    blocking(move || {
        let version = Stamps::read(&shared.session).version(Some(&run));
        match sealed(&shared, &run, version) {
            Ok(record) => Html(pages::run::page(
                &shared.session,
                &record,
                unix_now(),
                version,
            ))
            .into_response(),
            Err(refused) => *refused,
        }
    })
    .await
    .unwrap_or_else(failed)
}

pub(crate) async fn timeline(
    State(shared): State<Arc<Shared>>,
    UrlPath(run): UrlPath<String>,
) -> Response {
    blocking(move || match sealed(&shared, &run, 0) {
        Ok(record) => (
            [(header::CONTENT_TYPE, "image/svg+xml; charset=utf-8")],
            Timeline::of(&record).svg(),
        )
            .into_response(),
        Err(refused) => *refused,
    })
    .await
    .unwrap_or_else(failed)
}

pub(crate) async fn iteration(
    State(shared): State<Arc<Shared>>,
    UrlPath((run, sequence)): UrlPath<(String, u32)>,
) -> Response {
    blocking(move || {
        if !known(&shared.session, &run) {
            return (StatusCode::NOT_FOUND, "no such run").into_response();
        }
        match pages::iteration::folder(&shared.session, &run, sequence) {
            Some(dir) => Html(pages::iteration::fragment(
                &shared.repo,
                &run,
                sequence,
                &dir,
            ))
            .into_response(),
            None => (StatusCode::NOT_FOUND, "no such iteration").into_response(),
        }
    })
    .await
    .unwrap_or_else(failed)
}

/// `/events?run=ID`: a run's page follows its record; without `run`, the runs page follows
/// every record and the queue.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct Listen {
    run: Option<String>,
}

pub(crate) async fn live(
    State(shared): State<Arc<Shared>>,
    Query(listen): Query<Listen>,
) -> Response {
    match shared.poller.stream(listen.run).await {
        Some(stream) => stream.into_response(),
        None => refusal(
            StatusCode::SERVICE_UNAVAILABLE,
            "too many pages listen for changes; close some",
        ),
    }
}

pub(crate) async fn script() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        include_str!("../assets/app.js"),
    )
        .into_response()
}

pub(crate) async fn stylesheet() -> Response {
    (
        [(header::CONTENT_TYPE, "text/css; charset=utf-8")],
        include_str!("../assets/app.css"),
    )
        .into_response()
}
