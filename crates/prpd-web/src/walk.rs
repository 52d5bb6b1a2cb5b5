//! prpd's own exploration, with no agent: breadth first from the start page over the links and
//! `GET` forms in scope, down to `max_depth` links and up to `max_pages` pages. A `POST` form is
//! recorded (its fields, its rules) but never submitted: with no one to judge what a submit
//! does, prpd does not create, change or delete anything in the app (the one exception is the
//! sign-in the user configures, `login.rs`, before the walk). A page that fails to load
//! is recorded as skipped with the browser's error; only the start page failing fails the walk,
//! and a start page that answers an HTTP error (a 404 for a mistyped address) fails it too: a
//! graph of an error page is no exploration of the app.
//! The depth and page limits end the walk normally; a guardrail ends it as truncated.
//!
//! Pages load in several tabs at once (`tab_pool.rs`, `[plan] tabs`), ahead of the walk, and
//! the walk records each when its turn in the queue comes, so the graph, the ids and the files
//! are those of a walk in one tab. A tab starts a page only when a walk in one tab would visit
//! it: the next address of the queue not yet visited or loading, while the pages recorded and
//! loading stay under `max_pages` and the snapshot guardrail allows one more. Every page started
//! is then visited in its turn (each adds one page at most, so the limit cannot cut it out), and
//! the tabs never load a page the walk would not, nor past a limit.

use std::collections::{HashMap, HashSet, VecDeque};
use std::num::NonZeroUsize;

use serde::Serialize;
use serde_json::json;
use url::Url;

use crate::browser::BrowserError;

use super::budget::GuardrailHit;
use super::exploration::{Arrival, Exploration, ExploreError};
use super::graph::{NavigationEdge, PageNode};
use super::tab_pool::TabPool;

/// An address to visit (or, when it was queued before, one more way to reach it): its depth
/// and how it was reached.
type Entry = (Url, u32, Option<Arrival>);

/// How a walk ended.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WalkOutcome {
    /// Addresses left unvisited because `max_pages` pages were explored.
    pub page_limit_reached: bool,
    /// Addresses left unvisited because they lie deeper than `max_depth`.
    pub depth_limit_reached: bool,
    /// The guardrail that cut the walk short (the summary names it as `truncatedBy`).
    #[serde(skip)]
    pub guardrail: Option<GuardrailHit>,
}

/// Walks the app from its start page, loading pages in up to `tabs` tabs at once; the graph is
/// in `exploration` whatever the outcome.
pub async fn walk(
    exploration: &mut Exploration,
    tabs: NonZeroUsize,
) -> Result<WalkOutcome, ExploreError> {
    let mut outcome = WalkOutcome::default();
    let start = exploration.scope.start().clone();
    let max_pages = exploration.config.max_pages as usize;
    let max_depth = exploration.config.max_depth;
    let mut queue: VecDeque<Entry> = VecDeque::from([(start.clone(), 0, None)]);
    let mut queued: HashSet<String> = HashSet::from([start.to_string()]);
    exploration.log(
        "walk",
        &json!({"start": start.as_str(), "maxDepth": max_depth, "maxPages": max_pages}),
    );
    // Each address queued, once visited: the page it showed (`None`: nothing explored).
    let mut visited: HashMap<String, Option<String>> = HashMap::new();
    let mut pool = TabPool::open(exploration, tabs.min(one_or_more(max_pages))).await?;
    // The entries at the front of the queue that `start_loads` has passed.
    let mut passed = 0;
    loop {
        pool.collect();
        start_loads(exploration, &queue, &mut passed, &visited, &mut pool);
        let Some((next, _, _)) = queue.front() else {
            break;
        };
        if pool.is_loading(next.as_str()) {
            pool.next().await;
            continue;
        }
        let Some((url, depth, arrival)) = queue.pop_front() else {
            break;
        };
        passed = passed.saturating_sub(1);
        if let Some(result) = visited.get(url.as_str()) {
            // A second way to reach an address already explored: an edge, not a visit.
            if let (Some(to), Some(arrival)) = (result, arrival) {
                link(exploration, arrival, to);
            }
            continue;
        }
        let from = arrival
            .as_ref()
            .map(|arrival| arrival.from.clone())
            .unwrap_or_default();
        let Some(read) = pool.take(url.as_str()) else {
            // Not started by `start_loads` at the head of the queue, where nothing is loading:
            // the pages recorded reach `max_pages`.
            outcome.page_limit_reached = true;
            exploration.graph.skip(url.as_str(), &from, "pages");
            visited.insert(url.to_string(), None);
            continue;
        };
        let visit = read.and_then(|read| exploration.record(depth, arrival, read));
        visited.insert(url.to_string(), visit.as_ref().ok().cloned().flatten());
        let id = match visit {
            Ok(Some(id)) => id,
            Ok(None) => continue,
            Err(ExploreError::Guardrail(hit)) => {
                exploration.log("guardrail", &json!(hit));
                outcome.guardrail = Some(hit);
                break;
            }
            Err(ExploreError::Browser(error)) if depth > 0 => {
                exploration
                    .graph
                    .skip(url.as_str(), &from, &format!("error: {error}"));
                exploration.log(
                    "error",
                    &json!({"url": url.as_str(), "error": error.to_string()}),
                );
                continue;
            }
            Err(error) => return Err(error),
        };
        let Some(page) = exploration.graph.page(&id) else {
            continue;
        };
        if depth == 0 {
            refuse_an_error_page(&url, page.status)?;
        }
        let here = Url::parse(&page.url).unwrap_or_else(|_| url.clone());
        for (target, via, element) in targets(page) {
            let arrival = Arrival {
                from: id.clone(),
                via,
                element: Some(element),
            };
            match exploration.scope.judge(&here, &target) {
                Err((skipped, reason)) => exploration.graph.skip(&skipped, &id, reason.as_str()),
                Ok(next) => {
                    if queued.contains(next.as_str()) {
                        // Queued (or explored) already: this entry only adds the edge.
                        queue.push_back((next, depth + 1, Some(arrival)));
                    } else if depth + 1 > max_depth {
                        outcome.depth_limit_reached = true;
                        exploration.graph.skip(next.as_str(), &id, "depth");
                    } else {
                        queued.insert(next.to_string());
                        queue.push_back((next, depth + 1, Some(arrival)));
                    }
                }
            }
        }
        exploration.save_graph()?;
    }
    exploration.save_graph()?;
    Ok(outcome)
}

