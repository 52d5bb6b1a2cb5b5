//! The plan prpd writes with no agent: deterministic, from the exploration graph alone. A
//! navigation case per page (open it, check it loads, follow its links to the other explored
//! pages), a form case per form (fill each field with a valid value and submit, then the
//! boundary values its HTML rules imply: empty when required, below and above `min`/`max`, one
//! character short of `minlength` and past `maxlength`, a value against its `pattern`), and a
//! smoke flow along the main path (the start page, then the first link to a new page, as deep
//! as the graph goes). Credentials appear only as placeholders (`{{USERNAME}}`,
//! `{{PASSWORD}}`, or the names `[plan.auth]` gives). A page that answered an HTTP error (a
//! broken link's 404, a 500) is in the graph with its status, but no case expects it to open:
//! a plan that clicks into it and checks the error page's title would make a defect the
//! expected behaviour.

use std::collections::HashSet;

use prpd_protocols::test_plan::{
    CaseType, FlowPlan, PlanConfig, Priority, StepPlan, TestCasePlan, TestPlan,
};

use super::graph::{ElementSummary, ExplorationGraph, PageNode};

/// The most steps a navigation case lists.
const MAX_LINK_STEPS: usize = 10;

/// The baseline plan of `graph`.
pub fn baseline(
    graph: &ExplorationGraph,
    config: &PlanConfig,
    run_id: &str,
    generated_at: &str,
) -> TestPlan {
    let wanted = |case_type: CaseType| {
        config.test_types.is_empty() || config.test_types.contains(&case_type)
    };
    let placeholders = Placeholders::of(config);
    let mut cases = Vec::new();
    let path = main_path(graph);
    if wanted(CaseType::Functional) && !path.is_empty() {
        cases.push(smoke_case(graph, &path));
    }
    for page in graph.pages.iter().filter(|page| !answered_error(page)) {
        if wanted(CaseType::Navigation) {
            cases.push(navigation_case(graph, page));
        }
        if wanted(CaseType::Form) {
            let forms = page
                .element_summary
                .iter()
                .filter(|element| element.kind == "form");
            for (number, form) in forms.enumerate() {
                cases.push(form_case(page, form, number + 1, &placeholders));
            }
        }
    }
    let flows = if path.len() > 1 {
        vec![FlowPlan {
            id: "smoke".to_owned(),
            name: "Main path".to_owned(),
            description: Some("The start page, then the first link to a new page, as deep as the exploration went.".to_owned()),
            page_path: path.iter().map(|page| page.id.clone()).collect(),
        }]
    } else {
        Vec::new()
    };
    TestPlan {
        run_id: run_id.to_owned(),
        generated_at: generated_at.to_owned(),
        config_snapshot: Some(config.clone()),
        flows,
        cases,
    }
}

struct Placeholders {
    username: String,
    password: String,
}

impl Placeholders {
    fn of(config: &PlanConfig) -> Placeholders {
        let name = |chosen: Option<&String>, default: &str| {
            format!("{{{{{}}}}}", chosen.map_or(default, String::as_str))
        };
        let auth = config.auth.as_ref();
        Placeholders {
            username: name(auth.and_then(|auth| auth.username_var.as_ref()), "USERNAME"),
            password: name(auth.and_then(|auth| auth.password_var.as_ref()), "PASSWORD"),
        }
    }
}

fn case(
    id: String,
    name: String,
    case_type: CaseType,
    priority: Priority,
    pages: Vec<String>,
    steps: Vec<StepPlan>,
) -> TestCasePlan {
    let markdown_path = format!("{case_type}-{priority}-{id}.md");
    TestCasePlan {
        id,
        name,
        case_type,
        priority,
        related_page_ids: pages,
        markdown_path,
        preconditions: vec!["The app is running at the exploration's base URL.".to_owned()],
        steps,
    }
}

fn step(description: String, expected: Option<String>) -> StepPlan {
    StepPlan {
        description,
        expected_result: expected,
    }
}

/// The page answered an HTTP error status.
fn answered_error(page: &PageNode) -> bool {
    page.status >= 400
}

fn label(page: &PageNode) -> String {
    page.title.clone().unwrap_or_else(|| page.url.clone())
}

fn loads(page: &PageNode) -> String {
    match &page.title {
        Some(title) => format!("The page loads with the title \"{title}\""),
        None => "The page loads".to_owned(),
    }
}

/// How a step names an element: its best locator.
fn locator(element: &ElementSummary) -> String {
    element.locator_candidates.first().map_or_else(
        || element.id.clone(),
        |locator| match locator.strategy.as_str() {
            "role" => locator.value.clone(),
            strategy => format!("{strategy} `{}`", locator.value),
        },
    )
}

