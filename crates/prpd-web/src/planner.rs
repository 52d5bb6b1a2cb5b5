//! The planner tools of seed `001_…` as one session an agent drives through `prpd mcp`:
//! `open_url`, `observe_current_page`, `list_known_pages`, `get_page`, the browser actions
//! `navigate`, `click`, `fill`, `scroll`, `wait`, then `propose_test_cases_for_page` and
//! `finalize_test_plan`. Each call is one agent turn and its result's size counts towards the
//! token budget; a guardrail hit refuses the call, writes `plan-summary.json` with the hit, and
//! refuses every later call the same way.
//!
//! The session starts with its first call: a run directory `.prp-session/runs/<plan-…>/`
//! under the server's root, the `[plan]` settings of the root's `prpd.toml` (the first
//! `open_url` gives the base URL when `[plan]` has none), and a browser started on first use.
//! Values typed into fields may be placeholders (`{{PASSWORD}}`): filled from the environment
//! when typed, and never echoed, logged or written.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use url::Url;

use crate::browser::MAX_WAIT;
use crate::config::PlanSection;
use prpd_base::paths::{SessionPaths, new_run_id};

use super::exploration::{Arrival, Exploration, ExploreError};
use super::{GuardrailHit, PlanRunError, finish, finish_agent_plan, plan_config};

/// The most elements a page view lists (the rest are counted).
const MAX_LISTED_ELEMENTS: usize = 60;
/// The most characters of accessibility outline a page view carries.
const MAX_OUTLINE_CHARS: usize = 4000;

/// One agent's planning session.
#[derive(Debug)]
pub struct PlannerSession {
    root: PathBuf,
    section: PlanSection,
    /// Started by the first call that needs it.
    exploration: Option<Exploration>,
    run_dir: Option<PathBuf>,
    /// Once a guardrail was hit, every call is refused with it.
    stopped: Option<GuardrailHit>,
}

impl PlannerSession {
    /// A session whose files go under `root`'s `.prp-session/`, with `[plan]` as `section`.
    pub fn new(root: &Path, section: PlanSection) -> PlannerSession {
        PlannerSession {
            root: root.to_path_buf(),
            section,
            exploration: None,
            run_dir: None,
            stopped: None,
        }
    }

    /// A session that continues the exploration of `run_dir` (`prpd plan --agent` started the
    /// agent that started this server: `PRPD_PLAN_RUN` names the run), its graph read back.
    pub fn attach(
        root: &Path,
        section: PlanSection,
        run_dir: &Path,
    ) -> Result<PlannerSession, String> {
        let run_id = run_dir
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .ok_or_else(|| format!("{} is not a run directory", run_dir.display()))?;
        let graph_file = run_dir.join(super::EXPLORE_DIR).join("graph.json");
        let graph: super::ExplorationGraph = std::fs::read_to_string(&graph_file)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .ok_or_else(|| format!("{} holds no exploration graph", graph_file.display()))?;
        let base_url = graph
            .pages
            .iter()
            .find(|page| page.depth == 0)
            .map(|page| page.url.clone())
            .or_else(|| section.base_url.clone())
            .ok_or_else(|| format!("{} has no start page", graph_file.display()))?;
        let config = plan_config(&section, &base_url);
        let exploration =
            Exploration::resume(run_dir, &run_id, config).map_err(|error| error.to_string())?;
        Ok(PlannerSession {
            root: root.to_path_buf(),
            section,
            exploration: Some(exploration),
            run_dir: Some(run_dir.to_path_buf()),
            stopped: None,
        })
    }

    /// The guardrail that stopped the session, if one did.
    pub fn stopped_by(&self) -> Option<&GuardrailHit> {
        self.stopped.as_ref()
    }

    /// The run directory, once the session started.
    pub fn run_dir(&self) -> Option<&Path> {
        self.run_dir.as_deref()
    }

