//! The dashboard's two actions, Resume and Abort. Each asks the daemon through its control
//! socket exactly as `prpd resume RUN` and `prpd abort RUN` do, so the daemon's own checks
//! apply and a run is never driven by two processes; with no daemon running, the answer says
//! how to act from a terminal instead. The token was checked before a handler runs (the
//! server's guard).

use std::sync::Arc;

use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse as _, Response};
use prpd_watch::control::{self, Request as ControlRequest};

use crate::routes::{self, blocking, known};
use crate::server::Shared;

pub(crate) async fn resume(
    State(shared): State<Arc<Shared>>,
    UrlPath(run): UrlPath<String>,
) -> Response {
    let request = ControlRequest::Resume {
        run: Some(run.clone()),
        reload_config: false,
        budget: None,
    };
    act(&shared, run, "resume", request).await
}

pub(crate) async fn abort(
    State(shared): State<Arc<Shared>>,
    UrlPath(run): UrlPath<String>,
) -> Response {
    let request = ControlRequest::Abort {
        run: Some(run.clone()),
    };
    act(&shared, run, "abort", request).await
}

/// Asks the daemon to carry out `request` on `run`; its answer is the action's.
async fn act(
    shared: &Shared,
    run: String,
    verb: &'static str,
    request: ControlRequest,
) -> Response {
    let session = shared.session.clone();
    let asked = {
        let run = run.clone();
        blocking(move || known(&session, &run).then(|| control::ask(&session.socket(), &request)))
            .await
    };
    match asked {
        Some(None) => routes::refusal(StatusCode::NOT_FOUND, "no such run"),
        Some(Some(Ok(Some(reply)))) => {
            tracing::info!(
                run,
                verb,
                ok = reply.ok,
                message = reply.message,
                "dashboard action"
            );
            let status = if reply.ok {
                StatusCode::OK
            } else {
                StatusCode::CONFLICT
            };
            (
                status,
                axum::Json(serde_json::json!({ "ok": reply.ok, "message": reply.message })),
            )
                .into_response()
        }
        Some(Some(Ok(None))) => routes::refusal(
            StatusCode::SERVICE_UNAVAILABLE,
            &format!(
                "no daemon runs for this repository: start it with `prpd watch`, or run \
                 `prpd {verb} {run}` in a terminal"
            ),
        ),
        Some(Some(Err(error))) => routes::refusal(StatusCode::BAD_GATEWAY, &error.to_string()),
        None => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}