/// What the walk follows from `page`: its links and `GET` forms, as (address, `link` or
/// `form`, element).
fn targets(page: &PageNode) -> Vec<(String, &'static str, String)> {
    page.element_summary
        .iter()
        .filter_map(|element| {
            let target = element.target.clone()?;
            match (element.kind.as_str(), element.method.as_deref()) {
                ("link", _) => Some((target, "link", element.id.clone())),
                ("form", Some("get")) => Some((target, "form", element.id.clone())),
                _ => None,
            }
        })
        .collect()
}

/// Starts loading, in the queue's order from the entry after the `passed` ones, every address
/// not yet visited or started, while a tab is free, the pages recorded and loading stay under
/// `max_pages`, and the snapshot guardrail allows one more (a refusal is kept as that page's
/// read, for its turn, and nothing starts after it).
fn start_loads(
    exploration: &mut Exploration,
    queue: &VecDeque<Entry>,
    passed: &mut usize,
    visited: &HashMap<String, Option<String>>,
    pool: &mut TabPool,
) {
    let max_pages = exploration.config.max_pages as usize;
    while let Some((url, _, _)) = queue.get(*passed) {
        if !visited.contains_key(url.as_str()) && !pool.is_ahead(url.as_str()) {
            if !pool.has_idle()
                || exploration.budget.hit.is_some()
                || exploration.graph.pages.len() + pool.ahead() >= max_pages
            {
                return;
            }
            match exploration.budget.take_snapshot() {
                Ok(()) => pool.start(url),
                Err(hit) => pool.refuse(url, hit),
            }
        }
        *passed += 1;
    }
}

/// `count`, or 1 for 0.
fn one_or_more(count: usize) -> NonZeroUsize {
    NonZeroUsize::new(count).unwrap_or(NonZeroUsize::MIN)
}

/// The start page must load: one that answered an HTTP error (a mistyped address's 404) is
/// no app to explore.
fn refuse_an_error_page(url: &Url, status: u16) -> Result<(), ExploreError> {
    if status < 400 {
        return Ok(());
    }
    Err(ExploreError::Browser(BrowserError::Navigation {
        url: url.to_string(),
        message: format!(
            "the start page answered HTTP {status}; give the address of a page that loads"
        ),
    }))
}

/// Records the edge of `arrival` to the explored page `to` (a page's link to itself is none).
fn link(exploration: &mut Exploration, arrival: Arrival, to: &str) {
    if arrival.from != to {
        exploration.graph.add_edge(NavigationEdge {
            from: arrival.from,
            to: to.to_owned(),
            via: arrival.via.to_owned(),
            element: arrival.element,
        });
    }
}
