//! The prompt of `prpd plan --agent`: the seed's planner role, what prpd's own walk found (each
//! page with its links and its forms' fields and rules), the planner tools the agent may call
//! through `prpd mcp` to look further, and the `TestPlan` it must end with (read by
//! `test_plan::read_answer`, or taken from its `finalize_test_plan` call). Pure.

use std::fmt::Write as _;

use prpd_protocols::test_plan::PlanConfig;

use super::graph::ExplorationGraph;

/// The most elements listed per page.
const MAX_ELEMENTS_PER_PAGE: usize = 40;

/// The planner's prompt for what `graph` holds.
pub fn planner_prompt(graph: &ExplorationGraph, config: &PlanConfig) -> String {
    let mut text = String::from(
        "# prpd · test planner\n\n\
         You are a senior QA engineer and test architect. prpd explored a running web app with a \
         headless browser; design a test plan that covers its main user journeys and its risky \
         areas within a reasonable budget, rather than every combination.\n\n",
    );
    let types = if config.test_types.is_empty() {
        "functional, form, navigation, responsive, boundary, security".to_owned()
    } else {
        config
            .test_types
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(
        text,
        "The app: {} (explored {} links deep, at most {} pages). Plan cases of these types: {types}.\n",
        config.base_url, config.max_depth, config.max_pages
    );
    text.push_str("## What prpd saw\n\n");
    for page in &graph.pages {
        let _ = writeln!(
            text,
            "### Page `{}`: {} ({}, depth {}, HTTP {})\n",
            page.id,
            page.title.as_deref().unwrap_or("untitled"),
            page.url,
            page.depth,
            page.status
        );
        for element in page.element_summary.iter().take(MAX_ELEMENTS_PER_PAGE) {
            let locator = element
                .locator_candidates
                .first()
                .map_or_else(String::new, |locator| {
                    format!("{} `{}`", locator.strategy, locator.value)
                });
            let mut line = format!("- `{}` {} {locator}", element.id, element.kind);
            if let Some(target) = &element.target {
                let _ = write!(line, " → {target}");
            }
            if let Some(rules) = &element.field {
                let mut parts = vec![rules.input_type.clone()];
                if rules.required {
                    parts.push("required".to_owned());
                }
                for (name, value) in [
                    ("min", &rules.min),
                    ("max", &rules.max),
                    ("minlength", &rules.min_length),
                    ("maxlength", &rules.max_length),
                    ("pattern", &rules.pattern),
                ] {
                    if let Some(value) = value {
                        parts.push(format!("{name} {value}"));
                    }
                }
                let _ = write!(line, " ({})", parts.join(", "));
            }
            let _ = writeln!(text, "{line}");
        }
        if page.element_summary.len() > MAX_ELEMENTS_PER_PAGE {
            let _ = writeln!(
                text,
                "- … {} more elements (`get_page` lists them)",
                page.element_summary.len() - MAX_ELEMENTS_PER_PAGE
            );
        }
        text.push('\n');
    }
    let mut placeholders = vec!["{{USERNAME}}".to_owned(), "{{PASSWORD}}".to_owned()];
    if let Some(auth) = &config.auth {
        placeholders = [&auth.username_var, &auth.password_var]
            .into_iter()
            .flatten()
            .map(|name| format!("{{{{{name}}}}}"))
            .collect();
    }
    let _ = write!(
        text,
        "## Tools\n\n\
         If your CLI has prpd's MCP server (`claude mcp add prpd -- prpd mcp`), its planner tools \
         work on this same exploration: `list_known_pages`, `get_page`, `propose_test_cases_for_page` \
         to read it, `open_url`, `navigate`, `click`, `fill`, `scroll`, `wait` and \
         `observe_current_page` to look further (each page you reach is recorded), and \
         `finalize_test_plan` to hand in the plan. Each call counts towards the run's guardrails.\n\n\
         ## Your answer\n\n\
         Hand in the plan with `finalize_test_plan`, or end your answer with it as one JSON object \
         in a ```json block: {{\"flows\": [{{\"id\", \"name\", \"description\", \"pagePath\": [page ids]}}], \
         \"cases\": [{{\"id\", \"name\", \"type\", \"priority\" (p0|p1|p2), \"relatedPageIds\": [page ids], \
         \"preconditions\": [..], \"steps\": [{{\"description\", \"expectedResult\"}}]}}]}}. Use the page \
         ids above. Write credentials only as placeholders ({}), never as values.\n",
        placeholders.join(", ")
    );
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{ElementSummary, FieldRules, LocatorCandidate, PageNode};
    use prpd_protocols::test_plan::{PlanAuth, PlanGuardrails};

    #[test]
    fn the_prompt_lists_pages_fields_and_asks_for_placeholders() {
        let graph = ExplorationGraph {
            pages: vec![PageNode {
                id: "signup".to_owned(),
                url: "http://a.test/signup".to_owned(),
                title: Some("Sign up".to_owned()),
                depth: 1,
                status: 200,
                snapshot_ref: None,
                element_summary: vec![ElementSummary {
                    id: "signup/e2".to_owned(),
                    kind: "input".to_owned(),
                    text: Some("Age".to_owned()),
                    role: Some("spinbutton".to_owned()),
                    locator_candidates: vec![LocatorCandidate {
                        strategy: "role".to_owned(),
                        value: "spinbutton \"Age\"".to_owned(),
                    }],
                    target: None,
                    method: None,
                    form: Some("signup/e1".to_owned()),
                    field: Some(FieldRules {
                        input_type: "number".to_owned(),
                        required: true,
                        min: Some("13".to_owned()),
                        ..FieldRules::default()
                    }),
                }],
            }],
            ..ExplorationGraph::default()
        };
        let config = PlanConfig {
            base_url: "http://a.test/".to_owned(),
            max_depth: 2,
            max_pages: 20,
            include_patterns: vec![],
            exclude_patterns: vec![],
            test_types: vec![],
            guardrails: PlanGuardrails::default(),
            auth: Some(PlanAuth {
                password_var: Some("APP_PASSWORD".to_owned()),
                ..PlanAuth::default()
            }),
        };
        let prompt = planner_prompt(&graph, &config);
        assert!(
            prompt.contains("### Page `signup`: Sign up (http://a.test/signup, depth 1, HTTP 200)"),
            "{prompt}"
        );
        assert!(
            prompt.contains(
                "- `signup/e2` input role `spinbutton \"Age\"` (number, required, min 13)"
            ),
            "{prompt}"
        );
        assert!(prompt.contains("({{APP_PASSWORD}})"), "{prompt}");
        assert!(prompt.contains("finalize_test_plan"), "{prompt}");
    }
}
