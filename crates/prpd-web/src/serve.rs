//! `[plan] serve`: the command that starts the web app before it is explored. prpd starts it
//! (a shell command, in its own process group, without secret-named variables) only when
//! nothing listens on the base URL's port yet, waits for the port to accept connections, and
//! stops the whole group when the plan is done or dropped.

use std::path::Path;
use std::time::Duration;

use url::Url;

use prpd_base::process::{EnvPolicy, Service, ServiceSpec};

/// The app could not be started.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot start `{command}`: {message}")]
    Start { command: String, message: String },
    #[error("`{command}` ended before {address} accepted connections; its last words:\n{stderr}")]
    Ended {
        command: String,
        address: String,
        stderr: String,
    },
    #[error("{address} did not accept connections within {} after `{command}` started; its last words:\n{stderr}", humantime::format_duration(*.timeout))]
    Timeout {
        command: String,
        address: String,
        timeout: Duration,
        stderr: String,
    },
    #[error("{0} has no host and port to wait for")]
    NoAddress(String),
}

/// Starts `command` in `cwd` unless `base_url`'s port already accepts, and waits for it to.
/// `None`: the app was already running.
pub async fn serve(
    command: &str,
    base_url: &str,
    timeout: Duration,
    cwd: &Path,
    log: &Path,
) -> Result<Option<Service>, ServeError> {
    let address = address(base_url)?;
    if accepts(&address).await {
        tracing::info!(%address, "the app already listens; not starting `serve`");
        return Ok(None);
    }
    let mut service = Service::spawn(ServiceSpec {
        argv: vec!["sh".to_owned(), "-c".to_owned(), command.to_owned()],
        cwd: cwd.to_path_buf(),
        env_policy: EnvPolicy::WithoutSecrets,
        stderr_log: log.to_path_buf(),
        max_log_bytes: 1024 * 1024,
    })
    .map_err(|error| ServeError::Start {
        command: command.to_owned(),
        message: error.to_string(),
    })?;
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if accepts(&address).await {
            return Ok(Some(service));
        }
        if service.exited().is_some() {
            return Err(ServeError::Ended {
                command: command.to_owned(),
                address,
                stderr: service.stderr_tail(),
            });
        }
        if tokio::time::Instant::now() >= deadline {
            let stderr = service.stderr_tail();
            service.stop(Duration::from_secs(2)).await;
            return Err(ServeError::Timeout {
                command: command.to_owned(),
                address,
                timeout,
                stderr,
            });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `host:port` of `base_url`.
fn address(base_url: &str) -> Result<String, ServeError> {
    let url = Url::parse(base_url).map_err(|_| ServeError::NoAddress(base_url.to_owned()))?;
    let host = url
        .host_str()
        .ok_or_else(|| ServeError::NoAddress(base_url.to_owned()))?;
    let port = url
        .port_or_known_default()
        .ok_or_else(|| ServeError::NoAddress(base_url.to_owned()))?;
    Ok(format!("{host}:{port}"))
}

async fn accepts(address: &str) -> bool {
    matches!(
        tokio::time::timeout(
            Duration::from_millis(500),
            tokio::net::TcpStream::connect(address)
        )
        .await,
        Ok(Ok(_))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_app_is_started_and_waited_for_then_stopped_with_its_group() {
        let dir = tempfile::tempdir().expect("tempdir");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
        let command = format!("sleep 0.3; exec python3 -m http.server {port} --bind 127.0.0.1");
        let url = format!("http://127.0.0.1:{port}/");
        let service = serve(
            &command,
            &url,
            Duration::from_secs(20),
            dir.path(),
            &dir.path().join("serve.log"),
        )
        .await
        .expect("served")
        .expect("started");
        assert!(accepts(&format!("127.0.0.1:{port}")).await);
        let again = serve(
            &command,
            &url,
            Duration::from_secs(1),
            dir.path(),
            &dir.path().join("serve2.log"),
        )
        .await
        .expect("already running");
        assert!(again.is_none(), "not started twice");
        service.stop(Duration::from_secs(2)).await;
        assert!(!accepts(&format!("127.0.0.1:{port}")).await, "stopped");
    }

    #[tokio::test]
    async fn a_command_that_dies_or_never_listens_says_so() {
        let dir = tempfile::tempdir().expect("tempdir");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
        let url = format!("http://127.0.0.1:{port}/");
        let log = dir.path().join("serve.log");
        let ended = serve(
            "echo no such app >&2; exit 3",
            &url,
            Duration::from_secs(5),
            dir.path(),
            &log,
        )
        .await
        .expect_err("ended");
        assert!(ended.to_string().contains("no such app"), "{ended}");
        let slow = serve(
            "sleep 30",
            &url,
            Duration::from_millis(300),
            dir.path(),
            &log,
        )
        .await
        .expect_err("timeout");
        assert!(matches!(slow, ServeError::Timeout { .. }), "{slow}");
    }
}
