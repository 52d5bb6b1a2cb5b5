//! One tab of the browser, on a DevTools connection of its own. [`super::cdp`] sends one
//! command at a time and reads its answer before the next, so two tabs that load pages at the
//! same time cannot share a socket; a socket each keeps that simple. Every tab is a page of the
//! browser's default context, so all of them share its cookies: a walk that signed in with one
//! tab is signed in in the others. What a tab does is in [`super::page`].

use serde_json::{Value, json};

use super::cdp::{Cdp, CdpError};
use super::{BrowserError, COMMAND_TIMEOUT, VIEWPORT};

/// A tab prpd drives.
#[derive(Debug)]
pub struct Tab {
    pub(super) cdp: Cdp,
    /// The tab's DevTools session.
    pub(super) session: String,
}

impl Tab {
    /// Connects to the browser at `websocket` and attaches to its page `target_id` (a new page
    /// of the default context when `None`), with page events on and a [`VIEWPORT`]-sized
    /// viewport.
    pub(super) async fn connect(
        websocket: &str,
        target_id: Option<String>,
    ) -> Result<Tab, BrowserError> {
        let mut cdp = Cdp::connect(websocket, COMMAND_TIMEOUT).await?;
        let target_id = if let Some(id) = target_id {
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
        let mut tab = Tab { cdp, session };
        tab.call("Page.enable", json!({})).await?;
        tab.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": VIEWPORT.0, "height": VIEWPORT.1, "deviceScaleFactor": 1, "mobile": false}),
        )
        .await?;
        Ok(tab)
    }

    /// Sends `method` to the tab.
    pub(super) async fn call(&mut self, method: &str, params: Value) -> Result<Value, CdpError> {
        self.cdp.call(Some(&self.session), method, params).await
    }
}