fn navigation_case(graph: &ExplorationGraph, page: &PageNode) -> TestCasePlan {
    let mut steps = vec![step(format!("Navigate to {}", page.url), Some(loads(page)))];
    let mut seen = HashSet::new();
    for edge in graph
        .edges
        .iter()
        .filter(|edge| edge.from == page.id && edge.via == "link")
    {
        if steps.len() > MAX_LINK_STEPS || !seen.insert(edge.to.clone()) {
            continue;
        }
        let (Some(target), Some(element)) = (
            graph
                .page(&edge.to)
                .filter(|target| !answered_error(target)),
            edge.element.as_ref().and_then(|id| {
                page.element_summary
                    .iter()
                    .find(|element| element.id == *id)
            }),
        ) else {
            continue;
        };
        steps.push(step(
            format!("From {}, click the {}", page.url, locator(element)),
            Some(format!("{} opens ({})", label(target), target.url)),
        ));
    }
    let priority = if page.depth == 0 {
        Priority::P0
    } else {
        Priority::P1
    };
    case(
        format!("nav-{}", page.id),
        format!("Navigate to {}", label(page)),
        CaseType::Navigation,
        priority,
        vec![page.id.clone()],
        steps,
    )
}

fn form_case(
    page: &PageNode,
    form: &ElementSummary,
    number: usize,
    placeholders: &Placeholders,
) -> TestCasePlan {
    let fields: Vec<&ElementSummary> = page
        .element_summary
        .iter()
        .filter(|element| element.form.as_deref() == Some(form.id.as_str()))
        .collect();
    let is_login = fields.iter().any(|field| {
        field
            .field
            .as_ref()
            .is_some_and(|rules| rules.input_type == "password")
    });
    let mut steps = vec![step(format!("Navigate to {}", page.url), Some(loads(page)))];
    for field in fields.iter().filter(|field| field.field.is_some()) {
        if let Some(value) = valid_value(field, is_login, placeholders) {
            steps.push(step(
                format!("Fill the {} with {value}", locator(field)),
                None,
            ));
        }
    }
    let submit = fields.iter().find(|field| field.kind == "button");
    let submit_text = submit.map_or_else(
        || "Submit the form".to_owned(),
        |button| format!("Click the {}", locator(button)),
    );
    steps.push(step(
        submit_text.clone(),
        Some(if is_login {
            "The user is signed in and leaves the login page".to_owned()
        } else {
            "The form is accepted and no field shows an error".to_owned()
        }),
    ));
    for field in &fields {
        for (value, why) in boundary_values(field) {
            steps.push(step(
                format!(
                    "Reload {}, fill the {} with {value}, keep the other fields valid, and {}",
                    page.url,
                    locator(field),
                    lower_first(&submit_text)
                ),
                Some(format!(
                    "The form is refused ({why}) and says which field is wrong"
                )),
            ));
        }
    }
    let (name, priority) = if is_login {
        (format!("Sign in on {}", label(page)), Priority::P0)
    } else {
        (
            format!("Submit form {number} on {}", label(page)),
            Priority::P1,
        )
    };
    let mut planned = case(
        format!("form-{}-{number}", page.id),
        name,
        CaseType::Form,
        priority,
        vec![page.id.clone()],
        steps,
    );
    if is_login {
        planned.preconditions.push(format!(
            "A valid account: {} / {}",
            placeholders.username, placeholders.password
        ));
    }
    planned
}

fn lower_first(text: &str) -> String {
    let mut characters = text.chars();
    characters
        .next()
        .map(|first| first.to_lowercase().chain(characters).collect())
        .unwrap_or_default()
}

/// A value the field accepts (quoted), or `None` for fields with nothing to type.
fn valid_value(
    field: &ElementSummary,
    is_login: bool,
    placeholders: &Placeholders,
) -> Option<String> {
    let rules = field.field.as_ref()?;
    let quoted = |value: &str| format!("\"{value}\"");
    let value = match rules.input_type.as_str() {
        "password" => placeholders.password.clone(),
        "email" | "text" if is_login => placeholders.username.clone(),
        "email" => quoted("user@example.test"),
        "number" | "range" => quoted(rules.min.as_deref().unwrap_or("1")),
        "url" => quoted("https://example.test/"),
        "tel" => quoted("5550100"),
        "date" => quoted("2025-01-15"),
        "checkbox" | "radio" => "a check (ticked)".to_owned(),
        "select-one" | "select-multiple" => "its first option".to_owned(),
        "file" | "submit" | "button" | "reset" | "image" => return None,
        _ => {
            let least = rules
                .min_length
                .as_deref()
                .and_then(|n| n.parse::<usize>().ok())
                .unwrap_or(0);
            let most = rules
                .max_length
                .as_deref()
                .and_then(|n| n.parse::<usize>().ok())
                .unwrap_or(usize::MAX);
            let mut text = "Sample text".to_owned();
            while text.len() < least {
                text.push('x');
            }
            text.truncate(most.max(1));
            quoted(&text)
        }
    };
    Some(value)
}

