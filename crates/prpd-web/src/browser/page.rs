//! What prpd asks of a tab: go to an address and wait for it to load, read the page
//! (`observe.js`: address, title, HTTP status, interactive elements with locator candidates),
//! its accessibility tree as an outline, a JPEG screenshot of a viewport of the size asked, the
//! value of any script (what a test or a benchmark reads of a page), and the actions a tester
//! takes: click, fill, scroll, wait. An action that may start a navigation (a click, a form
//! submit) waits for the new page to load before it returns.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::time::Duration;

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{BrowserError, Tab};

/// How long a page may take to load.
const LOAD_TIMEOUT: Duration = Duration::from_secs(20);
/// How long after a click prpd looks for the start of a navigation.
const NAVIGATION_START_WINDOW: Duration = Duration::from_millis(400);
/// The JPEG quality of screenshots (0–100).
const JPEG_QUALITY: u32 = 70;
/// The most lines of an accessibility outline.
const MAX_OUTLINE_LINES: usize = 1500;
/// The longest [`Tab::wait`].
pub const MAX_WAIT: Duration = Duration::from_secs(10);

/// The JavaScript that reads a page.
const OBSERVE_SCRIPT: &str = include_str!("observe.js");

/// What a page shows, as `observe.js` reads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageObservation {
    pub url: String,
    pub title: String,
    /// The HTTP status of the document (0 when the browser does not say).
    pub status: u16,
    pub elements: Vec<ObservedElement>,
}

/// One interactive element of a page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObservedElement {
    /// `button`, `link`, `input`, `textarea`, `select`, `form` or `other`.
    pub kind: String,
    pub tag: String,
    pub text: String,
    pub role: String,
    /// The accessible name, approximated (aria-label, label, text, placeholder, title, name).
    pub name: String,
    pub label: String,
    pub test_id: String,
    pub css: String,
    #[serde(default)]
    pub href: Option<String>,
    #[serde(default)]
    pub action: Option<String>,
    #[serde(default)]
    pub method: Option<String>,
    #[serde(default)]
    pub form_index: Option<i64>,
    #[serde(default)]
    pub input_type: Option<String>,
    #[serde(default)]
    pub field_name: Option<String>,
    #[serde(default)]
    pub required: Option<bool>,
    #[serde(default)]
    pub min: Option<String>,
    #[serde(default)]
    pub max: Option<String>,
    #[serde(default)]
    pub minlength: Option<String>,
    #[serde(default)]
    pub maxlength: Option<String>,
    #[serde(default)]
    pub pattern: Option<String>,
    #[serde(default)]
    pub placeholder: Option<String>,
}

impl Tab {
    /// Goes to `url` and waits for the page to load.
    pub async fn open(&mut self, url: &str) -> Result<(), BrowserError> {
        self.cdp.clear_events(Some(&self.session));
        let navigated = self.call("Page.navigate", json!({"url": url})).await?;
        if let Some(error) = navigated.get("errorText").and_then(Value::as_str) {
            return Err(BrowserError::Navigation {
                url: url.to_owned(),
                message: error.to_owned(),
            });
        }
        if navigated.get("loaderId").is_none() {
            // A same-document navigation (only the fragment changed): nothing loads.
            return Ok(());
        }
        self.wait_for_load(url).await
    }

    /// Reads the page: address, title, status and interactive elements.
    pub async fn observe(&mut self) -> Result<PageObservation, BrowserError> {
        let value = self.evaluate(OBSERVE_SCRIPT).await?;
        serde_json::from_value(value).map_err(|error| BrowserError::Shape(error.to_string()))
    }

