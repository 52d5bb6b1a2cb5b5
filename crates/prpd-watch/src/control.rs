//! The daemon's control channel: `prpd status`, `resume`, `abort` and `queue` reach a running
//! `prpd watch` through the Unix socket `.prp-session/prpd.sock`. One JSON request per line,
//! one JSON reply per line. The socket is the owner's only (mode 0600, and a peer of another
//! uid is refused), and the daemon holds the repository's lock, so a socket file found at start
//! is a dead daemon's and is replaced. When no daemon answers, the CLI reads the state files
//! instead ([`ask`] returns `None`).

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{mpsc, oneshot};

/// What the CLI asks the daemon.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum Request {
    /// What the daemon is doing.
    Status,
    /// Resume an escalated or stopped run (a human's decision; the only unfinished one when
    /// `run` is `None`).
    Resume {
        run: Option<String>,
        reload_config: bool,
        /// The raise of the budget that stopped the run (`--budget +N`).
        #[serde(default)]
        budget: Option<f64>,
    },
    /// Abort a run (the only unfinished one when `run` is `None`).
    Abort { run: Option<String> },
    /// Show the queue; with `add`, queue that PRP (relative to the repository) first.
    Queue { add: Option<PathBuf> },
}

/// The daemon's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reply {
    /// Whether the request was carried out (or accepted).
    pub ok: bool,
    /// What happened, for a person.
    pub message: String,
    /// The daemon as it stands after the request.
    pub daemon: DaemonView,
}

/// What `prpd status` shows of the daemon.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DaemonView {
    pub pid: u32,
    /// What it is doing: `idle`, `driving 2 runs`, `waiting for a human`, …
    pub activity: String,
    /// The runs it drives right now, by id.
    pub driving: Vec<String>,
    /// How many runs it drives at once (`[watch] parallel`).
    pub parallel: usize,
    /// The PRPs waiting, oldest first.
    pub queue: Vec<PathBuf>,
    /// The last report it wrote (QA, escalation).
    pub last_report: Option<PathBuf>,
    /// When an open breaker gets its probe (seconds since the Unix epoch), by run id.
    pub cooldown_ends_at: BTreeMap<String, u64>,
    /// Why the daemon cannot go on with a run on its own, by run id.
    pub blocked: BTreeMap<String, String>,
}

/// A request on its way to the daemon's loop, with where the reply goes.
pub type Incoming = (Request, oneshot::Sender<Reply>);

/// The longest request line the daemon reads.
const MAX_REQUEST: u64 = 64 * 1024;

/// The control channel failed.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    #[error("failed to open the control socket {}", path.display())]
    Bind {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the daemon at {} did not answer properly", path.display())]
    Talk {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Opens the socket at `path` (replacing a dead daemon's file), owner-only.
pub fn listen(path: &Path) -> Result<UnixListener, ControlError> {
    let bind = |source| ControlError::Bind {
        path: path.to_path_buf(),
        source,
    };
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => return Err(bind(error)),
    }
    let listener = UnixListener::bind(path).map_err(bind)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(bind)?;
    Ok(listener)
}

/// Accepts connections until the daemon's loop goes away, passing each request on.
pub async fn serve(listener: UnixListener, requests: mpsc::Sender<Incoming>) {
    let own_uid = nix::unistd::getuid().as_raw();
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(error) => {
                tracing::warn!(%error, "control socket: accept failed");
                continue;
            }
        };
        if requests.is_closed() {
            return;
        }
        let same_user = stream.peer_cred().is_ok_and(|peer| peer.uid() == own_uid);
        if !same_user {
            tracing::warn!("control socket: refused a client of another user");
            continue;
        }
        tokio::spawn(answer(stream, requests.clone()));
    }
}

/// Reads one request, waits for the loop's reply, writes it.
async fn answer(stream: UnixStream, requests: mpsc::Sender<Incoming>) {
    let (reader, mut writer) = stream.into_split();
    let mut line = String::new();
    let mut reader = tokio::io::BufReader::new(reader).take(MAX_REQUEST);
    if let Err(error) = reader.read_line(&mut line).await {
        tracing::warn!(%error, "control socket: unreadable request");
        return;
    }
    let reply = match serde_json::from_str::<Request>(line.trim()) {
        Ok(request) => {
            let (sender, receiver) = oneshot::channel();
            if requests.send((request, sender)).await.is_err() {
                return;
            }
            match receiver.await {
                Ok(reply) => reply,
                Err(_) => return,
            }
        }
        Err(error) => Reply {
            ok: false,
            message: format!("not a prpd control request ({error})"),
            daemon: DaemonView::default(),
        },
    };
    let Ok(mut text) = serde_json::to_string(&reply) else {
        return;
    };
    text.push('\n');
    if let Err(error) = writer.write_all(text.as_bytes()).await {
        tracing::debug!(%error, "control socket: the client left before the reply");
    }
}

/// How long the CLI waits for the daemon's reply.
const REPLY_TIMEOUT: Duration = Duration::from_secs(10);

/// Asks the daemon whose socket is at `path`; `None` when no daemon listens there.
pub fn ask(path: &Path, request: &Request) -> Result<Option<Reply>, ControlError> {
    let talk = |source| ControlError::Talk {
        path: path.to_path_buf(),
        source,
    };
    let mut stream = match std::os::unix::net::UnixStream::connect(path) {
        Ok(stream) => stream,
        Err(error)
            if matches!(
                error.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
            ) =>
        {
            return Ok(None);
        }
        Err(error) => return Err(talk(error)),
    };
    stream.set_read_timeout(Some(REPLY_TIMEOUT)).map_err(talk)?;
    let mut text = serde_json::to_string(request).map_err(|error| talk(error.into()))?;
    text.push('\n');
    stream.write_all(text.as_bytes()).map_err(talk)?;
    let mut line = String::new();
    BufReader::new(stream).read_line(&mut line).map_err(talk)?;
    let reply = serde_json::from_str(line.trim()).map_err(|error| talk(error.into()))?;
    Ok(Some(reply))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_request_reaches_the_loop_and_its_reply_comes_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("prpd.sock");
        std::fs::write(&path, "a dead daemon's socket").expect("stale file");
        let listener = listen(&path).expect("listen");
        let mode = std::fs::metadata(&path)
            .expect("socket")
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "owner only: {mode:o}");
        let (sender, mut receiver) = mpsc::channel::<Incoming>(4);
        tokio::spawn(serve(listener, sender));
        tokio::spawn(async move {
            while let Some((request, reply)) = receiver.recv().await {
                let _ = reply.send(Reply {
                    ok: true,
                    message: format!("{request:?}"),
                    daemon: DaemonView {
                        pid: 7,
                        activity: "idle".to_owned(),
                        ..DaemonView::default()
                    },
                });
            }
        });
        let asked = path.clone();
        let reply = tokio::task::spawn_blocking(move || {
            ask(
                &asked,
                &Request::Queue {
                    add: Some(PathBuf::from("PRPs/a.md")),
                },
            )
        })
        .await
        .expect("join")
        .expect("ask")
        .expect("a daemon answered");
        assert!(reply.ok);
        assert_eq!(reply.message, "Queue { add: Some(\"PRPs/a.md\") }");
        assert_eq!(reply.daemon.pid, 7);
    }

    #[test]
    fn no_daemon_is_none_not_an_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("prpd.sock");
        assert!(ask(&path, &Request::Status).expect("no socket").is_none());
        let dead = std::os::unix::net::UnixListener::bind(&path).expect("bind");
        drop(dead);
        assert!(ask(&path, &Request::Status).expect("refused").is_none());
    }
}