/// The invalid values a field's rules imply, each with the rule it breaks.
fn boundary_values(field: &ElementSummary) -> Vec<(String, String)> {
    let Some(rules) = field.field.as_ref() else {
        return Vec::new();
    };
    let mut values = Vec::new();
    if rules.required {
        values.push((
            "nothing (empty)".to_owned(),
            "the field is required".to_owned(),
        ));
    }
    if let Some(min) = rules.min.as_deref().and_then(|min| min.parse::<i64>().ok()) {
        values.push((
            format!("\"{}\"", min - 1),
            format!("below the minimum {min}"),
        ));
    }
    if let Some(max) = rules.max.as_deref().and_then(|max| max.parse::<i64>().ok()) {
        values.push((
            format!("\"{}\"", max + 1),
            format!("above the maximum {max}"),
        ));
    }
    if let Some(least) = rules
        .min_length
        .as_deref()
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|n| *n > 1)
    {
        values.push((
            format!("{} characters", least - 1),
            format!("shorter than {least} characters"),
        ));
    }
    if let Some(most) = rules
        .max_length
        .as_deref()
        .and_then(|n| n.parse::<usize>().ok())
    {
        values.push((
            format!("{} characters", most + 1),
            format!("longer than {most} characters"),
        ));
    }
    if rules.input_type == "email" {
        values.push((
            "\"not-an-email\"".to_owned(),
            "not an email address".to_owned(),
        ));
    }
    if let Some(pattern) = &rules.pattern {
        values.push((
            "\"!!\"".to_owned(),
            format!("does not match the pattern `{pattern}`"),
        ));
    }
    values
}

/// The start page, then from each page the first link to a page not yet on the path.
fn main_path(graph: &ExplorationGraph) -> Vec<&PageNode> {
    let Some(start) = graph
        .pages
        .iter()
        .find(|page| page.depth == 0 && !answered_error(page))
    else {
        return Vec::new();
    };
    let mut path = vec![start];
    while let Some(current) = path.last() {
        let next = graph
            .edges
            .iter()
            .filter(|edge| edge.from == current.id && edge.via == "link")
            .filter_map(|edge| graph.page(&edge.to))
            .find(|page| {
                page.depth > current.depth
                    && !answered_error(page)
                    && !path.iter().any(|on| on.id == page.id)
            });
        match next {
            Some(page) => path.push(page),
            None => break,
        }
    }
    path
}

fn smoke_case(graph: &ExplorationGraph, path: &[&PageNode]) -> TestCasePlan {
    let mut steps = Vec::new();
    if let Some(start) = path.first() {
        steps.push(step(
            format!("Navigate to {}", start.url),
            Some(loads(start)),
        ));
    }
    for pair in path.windows(2) {
        let [from, to] = pair else { continue };
        let element = graph
            .edges
            .iter()
            .find(|edge| edge.from == from.id && edge.to == to.id)
            .and_then(|edge| edge.element.as_ref())
            .and_then(|id| {
                from.element_summary
                    .iter()
                    .find(|element| element.id == *id)
            });
        let action = element.map_or_else(
            || format!("Go to {}", to.url),
            |element| format!("Click the {}", locator(element)),
        );
        steps.push(step(action, Some(loads(to))));
    }
    case(
        "smoke-main-path".to_owned(),
        "Smoke: the main path".to_owned(),
        CaseType::Functional,
        Priority::P0,
        path.iter().map(|page| page.id.clone()).collect(),
        steps,
    )
}

#[cfg(test)]
mod tests {
    use super::super::graph::{LocatorCandidate, NavigationEdge};
    use super::*;

    fn page(id: &str, depth: u32, status: u16, links: &[&str]) -> PageNode {
        PageNode {
            id: id.to_owned(),
            url: format!("http://a.test/{id}"),
            title: Some(format!("Title of {id}")),
            depth,
            status,
            snapshot_ref: None,
            element_summary: links
                .iter()
                .enumerate()
                .map(|(index, to)| ElementSummary {
                    id: format!("{id}/e{}", index + 1),
                    kind: "link".to_owned(),
                    text: Some((*to).to_owned()),
                    role: Some("link".to_owned()),
                    locator_candidates: vec![LocatorCandidate {
                        strategy: "role".to_owned(),
                        value: format!("link \"{to}\""),
                    }],
                    target: Some(format!("http://a.test/{to}")),
                    method: None,
                    form: None,
                    field: None,
                })
                .collect(),
        }
    }

    #[test]
    fn a_page_that_answered_an_http_error_is_no_case_and_no_step() {
        let graph = ExplorationGraph {
            pages: vec![
                page("home", 0, 200, &["broken", "about"]),
                page("broken", 1, 404, &[]),
                page("about", 1, 200, &[]),
            ],
            edges: ["broken", "about"]
                .iter()
                .enumerate()
                .map(|(index, to)| NavigationEdge {
                    from: "home".to_owned(),
                    to: (*to).to_owned(),
                    via: "link".to_owned(),
                    element: Some(format!("home/e{}", index + 1)),
                })
                .collect(),
            skipped: Vec::new(),
        };
        let config =
            super::super::plan_config(&crate::config::PlanSection::default(), "http://a.test/home");
        let plan = baseline(&graph, &config, "run", "now");
        let ids: Vec<&str> = plan.cases.iter().map(|case| case.id.as_str()).collect();
        assert_eq!(ids, ["smoke-main-path", "nav-home", "nav-about"]);
        let text = serde_json::to_string(&plan.cases).expect("json");
        assert!(!text.contains("broken"), "{text}");
        assert_eq!(plan.flows[0].page_path, ["home", "about"]);
    }
}
