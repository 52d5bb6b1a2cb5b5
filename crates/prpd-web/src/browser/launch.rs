//! Starting the headless Chromium prpd drives: which program (`PRPD_CHROMIUM`, else the first
//! of Debian's `chromium` and the usual names on `PATH`; nothing is ever downloaded), the flags
//! that keep it quiet and offline (no first-run, no sync, no component updates, no crash
//! reporter), a throw-away profile, and the DevTools address Chromium writes into the
//! profile's `DevToolsActivePort` once it listens on the port it chose itself.
//!
//! The child is a [`Service`]: it leads its own process group (renderers, the GPU and network
//! processes and the zygotes all stay in it) and that group is killed when the browser is
//! closed or dropped, so no Chromium process outlives the run on any path.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use prpd_base::process::{EnvPolicy, Missing, Service, ServiceSpec, find_program};

/// The names tried on `PATH`, in order, when `PRPD_CHROMIUM` is not set.
const CANDIDATES: [&str; 4] = [
    "chromium",
    "chromium-browser",
    "google-chrome-stable",
    "google-chrome",
];

/// The environment variable that names the browser program.
pub const PROGRAM_VARIABLE: &str = "PRPD_CHROMIUM";

/// The viewport: screenshots are this wide (the seed's ≈ 1024 px).
pub const VIEWPORT: (u32, u32) = (1024, 768);

/// The browser could not be started.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error(
        "no Chromium found: set {PROGRAM_VARIABLE} to its path, or install Debian's `chromium` \
         package (`apt-get install chromium`); tried {}",
        CANDIDATES.join(", ")
    )]
    NotFound,
    #[error("{PROGRAM_VARIABLE}={}: {message}", program.display())]
    BadProgram { program: PathBuf, message: String },
    #[error("cannot create the browser's profile folder: {0}")]
    Profile(std::io::Error),
    #[error("cannot start the browser: {0}")]
    Spawn(String),
    #[error(
        "the browser did not open its DevTools port within {}; its last words:\n{stderr}",
        humantime::format_duration(*.timeout)
    )]
    NoPort { timeout: Duration, stderr: String },
}

/// A started Chromium: its process (group) and the WebSocket URL of its DevTools.
#[derive(Debug)]
pub struct Launched {
    pub service: Service,
    pub websocket: String,
    /// The profile folder; removed when this is dropped (after the process is gone).
    pub profile: tempfile::TempDir,
}

/// The browser program: `PRPD_CHROMIUM` when set, else the first candidate on `PATH`.
pub fn program(cwd: &Path) -> Result<PathBuf, LaunchError> {
    if let Some(chosen) = std::env::var_os(PROGRAM_VARIABLE).filter(|value| !value.is_empty()) {
        let chosen = PathBuf::from(chosen);
        return find_program(
            &chosen.to_string_lossy(),
            cwd,
            std::env::var_os("PATH").as_deref(),
        )
        .map_err(|missing| LaunchError::BadProgram {
            program: chosen,
            message: match missing {
                Missing::NotFound => "no such program".to_owned(),
                Missing::NotExecutable(file) => {
                    format!("{} is not an executable file", file.display())
                }
            },
        });
    }
    let path: Option<OsString> = std::env::var_os("PATH");
    CANDIDATES
        .iter()
        .find_map(|name| find_program(name, cwd, path.as_deref()).ok())
        .ok_or(LaunchError::NotFound)
}

/// Starts the browser, its stderr to `stderr_log`, and waits up to `timeout` for its DevTools.
pub async fn launch(stderr_log: &Path, timeout: Duration) -> Result<Launched, LaunchError> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let program = program(&cwd)?;
    let profile = tempfile::Builder::new()
        .prefix("prpd-chromium-")
        .tempdir()
        .map_err(LaunchError::Profile)?;
    let mut argv = vec![program.to_string_lossy().into_owned()];
    argv.extend(flags(profile.path()));
    argv.push("about:blank".to_owned());
    let mut service = Service::spawn(ServiceSpec {
        argv,
        cwd: profile.path().to_path_buf(),
        env_policy: EnvPolicy::WithoutSecrets,
        stderr_log: stderr_log.to_path_buf(),
        max_log_bytes: 256 * 1024,
    })
    .map_err(|error| LaunchError::Spawn(error.to_string()))?;
    let port_file = profile.path().join("DevToolsActivePort");
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if let Some(websocket) = read_port_file(&port_file) {
            return Ok(Launched {
                service,
                websocket,
                profile,
            });
        }
        if service.exited().is_some() || tokio::time::Instant::now() >= deadline {
            let stderr = service.stderr_tail();
            service.stop(Duration::from_secs(1)).await;
            return Err(LaunchError::NoPort { timeout, stderr });
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Chromium's flags: headless, offline apart from the pages asked for, a fixed viewport.
fn flags(profile: &Path) -> Vec<String> {
    let mut flags: Vec<String> = [
        "--headless",
        // prpd often runs as root in a container, where Chromium's sandbox cannot start.
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-extensions",
        "--disable-component-update",
        "--disable-background-networking",
        "--disable-sync",
        "--disable-default-apps",
        // The walk's tabs load pages at the same time: none of them is a background tab to slow.
        "--disable-background-timer-throttling",
        "--disable-backgrounding-occluded-windows",
        "--disable-renderer-backgrounding",
        "--disable-domain-reliability",
        "--disable-crash-reporter",
        "--disable-breakpad",
        "--no-pings",
        "--metrics-recording-only",
        "--mute-audio",
        "--hide-scrollbars",
        "--password-store=basic",
        "--remote-debugging-address=127.0.0.1",
        "--remote-debugging-port=0",
    ]
    .iter()
    .map(|flag| (*flag).to_owned())
    .collect();
    flags.push(format!("--window-size={},{}", VIEWPORT.0, VIEWPORT.1));
    flags.push(format!("--user-data-dir={}", profile.display()));
    flags
}

/// `ws://127.0.0.1:PORT/devtools/browser/ID` from the two lines of `DevToolsActivePort`, once
/// both are written.
fn read_port_file(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut lines = text.lines();
    let port: u16 = lines.next()?.trim().parse().ok()?;
    let path = lines.next()?.trim();
    path.starts_with("/devtools/browser/")
        .then(|| format!("ws://127.0.0.1:{port}{path}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_port_file_gives_the_websocket_once_complete() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("DevToolsActivePort");
        assert_eq!(read_port_file(&file), None);
        std::fs::write(&file, "43689\n").expect("write");
        assert_eq!(read_port_file(&file), None, "half written");
        std::fs::write(&file, "43689\n/devtools/browser/482d-99\n").expect("write");
        assert_eq!(
            read_port_file(&file).as_deref(),
            Some("ws://127.0.0.1:43689/devtools/browser/482d-99")
        );
    }

    #[test]
    fn the_flags_keep_the_browser_headless_offline_and_in_its_own_profile() {
        let flags = flags(Path::new("/tmp/profile"));
        for flag in [
            "--headless",
            "--disable-component-update",
            "--remote-debugging-port=0",
            "--window-size=1024,768",
            "--user-data-dir=/tmp/profile",
        ] {
            assert!(
                flags.iter().any(|given| given == flag),
                "{flag} in {flags:?}"
            );
        }
    }
}