    /// Answers one planner tool call: its JSON result, or `{error, message}`.
    pub async fn call(
        &mut self,
        tool: &str,
        arguments: &Map<String, Value>,
    ) -> Result<Value, Value> {
        if let Some(hit) = &self.stopped {
            return Err(guardrail_error(hit));
        }
        let exploration = self
            .exploration(tool, arguments)
            .map_err(|error| refusal("bad_request", &error))?;
        let turn = exploration.budget.take_turn();
        let result = match turn {
            Err(hit) => Err(ExploreError::Guardrail(hit)),
            Ok(()) => dispatch(exploration, tool, arguments).await,
        };
        let logged = match &result {
            Ok(_) => json!({"tool": tool, "arguments": arguments}),
            Err(error) => json!({"tool": tool, "arguments": arguments, "error": error.to_string()}),
        };
        exploration.log("tool", &logged);
        let answer = match result {
            Ok(value) => {
                let text = value.to_string();
                match exploration.budget.spend_tokens(&text) {
                    Ok(()) => {
                        return Ok(
                            serde_json::from_str(&exploration.redact(&text)).unwrap_or(value)
                        );
                    }
                    Err(hit) => Err(ExploreError::Guardrail(hit)),
                }
            }
            Err(error) => Err(error),
        };
        match answer {
            Err(ExploreError::Guardrail(hit)) => Err(self.stop(hit).await),
            Err(error) => Err(refusal(error_code(&error), &error.to_string())),
            Ok(value) => Ok(value),
        }
    }

    /// The agent's plan, written like prpd's own; the browser stays open for more calls.
    pub fn finalize(&mut self, arguments: &Map<String, Value>) -> Result<Value, Value> {
        if let Some(hit) = &self.stopped {
            return Err(guardrail_error(hit));
        }
        let (Some(exploration), Some(run_dir)) = (self.exploration.as_mut(), self.run_dir.clone())
        else {
            return Err(refusal(
                "bad_request",
                "nothing was explored yet: call open_url first",
            ));
        };
        if let Err(hit) = exploration.budget.take_turn() {
            return Err(guardrail_error(&hit));
        }
        exploration.log("tool", &json!({"tool": "finalize_test_plan", "cases": arguments.get("cases").and_then(Value::as_array).map_or(0, Vec::len)}));
        let redacted: Map<String, Value> = serde_json::from_str(
            &exploration.redact(&Value::Object(arguments.clone()).to_string()),
        )
        .unwrap_or_default();
        match finish_agent_plan(exploration, &redacted, &run_dir) {
            Ok((planned, warnings)) => Ok(json!({
                "ok": true,
                "runDir": run_dir.display().to_string(),
                "testPlan": run_dir.join("plan/test-plan.json").display().to_string(),
                "specs": planned.summary.specs,
                "summary": planned.summary,
                "warnings": warnings,
            })),
            Err(PlanRunError::Plan(error)) => Err(refusal("bad_plan", &error.to_string())),
            Err(error) => Err(refusal("write_failed", &error.to_string())),
        }
    }

    /// Closes the browser.
    pub async fn close(&mut self) {
        if let Some(exploration) = self.exploration.as_mut() {
            exploration.close().await;
        }
    }

    /// Records a guardrail hit: the summary (no plan), the browser closed.
    async fn stop(&mut self, hit: GuardrailHit) -> Value {
        if let (Some(exploration), Some(run_dir)) =
            (self.exploration.as_mut(), self.run_dir.as_ref())
        {
            exploration.log("guardrail", &json!(hit));
            exploration.close().await;
            let limits = super::WalkOutcome {
                guardrail: Some(hit.clone()),
                ..super::WalkOutcome::default()
            };
            if let Err(error) = finish(exploration, None, &limits, "agent", run_dir) {
                tracing::warn!(%error, "cannot write the plan summary");
            }
        }
        let error = guardrail_error(&hit);
        self.stopped = Some(hit);
        error
    }

