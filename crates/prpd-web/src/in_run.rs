//! The web plan in the loop: which explored pages a PRP names, the part of RED's prompt that
//! hands RED the specs of those pages, and the QA report's table of which plan cases have a
//! test. Pure functions over the plan and the texts; the driver (`prpd-run/src/driver/web_plan.rs`)
//! makes the plan and keeps what these return in the run's record.
//!
//! A page is named when the PRP contains its path (`/signup`), the last word of its path as a
//! word (`signup`, at least 3 letters), or its title as a phrase (`Sign up`); the start page
//! only by its title. A case belongs to the named pages when one of its pages is named.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use prpd_protocols::test_plan::{PlannedCase, TestPlan, markdown, matches_test};

use super::graph::{ExplorationGraph, PageNode};

/// The most bytes of specs RED's prompt carries; the rest are named by path.
const MAX_PROMPT_SPEC_BYTES: usize = 16 * 1024;

/// A case of the run's web plan, as the record keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebCase {
    pub id: String,
    pub name: String,
    pub case_type: String,
    pub priority: String,
    pub pages: Vec<String>,
    /// Whether RED's prompt carried its spec (one of its pages is named by the PRP).
    pub given_to_red: bool,
}

/// The ids of the pages of `graph` that `prp_text` names, in the graph's order.
pub fn named_pages(graph: &ExplorationGraph, prp_text: &str) -> Vec<String> {
    let prp = prp_text.to_lowercase();
    graph
        .pages
        .iter()
        .filter(|page| is_named(page, &prp))
        .map(|page| page.id.clone())
        .collect()
}

fn is_named(page: &PageNode, prp: &str) -> bool {
    let title = page
        .title
        .as_deref()
        .unwrap_or_default()
        .trim()
        .to_lowercase();
    if title.len() >= 3 && contains_phrase(prp, &title) {
        return true;
    }
    let Ok(url) = url::Url::parse(&page.url) else {
        return false;
    };
    let path = url.path().trim_end_matches('/').to_lowercase();
    if path.is_empty() {
        return false;
    }
    let bare = [".html", ".htm", ".php"]
        .iter()
        .find_map(|extension| path.strip_suffix(extension))
        .unwrap_or(&path);
    if prp.contains(&path) || (bare.len() > 1 && prp.contains(bare)) {
        return true;
    }
    bare.rsplit('/')
        .next()
        .filter(|word| word.len() >= 3)
        .is_some_and(|word| contains_phrase(prp, word))
}

