//! The words of a test plan: one Markdown spec per case (the seed's `buildMarkdownForTestCase`,
//! in the layout its runner reads: a title, `## Preconditions`, `## Steps` numbered with
//! `- Expected: …` under a step), and the part of RED's prompt that asks for a plan. Pure:
//! the text depends on the plan alone. Placeholders such as `{{USERNAME}}`, `{{PASSWORD}}` and
//! `{{API_KEY}}` are kept as written: filling them is the job of whoever runs the spec, with
//! their own secrets, and a file prpd keeps never holds one.

use std::fmt::Write as _;

use super::model::TestCasePlan;

/// What RED's prompt says about test plans (its `{{test_plan}}`): optional, the JSON shape
/// with `<…>` values (which `extract.rs` recognises as an echo of the prompt), and the rule
/// the plan is held to.
pub const PROMPT_SECTION: &str = r#"You may end your answer, before the status block, with a TestPlan: one JSON object in a
fenced json block, in this shape (`flows` is optional; `type` is one of functional, form,
navigation, responsive, boundary, security; `priority` is p0, p1 or p2, p0 the most urgent):

```json
{
  "flows": [{"id": "<flow id>", "name": "<flow>", "description": "<optional>", "pagePath": ["<module or page>"]}],
  "cases": [
    {
      "id": "<case id, e.g. ac-1>",
      "name": "<what the case checks>",
      "type": "<functional|form|navigation|responsive|boundary|security>",
      "priority": "<p0|p1|p2>",
      "relatedPageIds": ["<module or page>"],
      "markdownPath": "<relative path of its spec, e.g. functional-p0-ac-1.md>",
      "preconditions": ["<what must hold first>"],
      "steps": [{"description": "<step>", "expectedResult": "<what must happen>"}]
    }
  ]
}
```

Write secrets as placeholders such as {{USERNAME}}, {{PASSWORD}} or {{API_KEY}}, never as values.
If you give a plan, prpd holds your tests to it: each case needs a test that fails now and whose
name contains the case's `id` or `name` (case and separators aside: `ac-1` matches
`ac_1_rejects_an_empty_title` and `AC-1: rejects an empty title`). prpd writes one Markdown spec
per case under the run's `plan/specs/`. Without a plan, nothing changes."#;

/// The Markdown spec of `case`.
pub fn markdown(case: &TestCasePlan) -> String {
    let mut text = String::new();
    let pages = if case.related_page_ids.is_empty() {
        "none".to_owned()
    } else {
        case.related_page_ids.join(", ")
    };
    let _ = write!(
        text,
        "# {}\n\n- Case: {}\n- Type: {}\n- Priority: {}\n- Pages: {pages}\n\n## Preconditions\n\n",
        case.name, case.id, case.case_type, case.priority
    );
    if case.preconditions.is_empty() {
        text.push_str("- None\n");
    }
    for precondition in &case.preconditions {
        let _ = writeln!(text, "- {precondition}");
    }
    text.push_str("\n## Steps\n\n");
    if case.steps.is_empty() {
        text.push_str("No steps were given.\n");
    }
    for (index, step) in case.steps.iter().enumerate() {
        let number = format!("{}. ", index + 1);
        let _ = writeln!(text, "{number}{}", step.description);
        if let Some(expected) = &step.expected_result {
            let _ = writeln!(text, "{}- Expected: {expected}", " ".repeat(number.len()));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_plan::extract::find_plan;
    use crate::test_plan::model::{CaseType, Priority, StepPlan};

    fn login() -> TestCasePlan {
        TestCasePlan {
            id: "login-ok".to_owned(),
            name: "User logs in".to_owned(),
            case_type: CaseType::Form,
            priority: Priority::P0,
            related_page_ids: vec!["login".to_owned(), "dashboard".to_owned()],
            markdown_path: "form-p0-user-logs-in.md".to_owned(),
            preconditions: vec![
                "User has valid credentials: {{USERNAME}} / {{PASSWORD}}".to_owned(),
            ],
            steps: vec![
                StepPlan {
                    description: "Navigate to login page".to_owned(),
                    expected_result: None,
                },
                StepPlan {
                    description: "Enter password: {{PASSWORD}}".to_owned(),
                    expected_result: None,
                },
                StepPlan {
                    description: "Click \"Login\" button".to_owned(),
                    expected_result: Some("User is redirected to dashboard".to_owned()),
                },
            ],
        }
    }

    /// The seed's example spec, with prpd's header lines.
    #[test]
    fn a_spec_in_the_seeds_layout() {
        assert_eq!(
            markdown(&login()),
            "# User logs in\n\n\
             - Case: login-ok\n- Type: form\n- Priority: p0\n- Pages: login, dashboard\n\n\
             ## Preconditions\n\n\
             - User has valid credentials: {{USERNAME}} / {{PASSWORD}}\n\n\
             ## Steps\n\n\
             1. Navigate to login page\n\
             2. Enter password: {{PASSWORD}}\n\
             3. Click \"Login\" button\n   - Expected: User is redirected to dashboard\n"
        );
    }

    #[test]
    fn a_bare_case_says_what_it_lacks() {
        let mut case = login();
        case.related_page_ids.clear();
        case.preconditions.clear();
        case.steps.clear();
        let text = markdown(&case);
        assert!(text.contains("- Pages: none\n"), "{text}");
        assert!(text.contains("## Preconditions\n\n- None\n"), "{text}");
        assert!(
            text.ends_with("## Steps\n\nNo steps were given.\n"),
            "{text}"
        );
    }

    #[test]
    fn the_tenth_step_keeps_its_expectation_under_it() {
        let mut case = login();
        case.steps = (1..=10)
            .map(|number| StepPlan {
                description: format!("step {number}"),
                expected_result: Some("ok".to_owned()),
            })
            .collect();
        assert!(markdown(&case).ends_with("10. step 10\n    - Expected: ok\n"));
    }

    #[test]
    fn the_prompts_example_is_no_plan_but_the_shape_parses() {
        assert_eq!(find_plan(PROMPT_SECTION), Ok(None));
        let example = PROMPT_SECTION
            .split("```json\n")
            .nth(1)
            .and_then(|rest| rest.split("\n```").next())
            .expect("the example");
        let parsed: serde_json::Value = serde_json::from_str(example).expect("valid JSON");
        assert!(parsed["cases"][0]["markdownPath"].is_string());
        assert!(PROMPT_SECTION.contains("{{PASSWORD}}"));
    }
}
