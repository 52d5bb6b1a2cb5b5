//! The dashboard's HTTP server: its routes, the guard every request passes (the `Host` it
//! names, the token an action carries, the headers every answer gets), and the two actions,
//! which ask the daemon through its control socket exactly as `prpd resume` and `prpd abort`
//! do — so a run is never driven by two processes, and the daemon's own checks apply.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Path as UrlPath, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse as _, Response};
use axum::routing::{get, post};
use prpd_base::paths::SessionPaths;
use prpd_run::driver::unix_now;
use prpd_run::session;
use prpd_run::timeline::Timeline;
use prpd_watch::control::{self, Request as ControlRequest};
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::token::Token;
use crate::{UiError, address, events, html, pages, runs};

/// The header an action carries the token in.
pub const TOKEN_HEADER: &str = "x-prpd-token";

/// What the dashboard serves, and where.
#[derive(Debug, Clone)]
pub struct Options {
    /// The repository (canonical).
    pub repo: PathBuf,
    pub address: SocketAddr,
    /// Bound off the loopback interface on purpose (`--public`).
    pub public: bool,
}

/// A dashboard bound to its address, not yet serving.
#[derive(Debug)]
pub struct Dashboard {
    listener: TcpListener,
    shared: Shared,
    url: String,
}

/// What every request's handler reads.
#[derive(Debug, Clone)]
struct Shared {
    repo: PathBuf,
    session: SessionPaths,
    token: Token,
    bound: SocketAddr,
    public: bool,
    stop: watch::Receiver<bool>,
}

impl Dashboard {
    /// Binds the address, makes the token if there is none, and writes where it listens to
    /// `.prp-session/ui.address`.
    pub async fn bind(options: Options) -> Result<Dashboard, UiError> {
        let session = SessionPaths::new(&options.repo);
        session.ensure().map_err(|source| UiError::State {
            path: session.root().to_path_buf(),
            source,
        })?;
        let token = Token::load_or_create(&session.ui_token())?;
        let listener =
            TcpListener::bind(options.address)
                .await
                .map_err(|source| UiError::Bind {
                    address: options.address,
                    source,
                })?;
        let bound = listener.local_addr().map_err(|source| UiError::Bind {
            address: options.address,
            source,
        })?;
        let url = format!("http://{bound}/");
        let path = session.ui_address();
        prpd_base::files::write_atomically(&path, format!("{url}\n").as_bytes())
            .map_err(|source| UiError::State { path, source })?;
        let (_, stop) = watch::channel(false);
        Ok(Dashboard {
            listener,
            shared: Shared {
                repo: options.repo,
                session,
                token,
                bound,
                public: options.public,
                stop,
            },
            url,
        })
    }

    /// Its URL, without the token.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Its URL with the token in the fragment, which the page keeps for its actions and which a
    /// browser never sends anywhere.
    pub fn url_with_token(&self) -> String {
        format!("{}#token={}", self.url, self.shared.token.reveal())
    }

    /// Serves until `stop` completes; then the open event streams end, and
    /// `.prp-session/ui.address` goes.
    pub async fn serve(
        self,
        stop: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), UiError> {
        let Dashboard {
            listener,
            mut shared,
            url,
        } = self;
        let (stopping, stopped) = watch::channel(false);
        shared.stop = stopped;
        let address = shared.session.ui_address();
        let shared = Arc::new(shared);
        let app = Router::new()
            .route("/", get(runs_page))
            .route("/runs/{run}", get(run_page))
            .route("/runs/{run}/timeline.svg", get(timeline))
            .route("/runs/{run}/iterations/{sequence}", get(iteration))
            .route("/runs/{run}/resume", post(resume))
            .route("/runs/{run}/abort", post(abort))
            .route("/events", get(live))
            .route("/assets/app.js", get(script))
            .route("/assets/app.css", get(stylesheet))
            .fallback(not_found)
            .layer(middleware::from_fn_with_state(shared.clone(), guard))
            .with_state(shared);
        let served = axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                stop.await;
                let _ = stopping.send(true);
            })
            .await;
        if std::fs::read_to_string(&address).is_ok_and(|written| written.trim() == url.trim()) {
            let _ = std::fs::remove_file(&address);
        }
        served.map_err(UiError::Serve)
    }
}

/// Every request: a `Host` that names this dashboard, the token for anything but reading; every
/// answer: headers that keep it out of frames, other origins and caches.
async fn guard(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|value| value.to_str().ok());
    let mut response = if !address::host_is_allowed(host, shared.bound, shared.public) {
        refusal(
            StatusCode::FORBIDDEN,
            "this dashboard answers only requests addressed to its loopback address",
        )
    } else if request.method() != Method::GET
        && request.method() != Method::HEAD
        && !request
            .headers()
            .get(TOKEN_HEADER)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|offered| shared.token.matches(offered))
    {
        refusal(
            StatusCode::FORBIDDEN,
            "an action needs the dashboard's token in the X-Prpd-Token header: open the URL \
             `prpd ui` printed (it carries the token), or read .prp-session/ui.token",
        )
    } else {
        next.run(request).await
    };
    secure(response.headers_mut());
    response
}

