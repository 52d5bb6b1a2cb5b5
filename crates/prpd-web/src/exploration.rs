//! One exploration of a running web app: the browser, the graph built so far, the guardrail
//! counters, and the files of `runs/<id>/plan-explore/` (`graph.json`, `snapshots/`,
//! `transcript.jsonl`). Both explorers use it: prpd's own breadth-first walk (`walk.rs`) and
//! an agent driving the planner tools of `prpd mcp`.
//!
//! Every page read is a snapshot: a JPEG of the viewport, the accessibility outline and the
//! page's metadata, under `snapshots/<page id>.*`. A visit has two halves: a tab reads the page
//! (`page_read.rs`), then the exploration records it (ids, files, graph), so the walk can
//! read pages in several tabs at once and still record them one by one in its own order.
//! `graph.json` is rewritten (atomically) after each page, so a run stopped at any point leaves
//! a graph of what it saw. The browser starts with the first page and is closed by
//! [`Exploration::close`], or killed when the exploration is dropped.
//!
//! Credentials: a value typed into a field may be a placeholder (`{{PASSWORD}}`), which prpd
//! fills from the variable of that name just before typing it — a variable `[plan.auth]`
//! names, or one whose name marks it as a secret (`*PASSWORD*`, `*TOKEN*`, `*_KEY`, …). The
//! transcript, the graph, the plan and every tool result carry the placeholder, never the value:
//! a value that comes back (a page echoing it, an agent writing it into a step) is replaced by
//! its placeholder before anything is kept or answered.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use url::Url;

use crate::browser::{Browser, BrowserError, Tab};
use prpd_base::files;
use prpd_base::process::is_secret_name;
use prpd_protocols::test_plan::PlanConfig;

use super::budget::{Budget, GuardrailHit};
use super::graph::{ExplorationGraph, NavigationEdge, page_node};
use super::page_read::{PageRead, Seen};
use super::scope::{PatternError, Scope};

/// The exploration folder in a run directory.
pub const EXPLORE_DIR: &str = "plan-explore";

