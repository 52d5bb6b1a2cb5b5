//! A headless Chromium that prpd drives over the DevTools protocol, for `prpd plan`: open a
//! page, read what is on it (elements, accessibility tree, a JPEG screenshot), and act on it
//! (click, fill, scroll, wait) the way a tester would.
//!
//! Theory of operation. [`launch`] starts the system's Chromium (never a downloaded one) in
//! its own process group with a throw-away profile and reads the DevTools address it writes;
//! [`cdp`] speaks the protocol over that WebSocket; a [`Tab`] (`tab.rs`) is one page of the
//! browser on a connection of its own, and [`page`] is what prpd asks of it. A [`Browser`]
//! opens tabs in its default context, so they share cookies: an agent drives one, prpd's own
//! walk loads pages in a few at once (`walk.rs`). [`Browser::close`] asks Chromium to quit and
//! then kills its group; dropping a `Browser` (an error, a panic, a cancelled future) kills
//! the group at once, so no Chromium process outlives the run on any path.

mod cdp;
mod launch;
mod page;
mod tab;

use std::path::Path;
use std::time::Duration;

use serde_json::json;

pub use cdp::CdpError;
pub use launch::{LaunchError, PROGRAM_VARIABLE, VIEWPORT, program};
pub use page::{MAX_WAIT, ObservedElement, PageObservation};
pub use tab::Tab;

use cdp::Cdp;
use launch::Launched;

/// How long the browser may take to start.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one DevTools command may take.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);
/// How long Chromium may take to quit when asked before its group is killed (it usually takes
/// a few hundred milliseconds; the wait ends as soon as it has exited).
const QUIT_TIMEOUT: Duration = Duration::from_secs(5);

/// The browser failed.
#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    #[error(transparent)]
    Launch(#[from] LaunchError),
    #[error(transparent)]
    Cdp(#[from] CdpError),
    #[error("cannot open {url}: {message}")]
    Navigation { url: String, message: String },
    #[error("no element matches the selector `{selector}` on {url}")]
    NoElement { selector: String, url: String },
    #[error("the page answered in an unexpected shape: {0}")]
    Shape(String),
}

/// A running headless Chromium; its pages are [`Tab`]s.
#[derive(Debug)]
pub struct Browser {
    /// The browser's own DevTools connection (tabs have theirs), to close it.
    cdp: Cdp,
    websocket: String,
    /// The tab Chromium opened at start (`about:blank`), until [`Browser::new_tab`] takes it:
    /// the first tab needs no renderer of its own.
    blank: Option<String>,
    /// The process and its profile; `None` once closed.
    launched: Option<Launched>,
}

impl Browser {
    /// Starts Chromium (its stderr to `stderr_log`), with no tab of prpd's yet.
    pub async fn start(stderr_log: &Path) -> Result<Browser, BrowserError> {
        let launched = launch::launch(stderr_log, START_TIMEOUT).await?;
        let mut cdp = Cdp::connect(&launched.websocket, COMMAND_TIMEOUT).await?;
        let targets = cdp.call(None, "Target.getTargets", json!({})).await?;
        let blank = targets["targetInfos"]
            .as_array()
            .and_then(|infos| infos.iter().find(|info| info["type"] == "page"))
            .and_then(|info| info["targetId"].as_str())
            .map(str::to_owned);
        Ok(Browser {
            cdp,
            websocket: launched.websocket.clone(),
            blank,
            launched: Some(launched),
        })
    }

    /// Opens a tab (the one Chromium opened at start, the first time) in the browser's
    /// default context: it shares the cookies of every other tab. The future owns what it
    /// needs, so a tab may open while others work.
    pub fn new_tab(&mut self) -> impl Future<Output = Result<Tab, BrowserError>> + Send + 'static {
        let websocket = self.websocket.clone();
        let blank = self.blank.take();
        async move { Tab::connect(&websocket, blank).await }
    }

    /// The browser's process group (its pid), while it runs.
    pub fn process_group(&self) -> Option<i32> {
        self.launched.as_ref()?.service.group()
    }

    /// Asks Chromium to quit and waits (up to [`QUIT_TIMEOUT`]) for it to exit, then kills its
    /// process group and removes its profile. Only a Chromium that exits by itself removes the
    /// folder it made in `TMPDIR` (`org.chromium.Chromium.*`); one killed at once leaves it.
    pub async fn close(mut self) {
        let _ = tokio::time::timeout(
            Duration::from_secs(2),
            self.cdp.call(None, "Browser.close", json!({})),
        )
        .await;
        if let Some(mut launched) = self.launched.take() {
            let deadline = tokio::time::Instant::now() + QUIT_TIMEOUT;
            while launched.service.exited().is_none() && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            launched.service.stop(Duration::from_secs(2)).await;
            drop(launched.profile);
        }
    }
}
