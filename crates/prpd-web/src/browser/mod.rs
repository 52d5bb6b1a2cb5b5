//! A headless Chromium that prpd drives over the DevTools protocol, for `prpd plan`: open a
//! page, read what is on it (elements, accessibility tree, a JPEG screenshot), and act on it
//! (click, fill, scroll, wait) the way a tester would.
//!
//! Theory of operation. [`launch`] starts the system's Chromium (never a downloaded one) in
//! its own process group with a throw-away profile and reads the DevTools address it writes;
//! [`cdp`] speaks the protocol over that WebSocket; [`page`] is what prpd asks of a page. A
//! [`Browser`] is one browser with one tab: exploration is sequential, and one tab keeps a
//! run's memory flat. [`Browser::close`] asks Chromium to quit and then kills its group;
//! dropping a `Browser` (an error, a panic, a cancelled future) kills the group at once, so no
//! Chromium process outlives the run on any path.

mod cdp;
mod launch;
mod page;

use std::path::Path;
use std::time::Duration;

use serde_json::json;

pub use cdp::CdpError;
pub use launch::{LaunchError, PROGRAM_VARIABLE, VIEWPORT, program};
pub use page::{MAX_WAIT, ObservedElement, PageObservation};

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

/// A running headless Chromium with one tab.
#[derive(Debug)]
pub struct Browser {
    cdp: Cdp,
    /// The tab's DevTools session.
    session: String,
    /// The process and its profile; `None` once closed.
    launched: Option<Launched>,
}

impl Browser {
    /// Starts Chromium (its stderr to `stderr_log`) and opens one blank tab.
    pub async fn start(stderr_log: &Path) -> Result<Browser, BrowserError> {
        let launched = launch::launch(stderr_log, START_TIMEOUT).await?;
        let mut cdp = Cdp::connect(&launched.websocket, COMMAND_TIMEOUT).await?;
        // The tab Chromium opened at start (`about:blank`), else a new one: one renderer only.
        let targets = cdp.call(None, "Target.getTargets", json!({})).await?;
        let opened = targets["targetInfos"]
            .as_array()
            .and_then(|infos| infos.iter().find(|info| info["type"] == "page"))
            .and_then(|info| info["targetId"].as_str())
            .map(str::to_owned);
        let target_id = if let Some(id) = opened {
            id
        } else {
            let target = cdp
                .call(None, "Target.createTarget", json!({"url": "about:blank"}))
                .await?;
            target["targetId"]
                .as_str()
                .ok_or_else(|| BrowserError::Shape(format!("no targetId in {target}")))?
                .to_owned()
        };
        let attached = cdp
            .call(
                None,
                "Target.attachToTarget",
                json!({"targetId": target_id, "flatten": true}),
            )
            .await?;
        let session = attached["sessionId"]
            .as_str()
            .ok_or_else(|| BrowserError::Shape(format!("no sessionId in {attached}")))?
            .to_owned();
        let mut browser = Browser {
            cdp,
            session,
            launched: Some(launched),
        };
        browser.call("Page.enable", json!({})).await?;
        browser
            .call(
                "Emulation.setDeviceMetricsOverride",
                json!({"width": VIEWPORT.0, "height": VIEWPORT.1, "deviceScaleFactor": 1, "mobile": false}),
            )
            .await?;
        Ok(browser)
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

    /// Sends `method` to the tab.
    async fn call(
        &mut self,
        method: &str,
        params: serde_json::Value,
    ) -> Result<serde_json::Value, CdpError> {
        self.cdp.call(Some(&self.session), method, params).await
    }
}
