//! The normalisation rules, one table row each: the case as the agent wrote it, and what prpd
//! made of it with the warning it recorded.

use serde_json::json;

use super::*;

fn plan_of(cases: &Json) -> Map<String, Json> {
    let Json::Object(object) = json!({ "cases": cases }) else {
        unreachable!("json! of an object")
    };
    object
}

fn one(case: &Json) -> (TestCasePlan, Vec<String>) {
    let normalised = normalise(&plan_of(&json!([case]))).expect("normalises");
    (normalised.cases[0].clone(), normalised.warnings)
}

/// One rule: its name, the case as written, a check of the case prpd made, and a piece of
/// the one warning expected (`None`: no warning).
type Rule = (
    &'static str,
    Json,
    fn(&TestCasePlan) -> bool,
    Option<&'static str>,
);

const FULL: fn() -> Json = || {
    json!({
        "id": "login-ok", "name": "User logs in", "type": "form", "priority": "p0",
        "relatedPageIds": ["login"], "markdownPath": "auth/login.md",
        "preconditions": ["An account exists"],
        "steps": [{"description": "Enter {{PASSWORD}}", "expectedResult": "Dashboard"}]
    })
};

fn with(key: &str, value: Json) -> Json {
    let mut case = FULL();
    case[key] = value;
    case
}