    /// A JPEG of the viewport ([`super::VIEWPORT`] wide).
    pub async fn screenshot_jpeg(&mut self) -> Result<Vec<u8>, BrowserError> {
        let shot = self
            .call(
                "Page.captureScreenshot",
                json!({"format": "jpeg", "quality": JPEG_QUALITY}),
            )
            .await?;
        let data = shot["data"]
            .as_str()
            .ok_or_else(|| BrowserError::Shape("a screenshot without data".to_owned()))?;
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|error| {
                BrowserError::Shape(format!("a screenshot that is not base64: {error}"))
            })
    }

    /// The accessibility tree as an indented outline, `- role "name"` per node that is shown
    /// to assistive technology (ignored and nameless generic nodes are skipped, their children
    /// kept).
    pub async fn accessibility_outline(&mut self) -> Result<String, BrowserError> {
        let tree = self.call("Accessibility.getFullAXTree", json!({})).await?;
        let nodes = tree["nodes"].as_array().cloned().unwrap_or_default();
        Ok(outline(&nodes))
    }

    /// Clicks the first element matching the CSS `selector`; waits for a navigation it starts.
    pub async fn click(&mut self, selector: &str) -> Result<(), BrowserError> {
        self.cdp.clear_events(Some(&self.session));
        let script = format!(
            "(() => {{ const element = document.querySelector({}); if (!element) return false; \
             element.scrollIntoView({{block: 'center'}}); element.click(); return true; }})()",
            json!(selector)
        );
        self.act(selector, &script).await?;
        self.settle().await
    }

    /// Types `value` into the field matching `selector` (replacing what it held), as input
    /// and change events the page's scripts see.
    pub async fn fill(&mut self, selector: &str, value: &str) -> Result<(), BrowserError> {
        let script = format!(
            "(() => {{ const element = document.querySelector({}); if (!element) return false; \
             element.focus(); const prototype = Object.getPrototypeOf(element); \
             const setter = Object.getOwnPropertyDescriptor(prototype, 'value'); \
             if (setter && setter.set) setter.set.call(element, {}); else element.value = {1}; \
             element.dispatchEvent(new Event('input', {{bubbles: true}})); \
             element.dispatchEvent(new Event('change', {{bubbles: true}})); return true; }})()",
            json!(selector),
            json!(value)
        );
        self.act(selector, &script).await
    }

    /// Scrolls the page by `pixels` (negative: up).
    pub async fn scroll(&mut self, pixels: i64) -> Result<(), BrowserError> {
        self.evaluate(&format!("window.scrollBy(0, {pixels}); true"))
            .await
            .map(drop)
    }

    /// Waits `duration` (at most [`MAX_WAIT`]), or less when `text` is given and appears on the
    /// page first; `Ok(false)` when the text never appeared.
    pub async fn wait(
        &mut self,
        duration: Duration,
        text: Option<&str>,
    ) -> Result<bool, BrowserError> {
        let deadline = tokio::time::Instant::now() + duration.min(MAX_WAIT);
        loop {
            if let Some(text) = text {
                let script = format!(
                    "document.body ? document.body.innerText.includes({}) : false",
                    json!(text)
                );
                if self.evaluate(&script).await? == Value::Bool(true) {
                    return Ok(true);
                }
            }
            if tokio::time::Instant::now() >= deadline {
                return Ok(text.is_none());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Makes the viewport `width` × `height` CSS pixels (at start it is [`super::VIEWPORT`]),
    /// for a screenshot of another size.
    pub async fn set_viewport(&mut self, width: u32, height: u32) -> Result<(), BrowserError> {
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
        )
        .await?;
        Ok(())
    }

    /// The page's current address.
    pub async fn current_url(&mut self) -> Result<String, BrowserError> {
        let value = self.evaluate("location.href").await?;
        Ok(value.as_str().unwrap_or_default().to_owned())
    }

    /// Runs an action script that returns whether its element was found.
    async fn act(&mut self, selector: &str, script: &str) -> Result<(), BrowserError> {
        if self.evaluate(script).await? == Value::Bool(true) {
            return Ok(());
        }
        let url = self.current_url().await.unwrap_or_default();
        Err(BrowserError::NoElement {
            selector: selector.to_owned(),
            url,
        })
    }

    /// After an action: when a navigation starts soon, waits for its page to load.
    async fn settle(&mut self) -> Result<(), BrowserError> {
        let started = self
            .cdp
            .wait_event(
                Some(&self.session),
                "Page.frameStartedLoading",
                NAVIGATION_START_WINDOW,
            )
            .await?;
        if started.is_none() {
            return Ok(());
        }
        let url = self.current_url().await.unwrap_or_default();
        self.wait_for_load(&url).await
    }

    async fn wait_for_load(&mut self, url: &str) -> Result<(), BrowserError> {
        let loaded = self
            .cdp
            .wait_event(Some(&self.session), "Page.loadEventFired", LOAD_TIMEOUT)
            .await?;
        if loaded.is_none() {
            return Err(BrowserError::Navigation {
                url: url.to_owned(),
                message: format!(
                    "it did not finish loading within {}",
                    humantime::format_duration(LOAD_TIMEOUT)
                ),
            });
        }
        Ok(())
    }

    /// Evaluates the JavaScript `expression` in the page and returns its value as JSON
    /// (`Runtime.evaluate` with `returnByValue`; a promise is awaited). A value JSON cannot
    /// hold (a DOM node, a function) comes back as `null`; a thrown exception is
    /// [`BrowserError::Shape`].
    pub async fn evaluate(&mut self, expression: &str) -> Result<Value, BrowserError> {
        let mut answer = self
            .call(
                "Runtime.evaluate",
                json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
            )
            .await?;
        if let Some(exception) = answer.get("exceptionDetails") {
            let text = exception["exception"]["description"]
                .as_str()
                .or_else(|| exception["text"].as_str())
                .unwrap_or("an exception");
            return Err(BrowserError::Shape(format!(
                "the page's script failed: {text}"
            )));
        }
        Ok(answer["result"]
            .get_mut("value")
            .map_or(Value::Null, Value::take))
    }
}

/// The outline of an accessibility tree given as DevTools' flat node list.
fn outline(nodes: &[Value]) -> String {
    let by_id: HashMap<&str, &Value> = nodes
        .iter()
        .filter_map(|node| Some((node["nodeId"].as_str()?, node)))
        .collect();
    let mut text = String::new();
    let mut lines = 0;
    let Some(root) = nodes.first() else {
        return text;
    };
    // Each node with its depth and the name of the nearest shown ancestor (a text node that
    // repeats it adds nothing).
    let mut stack: Vec<(&Value, usize, &str)> = vec![(root, 0, "")];
    while let Some((node, depth, parent_name)) = stack.pop() {
        if lines == MAX_OUTLINE_LINES {
            text.push_str("- … (outline cut)\n");
            break;
        }
        let role = node["role"]["value"].as_str().unwrap_or_default();
        let name = node["name"]["value"].as_str().unwrap_or_default().trim();
        let ignored = node["ignored"].as_bool().unwrap_or(false);
        let hidden = ignored
            || role.is_empty()
            || matches!(role, "none" | "InlineTextBox" | "LineBreak")
            || (matches!(role, "generic" | "StaticText") && name.is_empty())
            || (role == "StaticText" && name == parent_name);
        let shown = !hidden;
        let (child_depth, child_parent) = if shown {
            let _ = if name.is_empty() {
                writeln!(text, "{}- {role}", "  ".repeat(depth))
            } else {
                writeln!(text, "{}- {role} {}", "  ".repeat(depth), json!(name))
            };
            lines += 1;
            (depth + 1, name)
        } else {
            (depth, parent_name)
        };
        let children = node["childIds"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        for child in children.iter().rev() {
            if let Some(child) = child.as_str().and_then(|id| by_id.get(id)) {
                stack.push((child, child_depth, child_parent));
            }
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_outline_keeps_named_nodes_and_skips_ignored_ones() {
        let nodes: Vec<Value> = serde_json::from_str(
            r#"[
              {"nodeId": "1", "role": {"value": "RootWebArea"}, "name": {"value": "Home"}, "childIds": ["2", "5"]},
              {"nodeId": "2", "ignored": true, "role": {"value": "generic"}, "childIds": ["3", "4"]},
              {"nodeId": "3", "role": {"value": "heading"}, "name": {"value": "Welcome"}, "childIds": ["6"]},
              {"nodeId": "4", "role": {"value": "link"}, "name": {"value": "Log in"}},
              {"nodeId": "5", "role": {"value": "generic"}, "name": {"value": ""}},
              {"nodeId": "6", "role": {"value": "StaticText"}, "name": {"value": "Welcome"}}
            ]"#,
        )
        .expect("json");
        assert_eq!(
            outline(&nodes),
            "- RootWebArea \"Home\"\n  - heading \"Welcome\"\n  - link \"Log in\"\n"
        );
    }
}