fn secure(headers: &mut HeaderMap) {
    for (name, value) in [
        (
            "content-security-policy",
            "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
             img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; \
             frame-ancestors 'none'",
        ),
        ("x-content-type-options", "nosniff"),
        ("x-frame-options", "DENY"),
        ("referrer-policy", "no-referrer"),
        ("cache-control", "no-store"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
}

fn refusal(status: StatusCode, message: &str) -> Response {
    (
        status,
        axum::Json(serde_json::json!({ "ok": false, "message": message })),
    )
        .into_response()
}

async fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        Html(html::page(
            "Not found",
            0,
            "<h1>Not found</h1><p><a href=\"/\">The runs</a></p>",
        )),
    )
        .into_response()
}

/// Runs `work` on the blocking pool (pages read files and git objects).
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    tokio::task::spawn_blocking(work).await.ok()
}

async fn runs_page(State(shared): State<Arc<Shared>>) -> Response {
    blocking(move || {
        let rows = runs::rows(&shared.repo);
        let version = events::version(&shared.session);
        Html(pages::runs::page(&shared.repo, &rows, unix_now(), version)).into_response()
    })
    .await
    .unwrap_or_else(|| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// Whether `run` is a run of the repository (ids are only ever looked up, never joined to a
/// path unchecked).
fn known(session: &SessionPaths, run: &str) -> bool {
    session
        .run_ids()
        .is_ok_and(|ids| ids.iter().any(|id| id == run))
}

async fn run_page(State(shared): State<Arc<Shared>>, UrlPath(run): UrlPath<String>) -> Response {
    blocking(move || {
        if !known(&shared.session, &run) {
            return not_a_run(&run);
        }
        let version = events::version(&shared.session);
        match session::verified(&shared.session, &shared.repo, &run) {
            Ok(record) => Html(pages::run::page(
                &shared.session,
                &record,
                unix_now(),
                version,
            ))
            .into_response(),
            Err(error) => Html(html::page(
                &run,
                version,
                &format!(
                    "<h1>{}</h1><p class=\"refused\">{}</p>",
                    html::escape(&run),
                    html::escape(&error.to_string())
                ),
            ))
            .into_response(),
        }
    })
    .await
    .unwrap_or_else(|| StatusCode::INTERNAL_SERVER_ERROR.into_response())
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

async fn timeline(State(shared): State<Arc<Shared>>, UrlPath(run): UrlPath<String>) -> Response {
    blocking(move || {
        if !known(&shared.session, &run) {
            return not_a_run(&run);
        }
        match session::verified(&shared.session, &shared.repo, &run) {
            Ok(record) => (
                [(header::CONTENT_TYPE, "image/svg+xml; charset=utf-8")],
                Timeline::of(&record).svg(),
            )
                .into_response(),
            Err(error) => refusal(StatusCode::CONFLICT, &error.to_string()),
        }
    })
    .await
    .unwrap_or_else(|| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

async fn iteration(
    State(shared): State<Arc<Shared>>,
    UrlPath((run, sequence)): UrlPath<(String, u32)>,
) -> Response {
    blocking(move || {
        if !known(&shared.session, &run) {
            return not_a_run(&run);
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
    .unwrap_or_else(|| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

async fn resume(State(shared): State<Arc<Shared>>, UrlPath(run): UrlPath<String>) -> Response {
    let request = ControlRequest::Resume {
        run: Some(run.clone()),
        reload_config: false,
        budget: None,
    };
    act(&shared, run, "resume", request).await
}

async fn abort(State(shared): State<Arc<Shared>>, UrlPath(run): UrlPath<String>) -> Response {
    let request = ControlRequest::Abort {
        run: Some(run.clone()),
    };
    act(&shared, run, "abort", request).await
}

/// Asks the daemon to carry out `request` on `run`; its answer is the action's.
async fn act(shared: &Shared, run: String, verb: &str, request: ControlRequest) -> Response {
    if !known(&shared.session, &run) {
        return refusal(StatusCode::NOT_FOUND, &format!("no run {run}"));
    }
    let socket = shared.session.socket();
    let asked = blocking(move || control::ask(&socket, &request)).await;
    match asked {
        Some(Ok(Some(reply))) => {
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
        Some(Ok(None)) => refusal(
            StatusCode::CONFLICT,
            &format!(
                "no daemon runs for this repository: start it with `prpd watch`, or run \
                 `prpd {verb} {run}` in a terminal"
            ),
        ),
        Some(Err(error)) => refusal(StatusCode::BAD_GATEWAY, &error.to_string()),
        None => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

async fn live(State(shared): State<Arc<Shared>>) -> Response {
    events::stream(shared.session.clone(), shared.stop.clone()).into_response()
}

async fn script() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        include_str!("../assets/app.js"),
    )
        .into_response()
}

async fn stylesheet() -> Response {
    (
        [(header::CONTENT_TYPE, "text/css; charset=utf-8")],
        include_str!("../assets/app.css"),
    )
        .into_response()
}