fn without(key: &str) -> Json {
    let mut case = FULL();
    case.as_object_mut().expect("object").remove(key);
    case
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one table of rules reads best in one place"
)]
fn every_rule() {
    let rules: Vec<Rule> = vec![
        (
            "a complete case is kept as written",
            FULL(),
            |case| {
                case.id == "login-ok"
                    && case.name == "User logs in"
                    && case.case_type == CaseType::Form
                    && case.priority == Priority::P0
                    && case.related_page_ids == ["login"]
                    && case.markdown_path == "auth/login.md"
                    && case.preconditions == ["An account exists"]
                    && case.steps[0].description == "Enter {{PASSWORD}}"
                    && case.steps[0].expected_result.as_deref() == Some("Dashboard")
            },
            None,
        ),
        (
            "missing id → case-N",
            without("id"),
            |case| case.id == "case-1",
            Some("case 1 has no id; it is `case-1`"),
        ),
        (
            "a numeric id is its text",
            with("id", json!(7)),
            |case| case.id == "7",
            None,
        ),
        (
            "missing name → the id",
            without("name"),
            |case| case.name == "login-ok",
            Some("case 1 (`login-ok`) has no name; it is named after its id"),
        ),
        (
            "a name over several lines is one line",
            with("name", json!("User\n  logs\tin\u{1b}[31m")),
            |case| case.name == "User logs in[31m",
            None,
        ),
        (
            "an invalid type → functional, naming the value",
            with("type", json!("smoke")),
            |case| case.case_type == CaseType::Functional,
            Some(
                "case 1 (`login-ok`): type `smoke` is not one of functional, form, navigation, \
                 responsive, boundary, security; it is `functional`",
            ),
        ),
        (
            "a type of another case is read",
            with("type", json!("Security")),
            |case| case.case_type == CaseType::Security,
            None,
        ),
        (
            "a type that is not text → functional",
            with("type", json!(["form"])),
            |case| case.case_type == CaseType::Functional,
            Some("case 1 (`login-ok`): type `[\"form\"]` is not one of"),
        ),
        (
            "missing type → functional",
            without("type"),
            |case| case.case_type == CaseType::Functional,
            Some("type is missing; it is `functional`"),
        ),
        (
            "an invalid priority → p2, naming the value",
            with("priority", json!("high")),
            |case| case.priority == Priority::P2,
            Some("priority `high` is not one of p0, p1, p2; it is `p2`"),
        ),
        (
            "P1 is p1",
            with("priority", json!("P1")),
            |case| case.priority == Priority::P1,
            None,
        ),
        (
            "missing priority → p2",
            without("priority"),
            |case| case.priority == Priority::P2,
            Some("priority is missing; it is `p2`"),
        ),
        (
            "missing markdownPath → type-priority-slug.md",
            without("markdownPath"),
            |case| case.markdown_path == "form-p0-user-logs-in.md",
            None,
        ),
        (
            "a path without .md gets it",
            with("markdownPath", json!("auth/login")),
            |case| case.markdown_path == "auth/login.md",
            None,
        ),
        (
            "a path that leaves specs/ → the default",
            with("markdownPath", json!("../../../.bashrc.md")),
            |case| case.markdown_path == "form-p0-user-logs-in.md",
            Some("spec path `../../../.bashrc.md` leaves specs/; it is `form-p0-user-logs-in.md`"),
        ),
        (
            "an absolute path → the default",
            with("markdownPath", json!("/etc/cron.d/x.md")),
            |case| case.markdown_path == "form-p0-user-logs-in.md",
            Some("`/etc/cron.d/x.md` is not a relative path"),
        ),
        (
            "a hidden part → the default",
            with("markdownPath", json!("a/.git/hooks.md")),
            |case| case.markdown_path == "form-p0-user-logs-in.md",
            Some("has an empty part or a part starting with `.`"),
        ),
        (
            "odd characters → the default",
            with("markdownPath", json!("a b/$(x).md")),
            |case| case.markdown_path == "form-p0-user-logs-in.md",
            Some("has characters other than letters"),
        ),
        (
            "a Windows path → the default",
            with("markdownPath", json!("..\\x.md")),
            |case| case.markdown_path == "form-p0-user-logs-in.md",
            Some("is not a relative path"),
        ),
        (
            "a slug from a name without ASCII letters falls back to the id",
            json!({"id": "AC-1", "name": "乘法", "type": "boundary", "priority": "p1"}),
            |case| case.markdown_path == "boundary-p1-ac-1.md",
            None,
        ),
        (
            "a single precondition text is a list of one",
            with("preconditions", json!("Logged out")),
            |case| case.preconditions == ["Logged out"],
            None,
        ),
        (
            "items that are not text are left out",
            with("relatedPageIds", json!(["login", {"id": 2}, null])),
            |case| case.related_page_ids == ["login"],
            Some("2 item(s) of `relatedPageIds` are not text"),
        ),
        (
            "a text step has no expected result",
            with(
                "steps",
                json!(["Open the page", {"description": "Click", "expectedResult": ""}]),
            ),
            |case| {
                case.steps.len() == 2
                    && case.steps[0].description == "Open the page"
                    && case.steps.iter().all(|step| step.expected_result.is_none())
            },
            None,
        ),
        (
            "a step without a description is left out",
            with(
                "steps",
                json!([{"expectedResult": "Shown"}, {"description": "Go"}]),
            ),
            |case| case.steps.len() == 1 && case.steps[0].description == "Go",
            Some("step 1 has no description; it is left out"),
        ),
        (
            "placeholders are text like any other",
            with(
                "preconditions",
                json!(["{{USERNAME}} / {{PASSWORD}} / {{API_KEY}}"]),
            ),
            |case| case.preconditions == ["{{USERNAME}} / {{PASSWORD}} / {{API_KEY}}"],
            None,
        ),
    ];
    for (name, written, check, warning) in rules {
        let (case, warnings) = one(&written);
        assert!(check(&case), "{name}: {case:#?}");
        match warning {
            None => assert!(warnings.is_empty(), "{name}: {warnings:?}"),
            Some(expected) => {
                assert_eq!(warnings.len(), 1, "{name}: {warnings:?}");
                assert!(warnings[0].contains(expected), "{name}: {warnings:?}");
            }
        }
    }
}