    /// The exploration, started on the first call (`open_url`'s address is the base URL when
    /// `[plan]` gives none).
    fn exploration(
        &mut self,
        tool: &str,
        arguments: &Map<String, Value>,
    ) -> Result<&mut Exploration, String> {
        if self.exploration.is_none() {
            let base_url = match (
                &self.section.base_url,
                tool,
                arguments.get("url").and_then(Value::as_str),
            ) {
                (Some(base), _, _) => base.clone(),
                (None, "open_url" | "navigate", Some(url)) => {
                    let url = Url::parse(url)
                        .map_err(|error| format!("{url:?} is not an address: {error}"))?;
                    format!("{}/", url.origin().ascii_serialization())
                }
                _ => {
                    return Err("no app to explore yet: call open_url with the app's address first (or set base_url in [plan] of prpd.toml)".to_owned());
                }
            };
            let run_id = new_run_id("plan");
            let run_dir = SessionPaths::new(&self.root).run_dir(&run_id);
            let exploration =
                Exploration::new(&run_dir, &run_id, plan_config(&self.section, &base_url))
                    .map_err(|error| error.to_string())?;
            self.run_dir = Some(run_dir);
            self.exploration = Some(exploration);
        }
        self.exploration
            .as_mut()
            .ok_or_else(|| "the session is gone".to_owned())
    }
}

