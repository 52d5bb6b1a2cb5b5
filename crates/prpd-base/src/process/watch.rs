//! A watcher of a child's output as it comes: the drain thread hands it every chunk it reads,
//! and the watcher may ask [`super::run`] to stop the child before it ends. An agent's budget
//! is read this way from the usage its CLI streams, so a call is stopped within one usage
//! report of crossing the limit rather than after its turn ends.

use tokio::sync::{mpsc, watch};

/// The two ends [`super::Spec::watch`] holds.
#[derive(Debug, Clone)]
pub struct OutputWatch {
    /// Each chunk of the merged output, as the drain thread read it.
    pub chunks: mpsc::UnboundedSender<Vec<u8>>,
    /// Set to `true` to stop the child: its group gets SIGTERM, then SIGKILL after the grace.
    pub stop: watch::Receiver<bool>,
}

/// Resolves once `stop` says `true`; never without a watcher, or once the watcher is gone
/// without asking.
pub(super) async fn stop_asked(stop: Option<&mut watch::Receiver<bool>>) {
    let Some(stop) = stop else {
        return std::future::pending().await;
    };
    if stop.wait_for(|stop| *stop).await.is_err() {
        std::future::pending::<()>().await;
    }
}