#[test]
fn ids_and_spec_paths_are_unique() {
    let normalised = normalise(&plan_of(&json!([
        {"id": "a", "name": "One", "type": "form", "priority": "p0", "markdownPath": "x.md"},
        {"id": "a", "name": "Two", "type": "form", "priority": "p0", "markdownPath": "X.md"},
        {"id": "a", "name": "Three", "type": "form", "priority": "p0", "markdownPath": "x.md"},
    ])))
    .expect("normalises");
    let ids: Vec<&str> = normalised
        .cases
        .iter()
        .map(|case| case.id.as_str())
        .collect();
    assert_eq!(ids, ["a", "a-2", "a-3"]);
    let paths: Vec<&str> = normalised
        .cases
        .iter()
        .map(|case| case.markdown_path.as_str())
        .collect();
    assert_eq!(paths, ["x.md", "X-2.md", "x-3.md"]);
    assert_eq!(normalised.warnings.len(), 4, "{:?}", normalised.warnings);
    assert!(normalised.warnings[0].contains("id `a` is taken by an earlier case; it is `a-2`"));
}

#[test]
fn a_plan_needs_a_case_and_at_most_the_cap() {
    assert_eq!(normalise(&plan_of(&json!([]))), Err(PlanError::NoCases));
    assert_eq!(
        normalise(&plan_of(&json!(["not a case", 3]))),
        Err(PlanError::NoCases),
        "no case is an object"
    );
    let Json::Object(no_key) = json!({"flows": []}) else {
        unreachable!("an object")
    };
    assert_eq!(normalise(&no_key), Err(PlanError::NoCases));
    let many: Vec<Json> = (0..=MAX_CASES).map(|index| json!({"id": index})).collect();
    let error = normalise(&plan_of(&Json::Array(many))).expect_err("too many");
    assert_eq!(error, PlanError::TooManyCases { count: 201 });
    assert_eq!(
        error.to_string(),
        "TestPlan has 201 test cases; prpd reads at most 200"
    );
    let mixed = normalise(&plan_of(&json!(["junk", {"id": "b"}]))).expect("one case is enough");
    assert_eq!(mixed.cases.len(), 1);
    assert!(mixed.warnings[0].contains("case 1 is not an object; it is left out"));
}

#[test]
fn flows_are_normalised_likewise() {
    let Json::Object(object) = json!({
        "flows": [
            {"id": "checkout", "name": "Checkout", "description": "Pay", "pagePath": ["cart", "pay"]},
            {"name": "No id"},
            {"id": "bare"},
            "junk"
        ],
        "cases": [{"id": "a"}]
    }) else {
        unreachable!("an object")
    };
    let normalised = normalise(&object).expect("normalises");
    let flows = &normalised.flows;
    assert_eq!(flows.len(), 3);
    assert_eq!(flows[0].page_path, ["cart", "pay"]);
    assert_eq!(flows[0].description.as_deref(), Some("Pay"));
    assert_eq!(
        (flows[1].id.as_str(), flows[1].name.as_str()),
        ("flow-2", "No id")
    );
    assert_eq!(
        (flows[2].id.as_str(), flows[2].name.as_str()),
        ("bare", "bare")
    );
    let warnings = normalised.warnings.join("\n");
    for expected in [
        "flow 2 has no id; it is `flow-2`",
        "flow 3 (`bare`) has no name",
        "flow 4 is not an object",
    ] {
        assert!(warnings.contains(expected), "{expected} in {warnings}");
    }
    let Json::Object(odd) = json!({"flows": "checkout", "cases": [{"id": "a"}]}) else {
        unreachable!("an object")
    };
    let normalised = normalise(&odd).expect("normalises");
    assert!(normalised.flows.is_empty());
    assert!(normalised.warnings[0].contains("`flows` is not a list"));
}

#[test]
fn the_plan_carries_the_run_and_the_time() {
    let plan = normalise(&plan_of(&json!([{"id": "a"}])))
        .expect("normalises")
        .into_plan("run-1", "2025-01-15T10:30:00Z");
    assert_eq!(plan.run_id, "run-1");
    assert_eq!(plan.generated_at, "2025-01-15T10:30:00Z");
    assert!(plan.config_snapshot.is_none());
    assert_eq!(plan.cases[0].markdown_path, "functional-p2-a.md");
}
