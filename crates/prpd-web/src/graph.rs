//! The exploration graph of seed `001_…` (`ExplorationGraph`, `PageNode`, `ElementSummary`),
//! as serde types whose JSON names are the seed's (`snapshotRef`, `elementSummary`,
//! `locatorCandidates`), written to `plan-explore/graph.json`. prpd adds what a plan needs and
//! the seed leaves open: an element's field constraints (type, required, min/max, lengths,
//! pattern: the boundary values of a form case come from them), the HTTP status of a page, and
//! the links prpd saw but did not follow, with the reason.

use serde::{Deserialize, Serialize};

use crate::browser::{ObservedElement, PageObservation};

/// Everything an exploration saw.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExplorationGraph {
    pub pages: Vec<PageNode>,
    pub edges: Vec<NavigationEdge>,
    /// Addresses seen on a page and not explored, each once, with why.
    #[serde(default)]
    pub skipped: Vec<SkippedLink>,
}

/// One page reached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PageNode {
    /// A short name made from the page's path (`home`, `login`, `items-3`), unique in the graph.
    pub id: String,
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Links followed from the start page (0).
    pub depth: u32,
    /// The HTTP status of the document; 0 when the browser did not say.
    #[serde(default)]
    pub status: u16,
    /// The page's snapshot files, relative to `plan-explore/`, without extension
    /// (`snapshots/login`: `.jpg`, `.ax.txt`, `.json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_ref: Option<String>,
    pub element_summary: Vec<ElementSummary>,
}

/// One interactive element of a page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElementSummary {
    /// `<page id>/e<n>`.
    pub id: String,
    /// `button`, `link`, `input`, `textarea`, `select`, `form` or `other`.
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Ways to find the element again, the most robust first.
    pub locator_candidates: Vec<LocatorCandidate>,
    /// A link's target; a form's action.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// A form's method (`get`, `post`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// The element of the form a field or button belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<String>,
    /// A field's constraints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<FieldRules>,
}

/// What a form field accepts, as its HTML says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FieldRules {
    /// `text`, `email`, `password`, `number`, … (`textarea`, `select-one` for those).
    pub input_type: String,
    /// The name the form submits it under.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// The label a person reads.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub label: String,
    #[serde(default)]
    pub required: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
}

/// One way to find an element: `role` (`button "Sign in"`), `label`, `testId` or `css`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocatorCandidate {
    pub strategy: String,
    pub value: String,
}

/// A move from one page to another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NavigationEdge {
    /// The page it starts on.
    pub from: String,
    /// The page it reaches.
    pub to: String,
    /// `link`, `form`, or `action` (a click, a submit or an `open_url` of an agent).
    pub via: String,
    /// The element used, when one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub element: Option<String>,
}

/// An address seen and not explored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedLink {
    pub url: String,
    /// The page it was seen on.
    pub from: String,
    /// `external`, `excluded`, `not-included`, `not-http`, `not-a-page`, `depth`, `pages`, or `error: …`.
    pub reason: String,
}

impl ExplorationGraph {
    /// The page at `url`, if explored.
    pub fn page_at(&self, url: &str) -> Option<&PageNode> {
        self.pages.iter().find(|page| page.url == url)
    }

    /// The page with this id.
    pub fn page(&self, id: &str) -> Option<&PageNode> {
        self.pages.iter().find(|page| page.id == id)
    }

    /// Records an edge once.
    pub fn add_edge(&mut self, edge: NavigationEdge) {
        if !self.edges.contains(&edge) {
            self.edges.push(edge);
        }
    }

    /// Records a skipped address once (the first reason wins).
    pub fn skip(&mut self, url: &str, from: &str, reason: &str) {
        if self.skipped.iter().any(|skipped| skipped.url == url) {
            return;
        }
        self.skipped.push(SkippedLink {
            url: url.to_owned(),
            from: from.to_owned(),
            reason: reason.to_owned(),
        });
    }

    /// A page id for `url` not yet used: the words of its path (without a `.html`-like
    /// extension) and query joined with `-` (`home` for `/` and `/index.html`), with `-2`,
    /// `-3`, … when taken.
    pub fn new_page_id(&self, url: &url::Url) -> String {
        let path = url.path();
        let path = [".html", ".htm", ".php", ".aspx", ".jsp"]
            .iter()
            .find_map(|extension| path.strip_suffix(extension))
            .unwrap_or(path);
        let mut words: Vec<String> = path
            .split(|character: char| !character.is_ascii_alphanumeric())
            .filter(|word| !word.is_empty())
            .map(str::to_ascii_lowercase)
            .collect();
        if let Some(query) = url.query() {
            words.extend(
                query
                    .split(|character: char| !character.is_ascii_alphanumeric())
                    .filter(|word| !word.is_empty())
                    .map(str::to_ascii_lowercase),
            );
        }
        words.truncate(6);
        let base = if words.is_empty() || words == ["index"] {
            "home".to_owned()
        } else {
            words.join("-")
        };
        let mut id = base.clone();
        let mut number = 2;
        while self.page(&id).is_some() {
            id = format!("{base}-{number}");
            number += 1;
        }
        id
    }
}

