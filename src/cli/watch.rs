//! The daemon's commands: `prpd watch` itself, `prpd queue`, and the part of `prpd status`,
//! `resume` and `abort` that talks to a running daemon through its socket (they read and
//! write the state files themselves when none runs).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use prpd_base::exit::ExitCode;
use prpd_base::paths::SessionPaths;
use prpd_run::driver::unix_now;
use prpd_run::{session, worktree};
use prpd_ui::{Dashboard, Exposure};
pub(super) use prpd_watch::control::Request;
use prpd_watch::control::{self, Reply};
use prpd_watch::daemon::{self, Daemon};
use prpd_watch::queue::Queue;

use super::usage::UsageError;

/// `prpd watch`: takes the lock (a second daemon stops here, naming the first one's pid),
/// limits malloc's arenas (`prpd-arenas`), then runs the daemon until SIGTERM or Ctrl-C; with
/// `--ui`, the dashboard beside it, stopped when the daemon stops.
pub(super) fn watch(
    repo: PathBuf,
    config: Option<PathBuf>,
    ui: Option<(SocketAddr, Exposure)>,
) -> anyhow::Result<ExitCode> {
    let lock = session::lock(&repo)?;
    if !prpd_arenas::limit() {
        tracing::warn!(
            "malloc did not take the limit on its arenas: the daemon may keep more memory after its runs"
        );
    }
    let runtime = tokio::runtime::Runtime::new().context("failed to start the async runtime")?;
    runtime.block_on(async {
        let daemon = Daemon::start(
            lock,
            daemon::Options {
                repo: repo.clone(),
                config,
            },
        )?;
        // After the daemon's own checks, so a daemon that cannot start leaves no address behind.
        let dashboard = match ui {
            Some((address, exposure)) => Some((
                super::ui::bound(
                    Dashboard::bind(prpd_ui::Options {
                        repo,
                        address,
                        exposure,
                    })
                    .await,
                )?,
                exposure,
            )),
            None => None,
        };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let served = dashboard.map(|(dashboard, exposure)| {
            super::ui::announce(&dashboard, exposure);
            tokio::spawn(dashboard.serve(async {
                let _ = stopped.await;
            }))
        });
        let result = daemon.run().await;
        let _ = stop.send(());
        if let Some(served) = served {
            match served.await {
                Ok(Err(error)) => {
                    tracing::warn!(error = %anyhow::Error::new(error), "the dashboard failed");
                }
                Ok(Ok(())) => {}
                Err(error) => tracing::warn!(%error, "the dashboard's task failed"),
            }
        }
        result.map_err(anyhow::Error::new)
    })?;
    Ok(ExitCode::Success)
}

/// Asks the repository's daemon, when one runs.
pub(super) fn ask(repo: &Path, request: &Request) -> anyhow::Result<Option<Reply>> {
    Ok(control::ask(&SessionPaths::new(repo).socket(), request)?)
}

/// Prints the daemon's answer; a refused request is the user's to fix (exit 2).
pub(super) fn answered(reply: &Reply) -> anyhow::Result<ExitCode> {
    if !reply.ok {
        return Err(UsageError(format!(
            "the daemon (pid {}): {}",
            reply.daemon.pid, reply.message
        ))
        .into());
    }
    println!("{} (daemon pid {})", reply.message, reply.daemon.pid);
    Ok(ExitCode::Success)
}

/// The queue as the state file holds it (no daemon runs).
pub(super) fn saved_queue(repo: &Path) -> anyhow::Result<Vec<PathBuf>> {
    Ok(Queue::load(&SessionPaths::new(repo).queue())?.prps())
}

/// `prpd queue [PRP]`: shows the queue; with a PRP, queues it first.
pub(super) fn queue(repo: &Path, prp: Option<&Path>, json: bool) -> anyhow::Result<ExitCode> {
    let relative = prp
        .map(|prp| session::relative_prp(repo, prp))
        .transpose()?;
    let request = Request::Queue {
        add: relative.clone(),
    };
    let (message, waiting) = match ask(repo, &request)? {
        Some(reply) if !reply.ok => return answered(&reply),
        Some(reply) => (reply.message, reply.daemon.queue),
        None => {
            let session = SessionPaths::new(repo);
            session
                .ensure()
                .with_context(|| format!("failed to create {}", session.root().display()))?;
            let mut queue = Queue::load(&session.queue())?;
            let message = match &relative {
                Some(prp)
                    if queue.push(prp, unix_now(), worktree::resolve_base(repo, None).ok()) =>
                {
                    queue.save(&session.queue())?;
                    format!(
                        "{} queued; no daemon runs: `prpd watch` starts it",
                        prp.display()
                    )
                }
                Some(prp) => format!("{} is already queued", prp.display()),
                None => "no daemon runs: `prpd watch` starts the queue".to_owned(),
            };
            (message, queue.prps())
        }
    };
    if json {
        println!(
            "{}",
            serde_json::json!({ "message": message, "queue": waiting })
        );
        return Ok(ExitCode::Success);
    }
    println!("{message}");
    if waiting.is_empty() {
        println!("The queue is empty.");
    }
    for (position, prp) in waiting.iter().enumerate() {
        println!("{:>3}. {}", position + 1, prp.display());
    }
    Ok(ExitCode::Success)
}
