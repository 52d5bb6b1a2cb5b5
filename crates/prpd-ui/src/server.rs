//! The dashboard's HTTP server: binding, the routes, the guard every request passes (the
//! `Host` it names, the site that sent it, the token an action carries, the headers every
//! answer gets), and stopping without letting a slow client hold the daemon up.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::{get, post};
use prpd_base::paths::SessionPaths;
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::address::{self, Exposure};
use crate::events::Poller;
use crate::token::Token;
use crate::{UiError, actions, routes};

/// The header an action carries the token in.
pub const TOKEN_HEADER: &str = "x-prpd-token";

/// The header every answer carries the token's fingerprint in (see [`Token::fingerprint`]).
pub const FINGERPRINT_HEADER: &str = "x-prpd-dashboard";

/// How long a stopping dashboard waits for its open requests.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);

/// What the dashboard serves, and where.
#[derive(Debug, Clone)]
pub struct Options {
    /// The repository (canonical).
    pub repo: PathBuf,
    pub address: SocketAddr,
    pub exposure: Exposure,
}

/// A dashboard bound to its address, not yet serving.
#[derive(Debug)]
pub struct Dashboard {
    listener: TcpListener,
    repo: PathBuf,
    session: SessionPaths,
    token: Token,
    exposure: Exposure,
    url: String,
}

/// What every request's handler reads.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) repo: PathBuf,
    pub(crate) session: SessionPaths,
    token: Token,
    fingerprint: HeaderValue,
    exposure: Exposure,
    pub(crate) poller: Arc<Poller>,
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
        let bind = |source| UiError::Bind {
            address: options.address,
            source,
        };
        let listener = TcpListener::bind(options.address).await.map_err(bind)?;
        let url = address::url(listener.local_addr().map_err(bind)?);
        let path = session.ui_address();
        prpd_base::files::write_atomically(&path, format!("{url}\n").as_bytes())
            .map_err(|source| UiError::State { path, source })?;
        Ok(Dashboard {
            listener,
            repo: options.repo,
            session,
            token,
            exposure: options.exposure,
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
        format!("{}#token={}", self.url, self.token.expose())
    }

    /// Serves until `stop` completes; then the open event streams end, open requests get
    /// [`SHUTDOWN_GRACE`], and `.prp-session/ui.address` goes.
    pub async fn serve(
        self,
        stop: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), UiError> {
        let Dashboard {
            listener,
            repo,
            session,
            token,
            exposure,
            url,
        } = self;
        let (stopping, mut stopped) = watch::channel(false);
        let address = session.ui_address();
        let shared = Arc::new(Shared {
            fingerprint: HeaderValue::from_str(&token.fingerprint())
                .unwrap_or_else(|_| HeaderValue::from_static("")),
            poller: Poller::start(session.clone(), stopped.clone()),
            repo,
            session,
            token,
            exposure,
        });
        let app = Router::new()
            .route("/", get(routes::runs_page))
            .route("/runs/{run}", get(routes::run_page))
            .route("/runs/{run}/timeline.svg", get(routes::timeline))
            .route("/runs/{run}/iterations/{sequence}", get(routes::iteration))
            .route("/runs/{run}/resume", post(actions::resume))
            .route("/runs/{run}/abort", post(actions::abort))
            .route("/events", get(routes::live))
            .route("/assets/app.js", get(routes::script))
            .route("/assets/app.css", get(routes::stylesheet))
            .fallback(routes::not_found)
            .layer(middleware::from_fn_with_state(Arc::clone(&shared), guard))
            .with_state(shared);
        let served = axum::serve(listener, app).with_graceful_shutdown(async move {
            stop.await;
            let _ = stopping.send(true);
        });
        let grace = async move {
            let _ = stopped.wait_for(|stopped| *stopped).await;
            tokio::time::sleep(SHUTDOWN_GRACE).await;
        };
        let served = tokio::select! {
            served = served => served,
            () = grace => Ok(()),
        };
        if std::fs::read_to_string(&address).is_ok_and(|written| written.trim() == url.trim()) {
            let _ = std::fs::remove_file(&address);
        }
        served.map_err(UiError::Serve)
    }
}

/// Every request: a `Host` that names this dashboard, not sent by another site's page, and the
/// token for anything but reading. Every answer: headers that keep it out of frames, other
/// origins and caches, and the fingerprint `prpd ui` recognises it by.
async fn guard(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let host = headers
        .get(header::HOST)
        .and_then(|value| value.to_str().ok());
    let cross_site = headers
        .get("sec-fetch-site")
        .is_some_and(|value| value.as_bytes() == b"cross-site");
    let reads = matches!(*request.method(), Method::GET | Method::HEAD);
    let has_token = headers
        .get(TOKEN_HEADER)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|offered| shared.token.matches(offered));
    let mut response = if !address::host_is_allowed(host, shared.exposure) {
        routes::refusal(
            StatusCode::FORBIDDEN,
            "this dashboard answers only requests addressed to its loopback address",
        )
    } else if cross_site {
        routes::refusal(
            StatusCode::FORBIDDEN,
            "this dashboard answers no request another site's page makes",
        )
    } else if !reads && !has_token {
        routes::refusal(
            StatusCode::FORBIDDEN,
            "an action needs the dashboard's token in the X-Prpd-Token header: open the URL \
             `prpd ui` printed (it carries the token), or read .prp-session/ui.token",
        )
    } else {
        next.run(request).await
    };
    secure(response.headers_mut());
    response
        .headers_mut()
        .insert(FINGERPRINT_HEADER, shared.fingerprint.clone());
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
        ("cross-origin-resource-policy", "same-origin"),
        ("cache-control", "no-store"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
}