/// Whether `phrase` occurs in `text` with no letter or digit right before or after it.
fn contains_phrase(text: &str, phrase: &str) -> bool {
    text.match_indices(phrase).any(|(start, _)| {
        let before = text[..start].chars().next_back();
        let after = text[start + phrase.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// The cases of `plan`, marked when one of their pages is in `named`.
pub fn cases(plan: &TestPlan, named: &[String]) -> Vec<WebCase> {
    plan.cases
        .iter()
        .map(|case| WebCase {
            id: case.id.clone(),
            name: case.name.clone(),
            case_type: case.case_type.to_string(),
            priority: case.priority.to_string(),
            pages: case.related_page_ids.clone(),
            given_to_red: case
                .related_page_ids
                .iter()
                .any(|page| named.contains(page)),
        })
        .collect()
}

/// The part of RED's prompt about the web plan.
pub fn prompt_section(
    plan: &TestPlan,
    graph: &ExplorationGraph,
    named: &[String],
    plan_dir: &str,
) -> String {
    let base = plan
        .config_snapshot
        .as_ref()
        .map_or("the app", |config| config.base_url.as_str());
    let mut text = format!(
        "## The web app's test plan\n\nprpd explored the running app at {base} ({} pages) and planned {} cases; \
         every spec is under `{plan_dir}/specs/`.\n",
        graph.pages.len(),
        plan.cases.len()
    );
    if named.is_empty() {
        text.push_str(
            "No explored page is named by the feature request, so no spec is shown here; read the ones that apply.\n",
        );
        return text;
    }
    let pages: Vec<String> = named
        .iter()
        .filter_map(|id| graph.page(id))
        .map(|page| format!("`{}` ({})", page.id, page.url))
        .collect();
    let _ = writeln!(
        text,
        "The feature request names these pages: {}. Below are their specs: write tests for the cases \
         that apply to this feature, and name each test after its case id (for `form-signup-1`, a name \
         such as `form_signup_1_refuses_an_age_below_18`) so that prpd can trace them.",
        pages.join(", ")
    );
    let mut used = 0;
    for case in plan.cases.iter().filter(|case| {
        case.related_page_ids
            .iter()
            .any(|page| named.contains(page))
    }) {
        let spec = markdown(case);
        if used + spec.len() > MAX_PROMPT_SPEC_BYTES {
            let _ = writeln!(
                text,
                "\n(More specs for these pages: `{plan_dir}/specs/{}` and others.)",
                case.markdown_path
            );
            break;
        }
        used += spec.len();
        let _ = write!(text, "\n---\n\n{}", spec.replacen("# ", "### ", 1));
    }
    text
}

/// The QA report's table: each case, whether RED was given it, and the tests that match it.
pub fn coverage_markdown(cases: &[WebCase], test_names: &[String]) -> String {
    let mut text = String::from(
        "| Case | Type | Priority | Pages | Given to RED | Tests |\n|---|---|---|---|---|---|\n",
    );
    let mut tested = 0;
    for case in cases {
        let planned = PlannedCase {
            id: case.id.clone(),
            name: case.name.clone(),
        };
        let tests: Vec<&String> = test_names
            .iter()
            .filter(|name| matches_test(&planned, name))
            .collect();
        if !tests.is_empty() {
            tested += 1;
        }
        let shown = match tests.as_slice() {
            [] => "none".to_owned(),
            [one] => format!("`{one}`"),
            [first, rest @ ..] => format!("`{first}` (+{} more)", rest.len()),
        };
        let _ = writeln!(
            text,
            "| {} | {} | {} | {} | {} | {shown} |",
            prpd_qa::report::cell(&format!("{}: {}", case.id, case.name)),
            case.case_type,
            case.priority,
            case.pages.join(", "),
            if case.given_to_red { "yes" } else { "no" },
        );
    }
    format!("{tested} of {} cases have a test.\n\n{text}", cases.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use prpd_protocols::test_plan::{CaseType, Priority, TestCasePlan};

    fn page(id: &str, url: &str, title: &str) -> PageNode {
        PageNode {
            id: id.to_owned(),
            url: url.to_owned(),
            title: Some(title.to_owned()),
            depth: 1,
            status: 200,
            snapshot_ref: None,
            element_summary: vec![],
        }
    }

    fn graph() -> ExplorationGraph {
        ExplorationGraph {
            pages: vec![
                page("home", "http://a.test/", "Acme"),
                page("signup", "http://a.test/signup.html", "Create your account"),
                page("login", "http://a.test/login", "Log in"),
                page("faq", "http://a.test/help/faq", "Questions"),
            ],
            ..ExplorationGraph::default()
        }
    }

    #[test]
    fn pages_are_named_by_path_last_word_or_title() {
        let named = named_pages(
            &graph(),
            "Add an age check to the signup form; see /help/faq.",
        );
        assert_eq!(named, ["signup", "faq"]);
        assert_eq!(
            named_pages(&graph(), "The Log In page gets a remember-me box."),
            ["login"]
        );
        assert!(
            named_pages(&graph(), "Loginless access for the API.").is_empty(),
            "a word inside another"
        );
        assert_eq!(named_pages(&graph(), "Rename Acme to Acme Corp."), ["home"]);
    }

    fn plan() -> TestPlan {
        let case = |id: &str, page: &str| TestCasePlan {
            id: id.to_owned(),
            name: format!("Case {id}"),
            case_type: CaseType::Form,
            priority: Priority::P1,
            related_page_ids: vec![page.to_owned()],
            markdown_path: format!("{id}.md"),
            preconditions: vec!["A valid account: {{USERNAME}} / {{PASSWORD}}".to_owned()],
            steps: vec![],
        };
        TestPlan {
            run_id: "r".to_owned(),
            generated_at: "now".to_owned(),
            config_snapshot: None,
            flows: vec![],
            cases: vec![
                case("form-signup-1", "signup"),
                case("form-login-1", "login"),
            ],
        }
    }

    #[test]
    fn red_gets_the_specs_of_the_named_pages_only_with_placeholders() {
        let named = vec!["signup".to_owned()];
        let text = prompt_section(&plan(), &graph(), &named, "runs/r/web/plan");
        assert!(text.contains("### Case form-signup-1"), "{text}");
        assert!(!text.contains("form-login-1"), "{text}");
        assert!(text.contains("{{PASSWORD}}"), "{text}");
        let none = prompt_section(&plan(), &graph(), &[], "runs/r/web/plan");
        assert!(none.contains("No explored page is named"), "{none}");
    }

    #[test]
    fn the_table_lists_which_cases_have_tests() {
        let cases = cases(&plan(), &["signup".to_owned()]);
        let table = coverage_markdown(
            &cases,
            &[
                "test_form_signup_1_refuses_17".to_owned(),
                "test_other".to_owned(),
            ],
        );
        assert!(table.starts_with("1 of 2 cases have a test."), "{table}");
        assert!(table.contains("| form-signup-1: Case form-signup-1 | form | p1 | signup | yes | `test_form_signup_1_refuses_17` |"), "{table}");
        assert!(
            table.contains("| form-login-1: Case form-login-1 | form | p1 | login | no | none |"),
            "{table}"
        );
    }
}
