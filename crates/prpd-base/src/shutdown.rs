//! A person or a supervisor asking prpd to stop: Ctrl-C (SIGINT) or SIGTERM (systemd, `kill`,
//! a container runtime). `prpd run` and `prpd watch` both drop their work when it comes; the
//! work's process groups die with it and the saved record lets the next start resume.

/// Completes when SIGINT or SIGTERM arrives.
pub async fn requested() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(error) => {
                tracing::warn!(%error, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = terminate => {}
    }
}