async fn dispatch(
    exploration: &mut Exploration,
    tool: &str,
    arguments: &Map<String, Value>,
) -> Result<Value, ExploreError> {
    let text = |key: &str| {
        arguments
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    match tool {
        "open_url" | "navigate" => {
            let url = in_scope(exploration, &text("url"))?;
            let arrival = (tool == "navigate")
                .then(|| exploration.current_page().map(str::to_owned))
                .flatten()
                .map(|from| Arrival {
                    from,
                    via: "action",
                    element: None,
                });
            let depth = arrival
                .as_ref()
                .and_then(|arrival| exploration.graph.page(&arrival.from))
                .map_or(0, |page| page.depth + 1);
            let id = exploration.visit(&url, depth, arrival).await?;
            Ok(page_view(exploration, id.as_deref()))
        }
        "observe_current_page" => {
            let id = exploration.observe_current(None).await?;
            Ok(page_view(exploration, id.as_deref()))
        }
        "list_known_pages" => Ok(
            json!({"pages": exploration.graph.pages.iter().map(|page| json!({
            "id": page.id, "url": page.url, "title": page.title, "depth": page.depth, "snapshotRef": page.snapshot_ref,
        })).collect::<Vec<_>>()}),
        ),
        "get_page" | "propose_test_cases_for_page" => {
            let id = text("pageId");
            if exploration.graph.page(&id).is_none() {
                return Ok(json!({"ok": false, "error": format!("Page not found: {id}")}));
            }
            let mut view = json!({"ok": true, "page": page_view(exploration, Some(&id))});
            if tool == "propose_test_cases_for_page" {
                view["notes"] = arguments.get("notes").cloned().unwrap_or(Value::Null);
                view["caseTypes"] = json!(exploration.config.test_types);
            }
            Ok(view)
        }
        "click" => {
            let (selector, element) = target(exploration, arguments)?;
            let from = exploration.current_page().map(str::to_owned);
            exploration.tab().await?.click(&selector).await?;
            let arrival = from.map(|from| Arrival {
                from,
                via: "action",
                element,
            });
            let id = exploration.observe_current(arrival).await?;
            Ok(page_view(exploration, id.as_deref()))
        }
        "fill" => {
            let (selector, _) = target(exploration, arguments)?;
            let value = exploration.fill_placeholders(&text("value"));
            exploration.tab().await?.fill(&selector, &value).await?;
            Ok(json!({"ok": true, "selector": selector, "value": text("value")}))
        }
        "scroll" => {
            let pixels = arguments
                .get("pixels")
                .and_then(Value::as_i64)
                .unwrap_or(600);
            exploration.tab().await?.scroll(pixels).await?;
            Ok(json!({"ok": true, "scrolledBy": pixels}))
        }
        "wait" => {
            let millis = arguments.get("ms").and_then(Value::as_u64).unwrap_or(1000);
            let duration = std::time::Duration::from_millis(millis).min(MAX_WAIT);
            let wanted = arguments.get("text").and_then(Value::as_str);
            let found = exploration.tab().await?.wait(duration, wanted).await?;
            Ok(
                json!({"ok": true, "waitedMs": duration.as_millis(), "found": wanted.map(|_| found)}),
            )
        }
        other => Err(ExploreError::BadUrl {
            url: other.to_owned(),
            message: "not a planner tool".to_owned(),
        }),
    }
}

/// `url` if the exploration may visit it.
fn in_scope(exploration: &Exploration, url: &str) -> Result<Url, ExploreError> {
    let start = exploration.scope.start().clone();
    exploration
        .scope
        .judge(&start, url)
        .map_err(|(url, reason)| ExploreError::OutOfScope {
            url,
            reason: reason.as_str(),
            origin: start.origin().ascii_serialization(),
        })
}

/// The CSS selector an action targets: `selector`, or the css locator of `element` (an id of
/// the current page's elements), with the element id when one was given.
fn target(
    exploration: &Exploration,
    arguments: &Map<String, Value>,
) -> Result<(String, Option<String>), ExploreError> {
    if let Some(selector) = arguments
        .get("selector")
        .and_then(Value::as_str)
        .filter(|selector| !selector.is_empty())
    {
        return Ok((selector.to_owned(), None));
    }
    let id = arguments
        .get("element")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let page = id
        .split('/')
        .next()
        .and_then(|page| exploration.graph.page(page));
    let css = page
        .and_then(|page| page.element_summary.iter().find(|element| element.id == id))
        .and_then(|element| {
            element
                .locator_candidates
                .iter()
                .find(|locator| locator.strategy == "css")
        })
        .map(|locator| locator.value.clone());
    match css {
        Some(css) if exploration.current_page() == page.map(|page| page.id.as_str()) => Ok((css, Some(id.to_owned()))),
        Some(_) => Err(ExploreError::BadUrl {
            url: id.to_owned(),
            message: "that element is not on the current page; open its page first".to_owned(),
        }),
        None => Err(ExploreError::BadUrl {
            url: id.to_owned(),
            message: "no such element: give `element` (an id such as login/e3 from a page view) or `selector` (CSS)".to_owned(),
        }),
    }
}

/// What an agent sees of a page.
fn page_view(exploration: &Exploration, id: Option<&str>) -> Value {
    let Some(page) = id.and_then(|id| exploration.graph.page(id)) else {
        return json!({"ok": false, "error": "the browser left the app's origin; nothing was recorded"});
    };
    let snapshot = page
        .snapshot_ref
        .as_ref()
        .map(|reference| exploration.dir().join(reference));
    let outline = snapshot
        .as_ref()
        .and_then(|base| std::fs::read_to_string(base.with_extension("ax.txt")).ok())
        .map(|text| text.chars().take(MAX_OUTLINE_CHARS).collect::<String>())
        .unwrap_or_default();
    let mut counts = Map::new();
    for element in &page.element_summary {
        let count = counts.entry(element.kind.clone()).or_insert(json!(0));
        *count = json!(count.as_u64().unwrap_or(0) + 1);
    }
    let elements: Vec<Value> = page
        .element_summary
        .iter()
        .take(MAX_LISTED_ELEMENTS)
        .map(|element| {
            json!({
                "id": element.id, "kind": element.kind, "text": element.text,
                "locator": element.locator_candidates.first().map(|locator| format!("{}: {}", locator.strategy, locator.value)),
                "target": element.target, "field": element.field,
            })
        })
        .collect();
    json!({
        "ok": true,
        "pageId": page.id, "url": page.url, "title": page.title, "status": page.status, "depth": page.depth,
        "snapshotRef": page.snapshot_ref,
        "screenshot": snapshot.map(|base| base.with_extension("jpg").display().to_string()),
        "elementCounts": counts,
        "elements": elements,
        "accessibility": outline,
    })
}

fn error_code(error: &ExploreError) -> &'static str {
    match error {
        ExploreError::OutOfScope { .. } => "out_of_scope",
        ExploreError::Browser(_) => "browser",
        ExploreError::BadUrl { .. } | ExploreError::Pattern(_) | ExploreError::Login(_) => {
            "bad_request"
        }
        ExploreError::Guardrail(_) => "guardrail",
        ExploreError::Io { .. } => "write_failed",
    }
}

fn refusal(code: &str, message: &str) -> Value {
    json!({"error": code, "message": message})
}

fn guardrail_error(hit: &GuardrailHit) -> Value {
    json!({
        "error": "guardrail",
        "guardrail": hit.guardrail,
        "limit": hit.limit,
        "count": hit.count,
        "message": format!("{hit}: the planning session is over; its summary is in plan/plan-summary.json"),
    })
}
