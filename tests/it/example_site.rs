//! `examples/web-site`, the README's example app, served for a test by Python's `http.server`
//! (what the README tells a user to run) on a free port of 127.0.0.1, stopped when dropped.

use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The example site's folder.
pub const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/web-site");

/// The site, running.
#[derive(Debug)]
pub struct ExampleSite {
    server: Child,
    port: u16,
}

impl ExampleSite {
    #[expect(
        clippy::disallowed_methods,
        reason = "the test starts the example app the way the README tells a user to"
    )]
    pub fn serve() -> ExampleSite {
        let port = free_port();
        let server = Command::new("python3")
            .args([
                "-m",
                "http.server",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--directory",
            ])
            .arg(Path::new(DIR))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 -m http.server (python3 is installed by .ci/run)");
        let site = ExampleSite { server, port };
        assert!(
            wait_until(Duration::from_secs(20), || TcpStream::connect((
                "127.0.0.1",
                port
            ))
            .is_ok()),
            "the example site did not start on port {port}"
        );
        site
    }

    /// `http://127.0.0.1:PORT/`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/", self.port)
    }
}

impl Drop for ExampleSite {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

/// A port nobody listens on right now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}

/// Polls `done` every 50 ms until it holds or `limit` passes.
pub fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    done()
}

/// The pids of the Chromium processes whose profile lies under `dir` (prpd's `TMPDIR` in a
/// test), read from `/proc/*/cmdline`.
pub fn chromium_under(dir: &Path) -> Vec<u32> {
    let needle = format!("--user-data-dir={}", dir.display());
    std::fs::read_dir("/proc")
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
                .filter(|pid| {
                    std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
                        String::from_utf8_lossy(&cmdline)
                            .replace('\0', " ")
                            .contains(&needle)
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}