/// The node of a page prpd observed.
pub fn page_node(
    id: &str,
    depth: u32,
    observation: &PageObservation,
    snapshot_ref: Option<String>,
) -> PageNode {
    let form_ids: Vec<(i64, String)> = observation
        .elements
        .iter()
        .enumerate()
        .filter(|(_, element)| element.kind == "form")
        .filter_map(|(index, element)| Some((element.form_index?, element_id(id, index))))
        .collect();
    let element_summary = observation
        .elements
        .iter()
        .enumerate()
        .map(|(index, element)| summary(id, index, element, &form_ids))
        .collect();
    PageNode {
        id: id.to_owned(),
        url: observation.url.clone(),
        title: Some(observation.title.clone()).filter(|title| !title.is_empty()),
        depth,
        status: observation.status,
        snapshot_ref,
        element_summary,
    }
}

fn element_id(page: &str, index: usize) -> String {
    format!("{page}/e{}", index + 1)
}

fn summary(
    page: &str,
    index: usize,
    element: &ObservedElement,
    form_ids: &[(i64, String)],
) -> ElementSummary {
    let non_empty = |value: &str| Some(value.to_owned()).filter(|value| !value.is_empty());
    let mut locators = Vec::new();
    if !element.role.is_empty() && !element.name.is_empty() {
        locators.push(LocatorCandidate {
            strategy: "role".to_owned(),
            value: format!("{} {}", element.role, serde_json::json!(element.name)),
        });
    }
    if !element.label.is_empty() {
        locators.push(LocatorCandidate {
            strategy: "label".to_owned(),
            value: element.label.clone(),
        });
    }
    if !element.test_id.is_empty() {
        locators.push(LocatorCandidate {
            strategy: "testId".to_owned(),
            value: element.test_id.clone(),
        });
    }
    locators.push(LocatorCandidate {
        strategy: "css".to_owned(),
        value: element.css.clone(),
    });
    let field = element.input_type.as_ref().map(|input_type| FieldRules {
        input_type: input_type.clone(),
        name: element.field_name.clone().unwrap_or_default(),
        label: if element.label.is_empty() {
            element.name.clone()
        } else {
            element.label.clone()
        },
        required: element.required.unwrap_or(false),
        min: element.min.clone(),
        max: element.max.clone(),
        min_length: element.minlength.clone(),
        max_length: element.maxlength.clone(),
        pattern: element.pattern.clone(),
    });
    ElementSummary {
        id: element_id(page, index),
        kind: element.kind.clone(),
        text: non_empty(&element.text).or_else(|| non_empty(&element.name)),
        role: non_empty(&element.role),
        locator_candidates: locators,
        target: element.href.clone().or_else(|| element.action.clone()),
        method: element.method.clone(),
        form: if element.kind == "form" {
            None
        } else {
            element.form_index.and_then(|form_index| {
                form_ids
                    .iter()
                    .find(|(index, _)| *index == form_index)
                    .map(|(_, id)| id.clone())
            })
        },
        field,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> url::Url {
        url::Url::parse(text).expect("url")
    }

    #[test]
    fn page_ids_come_from_the_path_and_stay_unique() {
        let mut graph = ExplorationGraph::default();
        assert_eq!(graph.new_page_id(&url("http://a.test/")), "home");
        assert_eq!(graph.new_page_id(&url("http://a.test/index.html")), "home");
        assert_eq!(
            graph.new_page_id(&url("http://a.test/Items/3?sort=up")),
            "items-3-sort-up"
        );
        assert_eq!(
            graph.new_page_id(&url("http://a.test/docs/one.html")),
            "docs-one"
        );
        graph.pages.push(PageNode {
            id: "login".to_owned(),
            url: "http://a.test/login".to_owned(),
            title: None,
            depth: 0,
            status: 200,
            snapshot_ref: None,
            element_summary: vec![],
        });
        assert_eq!(graph.new_page_id(&url("http://a.test/login/")), "login-2");
    }

    #[test]
    fn a_field_gets_its_form_its_rules_and_locators_most_robust_first() {
        let observation: PageObservation = serde_json::from_value(serde_json::json!({
            "url": "http://a.test/signup", "title": "Sign up", "status": 200,
            "elements": [
                {"kind": "form", "tag": "form", "text": "", "role": "form", "name": "", "label": "",
                 "testId": "", "css": "#signup", "action": "http://a.test/signup", "method": "post", "formIndex": 0},
                {"kind": "input", "tag": "input", "text": "", "role": "textbox", "name": "Age", "label": "Age",
                 "testId": "age", "css": "#signup > input", "formIndex": 0, "inputType": "number",
                 "fieldName": "age", "required": true, "min": "18", "max": "120"}
            ]
        }))
        .expect("observation");
        let page = page_node(
            "signup",
            1,
            &observation,
            Some("snapshots/signup".to_owned()),
        );
        assert_eq!(page.title.as_deref(), Some("Sign up"));
        let form = &page.element_summary[0];
        assert_eq!(
            (form.kind.as_str(), form.method.as_deref()),
            ("form", Some("post"))
        );
        let age = &page.element_summary[1];
        assert_eq!(age.id, "signup/e2");
        assert_eq!(age.form.as_deref(), Some("signup/e1"));
        let strategies: Vec<&str> = age
            .locator_candidates
            .iter()
            .map(|l| l.strategy.as_str())
            .collect();
        assert_eq!(strategies, ["role", "label", "testId", "css"]);
        assert_eq!(age.locator_candidates[0].value, "textbox \"Age\"");
        let rules = age.field.as_ref().expect("rules");
        assert!(rules.required);
        assert_eq!(
            (rules.min.as_deref(), rules.max.as_deref()),
            (Some("18"), Some("120"))
        );
        let json = serde_json::to_value(&page).expect("json");
        assert!(json.get("elementSummary").is_some() && json.get("snapshotRef").is_some());
        assert!(json["elementSummary"][1].get("locatorCandidates").is_some());
    }
}