/// The exploration failed.
#[derive(Debug, thiserror::Error)]
pub enum ExploreError {
    #[error(transparent)]
    Browser(#[from] BrowserError),
    #[error(transparent)]
    Guardrail(#[from] GuardrailHit),
    #[error(transparent)]
    Pattern(#[from] PatternError),
    #[error(transparent)]
    Login(#[from] super::login::LoginError),
    #[error("{url} is not a web address prpd can explore: {message}")]
    BadUrl { url: String, message: String },
    #[error("{url} is outside the exploration ({reason}); it must be on {origin}")]
    OutOfScope {
        url: String,
        reason: &'static str,
        origin: String,
    },
    #[error("failed to write {}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// How a page was reached.
#[derive(Debug, Clone)]
pub struct Arrival {
    /// The page it was reached from.
    pub from: String,
    /// `link`, `form` or `action`.
    pub via: &'static str,
    /// The element used.
    pub element: Option<String>,
}

/// One exploration's state and files.
#[derive(Debug)]
pub struct Exploration {
    dir: PathBuf,
    pub run_id: String,
    pub config: PlanConfig,
    pub scope: Scope,
    pub graph: ExplorationGraph,
    pub budget: Budget,
    browser: Option<Browser>,
    /// The tab an agent (and the sign-in) drives, opened on first use.
    tab: Option<Tab>,
    /// The page the tab shows, when it is one of the graph's.
    current: Option<String>,
    /// Placeholders and the values they stand for.
    secrets: Vec<(String, String)>,
    step: u64,
}

/// The placeholders prpd fills, with their values, longest value first: the `[plan.auth]`
/// variables (3 characters or more) and every secret-named variable (8 or more, as
/// `base::process` redacts agents' output).
fn secrets(config: &PlanConfig) -> Vec<(String, String)> {
    let auth_names: Vec<&String> = config
        .auth
        .iter()
        .flat_map(|auth| [&auth.username_var, &auth.password_var])
        .flatten()
        .collect();
    let mut secrets: Vec<(String, String)> = std::env::vars()
        .filter(|(name, value)| {
            let shortest = if auth_names.contains(&name) {
                3
            } else if is_secret_name(name) {
                8
            } else {
                return false;
            };
            value.len() >= shortest
        })
        .map(|(name, value)| (format!("{{{{{name}}}}}"), value))
        .collect();
    secrets.sort_by_key(|(_, value)| std::cmp::Reverse(value.len()));
    secrets
}

impl Exploration {
    /// An exploration of `config.base_url` writing into `<run_dir>/plan-explore/`.
    pub fn new(
        run_dir: &Path,
        run_id: &str,
        config: PlanConfig,
    ) -> Result<Exploration, ExploreError> {
        let start = Url::parse(&config.base_url).map_err(|error| ExploreError::BadUrl {
            url: config.base_url.clone(),
            message: error.to_string(),
        })?;
        if !matches!(start.scheme(), "http" | "https") {
            return Err(ExploreError::BadUrl {
                url: config.base_url.clone(),
                message: "only http and https addresses are explored".to_owned(),
            });
        }
        let scope = Scope::new(&start, &config.include_patterns, &config.exclude_patterns)?;
        let dir = run_dir.join(EXPLORE_DIR);
        let snapshots = dir.join("snapshots");
        std::fs::create_dir_all(&snapshots).map_err(|source| ExploreError::Io {
            path: snapshots,
            source,
        })?;
        let secrets = secrets(&config);
        Ok(Exploration {
            dir,
            run_id: run_id.to_owned(),
            budget: Budget::new(config.guardrails.clone()),
            config,
            scope,
            graph: ExplorationGraph::default(),
            browser: None,
            tab: None,
            current: None,
            secrets,
            step: 0,
        })
    }

    /// An exploration of `run_dir` that an earlier process began: its `graph.json` read back
    /// (an exploration with no graph yet starts empty), the same files appended to.
    pub fn resume(
        run_dir: &Path,
        run_id: &str,
        config: PlanConfig,
    ) -> Result<Exploration, ExploreError> {
        let mut exploration = Exploration::new(run_dir, run_id, config)?;
        exploration.reload_graph();
        Ok(exploration)
    }

    /// Reads `graph.json` back (another process — a `prpd mcp` an agent started — may have
    /// explored further); the graph in memory stays when the file is missing or damaged.
    pub fn reload_graph(&mut self) {
        let path = self.dir.join("graph.json");
        match std::fs::read_to_string(&path).map(|text| serde_json::from_str(&text)) {
            Ok(Ok(graph)) => self.graph = graph,
            Ok(Err(error)) => {
                tracing::warn!(%error, path = %path.display(), "graph.json does not parse; kept the graph in memory");
            }
            Err(_) => {}
        }
    }

    /// `plan-explore/`.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The browser's process group, while it runs.
    pub fn browser_group(&self) -> Option<i32> {
        self.browser.as_ref()?.process_group()
    }

    /// The page the tab shows, when it is one of the graph's.
    pub fn current_page(&self) -> Option<&str> {
        self.current.as_deref()
    }

    /// Opens `url` (which must be in scope) and records its page; `None` when it redirected
    /// out of scope. A page already in the graph is read again and updated.
    pub async fn visit(
        &mut self,
        url: &Url,
        depth: u32,
        arrival: Option<Arrival>,
    ) -> Result<Option<String>, ExploreError> {
        self.budget.take_snapshot()?;
        self.tab().await?.open(url.as_str()).await?;
        self.record_current(depth, arrival).await
    }

    /// Reads the page the browser shows after an action and records it.
    pub async fn observe_current(
        &mut self,
        arrival: Option<Arrival>,
    ) -> Result<Option<String>, ExploreError> {
        self.budget.take_snapshot()?;
        let depth = self
            .current
            .as_deref()
            .and_then(|id| self.graph.page(id))
            .map_or(0, |page| page.depth + u32::from(arrival.is_some()));
        self.record_current(depth, arrival).await
    }

    /// The exploration's tab (the browser started, the tab opened, on first use).
    pub async fn tab(&mut self) -> Result<&mut Tab, ExploreError> {
        if self.tab.is_none() {
            let tab = self.browser().await?.new_tab().await?;
            self.tab = Some(tab);
        }
        self.tab
            .as_mut()
            .ok_or_else(|| ExploreError::Browser(BrowserError::Shape("the tab is gone".to_owned())))
    }

    /// A tab for the caller to keep: the exploration's own, which then shows none of its pages,
    /// else a new one of the same browser (whose cookies it shares).
    pub(crate) async fn take_tab(&mut self) -> Result<Tab, ExploreError> {
        self.current = None;
        match self.tab.take() {
            Some(tab) => Ok(tab),
            None => Ok(self.browser().await?.new_tab().await?),
        }
    }

    /// Another tab of the exploration's browser (started if need be), which the future opens.
    pub(crate) async fn tab_to_open(
        &mut self,
    ) -> Result<impl Future<Output = Result<Tab, BrowserError>> + Send + 'static, ExploreError>
    {
        Ok(self.browser().await?.new_tab())
    }

    /// The browser, started on first use.
    async fn browser(&mut self) -> Result<&mut Browser, ExploreError> {
        if self.browser.is_none() {
            let log = self.dir.join("browser.log");
            let browser = Browser::start(&log).await?;
            tracing::debug!(group = ?browser.process_group(), "started the browser");
            self.browser = Some(browser);
        }
        self.browser.as_mut().ok_or_else(|| {
            ExploreError::Browser(BrowserError::Shape("the browser is gone".to_owned()))
        })
    }

    /// `text` with every credential value replaced by its placeholder.
    pub fn redact(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for (placeholder, value) in &self.secrets {
            text = text.replace(value.as_str(), placeholder);
        }
        text
    }

    /// `value` with every credential value in its strings replaced by its placeholder.
    pub fn redact_json(&self, value: &mut Value) {
        match value {
            Value::String(text) => *text = self.redact(text),
            Value::Array(items) => items.iter_mut().for_each(|item| self.redact_json(item)),
            Value::Object(fields) => fields.values_mut().for_each(|item| self.redact_json(item)),
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    /// `text` with every placeholder of a set credential filled in (only ever typed, never
    /// kept).
    pub fn fill_placeholders(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for (placeholder, value) in &self.secrets {
            text = text.replace(placeholder.as_str(), value);
        }
        text
    }

    /// Appends one step to `transcript.jsonl` (credentials redacted).
    pub fn log(&mut self, action: &str, detail: &Value) {
        self.step += 1;
        let line = json!({
            "step": self.step,
            "at": humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            "action": action,
            "detail": detail,
        });
        let path = self.dir.join("transcript.jsonl");
        if let Err(error) = files::append(&path, &format!("{}\n", self.redact(&line.to_string()))) {
            tracing::warn!(%error, path = %path.display(), "cannot append to the transcript");
        }
    }

    /// Writes `graph.json` (atomically).
    pub fn save_graph(&self) -> Result<(), ExploreError> {
        let path = self.dir.join("graph.json");
        let text = serde_json::to_string_pretty(&self.graph).unwrap_or_default();
        files::write_atomically(&path, self.redact(&text).as_bytes())
            .map_err(|source| ExploreError::Io { path, source })
    }

    /// Closes the browser (if it was started).
    pub async fn close(&mut self) {
        self.tab = None;
        if let Some(browser) = self.browser.take() {
            browser.close().await;
        }
    }

    /// Reads and records the page the exploration's tab shows; it is the current page then.
    async fn record_current(
        &mut self,
        depth: u32,
        arrival: Option<Arrival>,
    ) -> Result<Option<String>, ExploreError> {
        let scope = self.scope.clone();
        let read = PageRead::of(self.tab().await?, &scope).await?;
        let recorded = self.record(depth, arrival, read)?;
        self.current.clone_from(&recorded);
        self.save_graph()?;
        Ok(recorded)
    }

    /// Records a page a tab read (`depth` links from the start, reached by `arrival`): its
    /// snapshot files, its node and edge in the graph (which the caller saves); its id, or
    /// `None` when it was out of scope (a skipped address then). A page already in the graph
    /// is updated.
    pub(crate) fn record(
        &mut self,
        depth: u32,
        arrival: Option<Arrival>,
        read: PageRead,
    ) -> Result<Option<String>, ExploreError> {
        let from = arrival
            .as_ref()
            .map_or("", |arrival| arrival.from.as_str())
            .to_owned();
        let PageRead { observation, seen } = read;
        let (url, shot, outline) = match seen {
            Seen::InScope { url, jpeg, outline } => (url, jpeg, outline),
            Seen::OutOfScope { url, reason } => {
                self.graph.skip(&url, &from, reason.as_str());
                self.log(
                    "left-scope",
                    &json!({"url": url, "reason": reason.as_str()}),
                );
                return Ok(None);
            }
        };
        let existing = self
            .graph
            .page_at(url.as_str())
            .map(|page| (page.id.clone(), page.depth));
        let (id, depth) = existing.unwrap_or_else(|| (self.graph.new_page_id(&url), depth));
        let snapshot_ref = format!("snapshots/{id}");
        let mut observation = observation;
        observation.url = url.to_string();
        let node = page_node(&id, depth, &observation, Some(snapshot_ref.clone()));
        let mut metadata = json!({
            "id": id, "url": node.url, "title": node.title, "status": node.status, "depth": depth,
            "capturedAt": humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            "elements": node.element_summary.len(),
            "screenshot": format!("{snapshot_ref}.jpg"), "accessibility": format!("{snapshot_ref}.ax.txt"),
        });
        self.redact_json(&mut metadata);
        let base = self.dir.join(&snapshot_ref);
        for (extension, bytes) in [
            ("jpg", shot),
            ("ax.txt", self.redact(&outline).into_bytes()),
            (
                "json",
                serde_json::to_vec_pretty(&metadata).unwrap_or_default(),
            ),
        ] {
            let path = base.with_extension(extension);
            files::write_atomically(&path, &bytes)
                .map_err(|source| ExploreError::Io { path, source })?;
        }
        match self.graph.pages.iter_mut().find(|page| page.id == id) {
            Some(page) => *page = node,
            None => self.graph.pages.push(node),
        }
        if let Some(arrival) = arrival.filter(|arrival| arrival.from != id) {
            self.graph.add_edge(NavigationEdge {
                from: arrival.from,
                to: id.clone(),
                via: arrival.via.to_owned(),
                element: arrival.element,
            });
        }
        self.log(
            "snapshot",
            &json!({"page": id, "url": url.as_str(), "depth": depth}),
        );
        Ok(Some(id))
    }
}
