//! `prpd plan explore` and `prpd plan` end to end: the real binary drives the real headless
//! Chromium over a small app the test serves itself (`web_site.rs`). The graph holds the pages,
//! links, forms and field rules the app has, and what was not followed (an external site that
//! never hears from the browser, a `mailto:`, pages past the depth or page limit); snapshots
//! are real 1024 px JPEGs; a guardrail exits 1 naming itself; the plan's specs use placeholders
//! whose values reach no file. Each run happens in its own `Workspace` (`web_workspace.rs`);
//! `web_plan_processes.rs` covers errors, SIGTERM and `[plan] serve`.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::web_site::{Page, Site, example_app};
use crate::web_workspace::{Workspace, assert_exit, example, files_under, text};

pub(crate) fn pages(graph: &Value) -> &Vec<Value> {
    graph["pages"].as_array().expect("pages")
}

pub(crate) fn page<'a>(graph: &'a Value, id: &str) -> &'a Value {
    pages(graph)
        .iter()
        .find(|page| page["id"] == id)
        .unwrap_or_else(|| panic!("no page {id} in {graph:#}"))
}

pub(crate) fn page_ids(graph: &Value) -> BTreeSet<String> {
    pages(graph)
        .iter()
        .map(|page| page["id"].as_str().expect("id").to_owned())
        .collect()
}

/// The element of `page` whose field is named `name` (or whose text is `name`).
fn element<'a>(page: &'a Value, name: &str) -> &'a Value {
    page["elementSummary"]
        .as_array()
        .expect("elementSummary")
        .iter()
        .find(|element| element["field"]["name"] == name || element["text"] == name)
        .unwrap_or_else(|| panic!("no element {name} on {page:#}"))
}

fn locators(element: &Value) -> Vec<(String, String)> {
    element["locatorCandidates"]
        .as_array()
        .expect("locatorCandidates")
        .iter()
        .map(|locator| {
            (
                locator["strategy"].as_str().expect("strategy").to_owned(),
                locator["value"].as_str().expect("value").to_owned(),
            )
        })
        .collect()
}

/// `(reason, from)` of each skipped address, by address.
fn skipped(graph: &Value) -> HashMap<String, (String, String)> {
    graph["skipped"]
        .as_array()
        .expect("skipped")
        .iter()
        .map(|skipped| {
            (
                skipped["url"].as_str().expect("url").to_owned(),
                (
                    skipped["reason"].as_str().expect("reason").to_owned(),
                    skipped["from"].as_str().expect("from").to_owned(),
                ),
            )
        })
        .collect()
}

fn has_edge(graph: &Value, from: &str, to: &str, via: &str) -> bool {
    graph["edges"]
        .as_array()
        .expect("edges")
        .iter()
        .any(|edge| edge["from"] == from && edge["to"] == to && edge["via"] == via)
}

/// Width and height from a JPEG's start-of-frame segment.
fn jpeg_size(bytes: &[u8]) -> Option<(u16, u16)> {
    if bytes.get(..3)? != [0xFF, 0xD8, 0xFF] {
        return None;
    }
    let mut at = 2;
    while at + 4 <= bytes.len() {
        if bytes[at] != 0xFF {
            return None;
        }
        let marker = bytes[at + 1];
        let length = usize::from(u16::from_be_bytes([bytes[at + 2], bytes[at + 3]]));
        if (0xC0..=0xCF).contains(&marker) && !matches!(marker, 0xC4 | 0xC8 | 0xCC) {
            let frame = bytes.get(at + 5..at + 9)?;
            let height = u16::from_be_bytes([frame[0], frame[1]]);
            let width = u16::from_be_bytes([frame[2], frame[3]]);
            return Some((width, height));
        }
        at += 2 + length;
    }
    None
}

#[test]
fn jpeg_size_reads_the_frame_header_and_refuses_what_is_not_a_jpeg() {
    let mut jpeg = vec![0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, b'J', b'F'];
    jpeg.extend([0xFF, 0xC0, 0x00, 0x11, 0x08, 0x03, 0x00, 0x04, 0x00, 0x03]);
    assert_eq!(jpeg_size(&jpeg), Some((1024, 768)));
    assert_eq!(jpeg_size(b"\x89PNG\r\n\x1a\n"), None);
    assert_eq!(jpeg_size(&jpeg[..8]), None, "no frame header");
}

/// A page `-d 2` reaches on the example app.
struct Expected {
    id: &'static str,
    path: &'static str,
    title: &'static str,
    /// The text of its `<h1>`, as the accessibility outline shows it.
    heading: &'static str,
    depth: u64,
    status: u16,
}

const fn expected(
    id: &'static str,
    path: &'static str,
    title: &'static str,
    heading: &'static str,
    depth: u64,
) -> Expected {
    Expected {
        id,
        path,
        title,
        heading,
        depth,
        status: 200,
    }
}

const EXPECTED_PAGES: [Expected; 10] = [
    expected("home", "/", "Home", "Welcome home", 0),
    expected("about", "/about", "About", "About us", 1),
    expected("login", "/login", "Log in", "Log in", 1),
    expected("signup", "/signup", "Sign up", "Create an account", 1),
    expected("docs-one", "/docs/one", "Docs: one", "Docs one", 1),
    expected("loop-a", "/loop/a", "Loop A", "Loop A", 1),
    expected("search", "/search", "Search", "Search results", 1),
    Expected {
        status: 404,
        ..expected("missing", "/missing", "Not found", "Not found", 1)
    },
    expected("docs-two", "/docs/two", "Docs: two", "Docs two", 2),
    expected("loop-b", "/loop/b", "Loop B", "Loop B", 2),
];

#[test]
#[ignore = "end-to-end tier: needs Chromium; `cargo test --test it -- --ignored` runs it, and so does .ci/run"]
fn explore_records_pages_links_forms_snapshots_and_what_it_did_not_follow() {
    let (site, external) = example();
    let workspace = Workspace::new();
    let output = workspace.plan(&["plan", "explore", "-u", &site.url("/"), "-d", "2"]);
    assert_exit(&output, 0, "plan explore");
    assert!(
        text(&output.stdout).contains("Explored 10 pages"),
        "{}",
        text(&output.stdout)
    );
    let graph = workspace.graph();
    assert_pages_and_edges(&graph, &site);
    assert_not_followed(&graph, &site, &external);
    assert_elements(&graph, &site);
    assert_snapshots(&workspace, &graph);
    workspace.assert_closed_cleanly("after success");
}

fn assert_pages_and_edges(graph: &Value, site: &Site) {
    assert_eq!(
        page_ids(graph),
        EXPECTED_PAGES
            .iter()
            .map(|page| page.id.to_owned())
            .collect(),
        "{graph:#}"
    );
    for expected in &EXPECTED_PAGES {
        let id = expected.id;
        let node = page(graph, id);
        assert_eq!(node["url"], site.url(expected.path), "{id}");
        assert_eq!(node["title"], expected.title, "{id}");
        assert_eq!(node["depth"], expected.depth, "{id}");
        assert_eq!(node["status"], expected.status, "{id}: the HTTP status");
    }
    for (from, to, via) in [
        ("home", "about", "link"),
        ("home", "docs-one", "link"),
        ("docs-one", "docs-two", "link"),
        ("home", "search", "form"),
        ("about", "home", "link"),
        ("loop-a", "loop-b", "link"),
        ("loop-b", "loop-a", "link"),
        ("loop-b", "home", "link"),
    ] {
        assert!(
            has_edge(graph, from, to, via),
            "no edge {from} → {to} via {via}: {:#}",
            graph["edges"]
        );
    }
    // The loop is walked once: each of its pages (and home, which both link back to) is
    // requested once.
    for path in ["/", "/loop/a", "/loop/b"] {
        assert_eq!(
            site.requests(path),
            1,
            "{path}: {:?}",
            site.requests_by_path()
        );
    }
}

fn assert_not_followed(graph: &Value, site: &Site, external: &Site) {
    let skipped = skipped(graph);
    assert_eq!(
        skipped.get(&external.url("/partner")),
        Some(&("external".to_owned(), "home".to_owned())),
        "{skipped:?}"
    );
    assert_eq!(
        external.total_requests(),
        0,
        "the external site was asked: {:?}",
        external.requests_by_path()
    );
    assert_eq!(
        skipped
            .get("mailto:team@example.test")
            .map(|(reason, _)| reason.as_str()),
        Some("not-http")
    );
    assert_eq!(
        skipped.get(&site.url("/docs/three")),
        Some(&("depth".to_owned(), "docs-two".to_owned()))
    );
    assert_eq!(site.requests("/docs/three"), 0);
    // Nothing was submitted: the POST forms' actions were never asked for.
    assert_eq!(site.requests("/accounts") + site.requests("/session"), 0);
}

fn assert_elements(graph: &Value, site: &Site) {
    let signup = page(graph, "signup");
    let name = element(signup, "name");
    assert_eq!(name["kind"], "input");
    assert_eq!(
        locators(name),
        [
            ("role".to_owned(), "textbox \"Name\"".to_owned()),
            ("label".to_owned(), "Name".to_owned()),
            ("testId".to_owned(), "signup-name".to_owned()),
            ("css".to_owned(), "#name".to_owned()),
        ]
    );
    assert_eq!(name["field"]["required"], true);
    assert_eq!(name["field"]["maxLength"], "20");
    let age = element(signup, "age");
    assert_eq!(
        (&age["role"], &age["field"]["inputType"]),
        (&Value::from("spinbutton"), &Value::from("number"))
    );
    assert_eq!(
        (&age["field"]["min"], &age["field"]["max"]),
        (&"18".into(), &"120".into())
    );
    assert_eq!(age["field"]["required"], false);
    let form = age["form"].as_str().expect("a field's form");
    let form = signup["elementSummary"]
        .as_array()
        .expect("elements")
        .iter()
        .find(|element| element["id"] == form)
        .expect("the form element");
    assert_eq!(
        (&form["kind"], &form["method"]),
        (&"form".into(), &"post".into())
    );
    assert_eq!(form["target"], site.url("/accounts"));
    let submit = element(signup, "Create account");
    assert_eq!(submit["kind"], "button");
    assert_eq!(locators(submit)[0].1, "button \"Create account\"");
    let login = page(graph, "login");
    assert_eq!(element(login, "email")["field"]["inputType"], "email");
    assert_eq!(element(login, "password")["field"]["inputType"], "password");
    let about_link = element(page(graph, "home"), "About");
    assert_eq!(
        (&about_link["kind"], &about_link["target"]),
        (&"link".into(), &site.url("/about").into())
    );
}

fn assert_snapshots(workspace: &Workspace, graph: &Value) {
    let explore = workspace.run_dir().join("plan-explore");
    for Expected { id, heading, .. } in &EXPECTED_PAGES {
        let node = page(graph, id);
        assert_eq!(node["snapshotRef"], format!("snapshots/{id}"));
        let base = explore.join("snapshots").join(id);
        let jpeg = std::fs::read(base.with_extension("jpg")).expect("screenshot");
        assert_eq!(&jpeg[6..10], b"JFIF", "{id}: a JFIF file");
        assert_eq!(jpeg_size(&jpeg), Some((1024, 768)), "{id}: the viewport");
        let outline = std::fs::read_to_string(base.with_extension("ax.txt")).expect("outline");
        assert!(
            outline.contains(&format!("heading \"{heading}\"")),
            "{id}: {outline}"
        );
        let metadata: Value = serde_json::from_str(
            &std::fs::read_to_string(base.with_extension("json")).expect("metadata"),
        )
        .expect("metadata JSON");
        assert_eq!(
            (&metadata["url"], &metadata["title"]),
            (&node["url"], &node["title"])
        );
    }
    let transcript = std::fs::read_to_string(explore.join("transcript.jsonl")).expect("transcript");
    let snapshots: Vec<String> = transcript
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("a JSON line"))
        .filter(|line| line["action"] == "snapshot")
        .map(|line| line["detail"]["page"].as_str().expect("page").to_owned())
        .collect();
    assert_eq!(
        snapshots.iter().cloned().collect::<BTreeSet<_>>(),
        page_ids(graph)
    );
    assert_eq!(
        snapshots.len(),
        EXPECTED_PAGES.len(),
        "one snapshot line per page"
    );
}

#[test]
#[ignore = "end-to-end tier: needs Chromium; `cargo test --test it -- --ignored` runs it, and so does .ci/run"]
fn the_depth_and_page_limits_end_the_walk_normally_and_say_so() {
    let (site, _external) = example();

    let shallow = Workspace::new();
    let output = shallow.plan(&["plan", "explore", "-u", &site.url("/"), "-d", "1"]);
    assert_exit(&output, 0, "-d 1");
    assert!(
        text(&output.stdout).contains("The depth limit was reached"),
        "{}",
        text(&output.stdout)
    );
    let graph = shallow.graph();
    assert!(
        pages(&graph)
            .iter()
            .all(|page| page["depth"].as_u64() <= Some(1))
    );
    assert!(page_ids(&graph).contains("docs-one"));
    assert!(!page_ids(&graph).contains("docs-two"), "{graph:#}");
    assert_eq!(
        skipped(&graph).get(&site.url("/docs/two")),
        Some(&("depth".to_owned(), "docs-one".to_owned()))
    );
    assert_eq!(site.requests("/docs/two"), 0);

    let few = Workspace::new();
    let output = few.plan(&["plan", "explore", "-u", &site.url("/"), "--max-pages", "3"]);
    assert_exit(&output, 0, "--max-pages 3");
    assert!(
        text(&output.stdout).contains("The page limit was reached"),
        "{}",
        text(&output.stdout)
    );
    let graph = few.graph();
    assert_eq!(pages(&graph).len(), 3, "{graph:#}");
    assert_eq!(
        page_ids(&graph),
        ["about", "home", "login"].map(str::to_owned).into(),
        "breadth first, in the order of the links"
    );
    let over: Vec<String> = skipped(&graph)
        .into_iter()
        .filter(|(_, (reason, _))| reason == "pages")
        .map(|(url, _)| url)
        .collect();
    assert!(over.contains(&site.url("/signup")), "{over:?}");
    assert_eq!(
        site.requests("/signup"),
        1,
        "only the first workspace's visit"
    );
    few.assert_closed_cleanly("after the page limit");
}

#[test]
#[ignore = "end-to-end tier: needs Chromium; `cargo test --test it -- --ignored` runs it, and so does .ci/run"]
fn a_guardrail_cuts_the_run_short_exits_1_and_names_itself() {
    let (site, _external) = example();
    let workspace = Workspace::with_config("[plan]\nmax_snapshots = 2\n");
    let output = workspace.plan(&["plan", "-u", &site.url("/")]);
    assert_exit(&output, 1, "max_snapshots = 2");
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("maxSnapshotsPerRun") && stderr.contains("max_snapshots"),
        "{stderr}"
    );
    let summary = workspace.json("plan/plan-summary.json");
    assert_eq!(summary["truncatedBy"]["guardrail"], "maxSnapshotsPerRun");
    assert_eq!(
        (
            &summary["truncatedBy"]["limit"],
            &summary["truncatedBy"]["count"]
        ),
        (&Value::from(2), &Value::from(3)),
        "the refused third snapshot is counted"
    );
    assert_eq!(summary["guardrails"]["maxSnapshotsPerRun"]["limit"], 2);
    assert_eq!(
        (&summary["pages"], &summary["cases"]),
        (&Value::from(2), &Value::from(0))
    );
    assert_eq!(pages(&workspace.graph()).len(), 2);
    let plan_dir = workspace.run_dir().join("plan");
    assert!(
        !plan_dir.join("test-plan.json").exists(),
        "no plan after a guardrail"
    );
    assert!(
        !plan_dir.join("specs").exists(),
        "no specs after a guardrail"
    );
    workspace.assert_closed_cleanly("after a guardrail");

    // The flag, on `plan explore`: the same refusal, and the transcript says where it stopped.
    let flagged = Workspace::new();
    let output = flagged.plan(&[
        "plan",
        "explore",
        "-u",
        &site.url("/"),
        "--max-snapshots",
        "2",
    ]);
    assert_exit(&output, 1, "--max-snapshots 2");
    assert!(text(&output.stderr).contains("maxSnapshotsPerRun"));
    assert_eq!(pages(&flagged.graph()).len(), 2);
    let transcript =
        std::fs::read_to_string(flagged.run_dir().join("plan-explore/transcript.jsonl"))
            .expect("transcript");
    assert!(
        transcript
            .lines()
            .any(|line| line.contains("\"guardrail\"")),
        "{transcript}"
    );
    let summary = flagged.json("plan/plan-summary.json");
    assert_eq!(summary["truncatedBy"]["guardrail"], "maxSnapshotsPerRun");
    assert_eq!(summary["planner"], "none");
    assert_eq!(summary["testPlan"], Value::Null);
}

/// Every spec of a plan run, by case id.
fn specs(workspace: &Workspace, plan: &Value) -> BTreeMap<String, String> {
    let dir = workspace.run_dir().join("plan/specs");
    plan["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|case| {
            let path = dir.join(case["markdownPath"].as_str().expect("markdownPath"));
            let spec = std::fs::read_to_string(&path)
                .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
            (case["id"].as_str().expect("id").to_owned(), spec)
        })
        .collect()
}

#[test]
#[ignore = "end-to-end tier: needs Chromium; `cargo test --test it -- --ignored` runs it, and so does .ci/run"]
fn plan_writes_the_baseline_plan_its_specs_and_the_summary() {
    let (site, _external) = example();
    let workspace = Workspace::new();
    let output = workspace.plan(&["plan", "-u", &site.url("/")]);
    assert_exit(&output, 0, "plan");
    let plan = workspace.json("plan/test-plan.json");
    assert_plan(&workspace, &plan, &site);
    assert_summary(&workspace, &plan);

    let specs = specs(&workspace, &plan);
    for (id, spec) in &specs {
        assert!(spec.starts_with("# "), "{id}:\n{spec}");
        assert!(
            spec.contains("\n## Preconditions\n\n- ") && spec.contains("\n## Steps\n\n1. "),
            "{id}:\n{spec}"
        );
    }
    for id in ["nav-home", "nav-about", "nav-loop-b", "smoke-main-path"] {
        assert!(specs.contains_key(id), "{id} in {:?}", specs.keys());
    }
    let login = &specs["form-login-1"];
    assert!(
        login.contains("{{USERNAME}}") && login.contains("{{PASSWORD}}"),
        "{login}"
    );
    let signup = &specs["form-signup-1"];
    for boundary in ["\"17\"", "\"121\"", "21 characters", "nothing (empty)"] {
        assert!(signup.contains(boundary), "{boundary} in\n{signup}");
    }
    assert_eq!(
        site.requests("/accounts") + site.requests("/session"),
        0,
        "nothing submitted"
    );
    // /missing answered 404: a broken link is no page a case expects to open.
    assert_eq!(page(&workspace.graph(), "missing")["status"], 404);
    for (id, spec) in &specs {
        assert!(
            !spec.contains("/missing") && !spec.contains("Not found"),
            "{id}:\n{spec}"
        );
    }
}

/// `test-plan.json`: the seed's names, the configuration it was made with, whole cases.
fn assert_plan(workspace: &Workspace, plan: &Value, site: &Site) {
    let run_id = workspace
        .run_dir()
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    assert_eq!(plan["runId"], run_id);
    assert!(
        plan["generatedAt"]
            .as_str()
            .is_some_and(|at| at.ends_with('Z')),
        "{plan:#}"
    );
    let config = &plan["configSnapshot"];
    assert_eq!(config["baseUrl"], site.url("/"));
    assert_eq!(
        (&config["maxDepth"], &config["maxPages"]),
        (&Value::from(2), &Value::from(20))
    );
    for case in plan["cases"].as_array().expect("cases") {
        for key in [
            "id",
            "name",
            "type",
            "priority",
            "relatedPageIds",
            "markdownPath",
        ] {
            assert!(case.get(key).is_some(), "{key} in {case:#}");
        }
    }
}

/// `plan-summary.json`: pages, cases, every type's count, the guardrails' counts.
fn assert_summary(workspace: &Workspace, plan: &Value) {
    let cases = plan["cases"].as_array().expect("cases").len();
    let pages = pages(&workspace.graph()).len();
    let summary = workspace.json("plan/plan-summary.json");
    assert_eq!(
        (&summary["pages"], &summary["cases"]),
        (&pages.into(), &cases.into())
    );
    assert_eq!(summary["truncatedBy"], Value::Null);
    assert_eq!(summary["planner"], "baseline");
    let coverage = summary["typeCoverage"].as_object().expect("typeCoverage");
    assert_eq!(
        coverage.keys().map(String::as_str).collect::<BTreeSet<_>>(),
        [
            "boundary",
            "form",
            "functional",
            "navigation",
            "responsive",
            "security"
        ]
        .into()
    );
    assert_eq!(
        coverage.values().filter_map(Value::as_u64).sum::<u64>(),
        cases as u64
    );
    assert_eq!(coverage["form"], 3, "the login, signup and search forms");
    assert_eq!(coverage["functional"], 1, "the smoke flow");
    assert_eq!(
        &summary["guardrails"]["maxSnapshotsPerRun"],
        &serde_json::json!({"count": pages, "limit": null})
    );
    assert_eq!(
        summary["specs"].as_array().map(Vec::len),
        Some(cases),
        "one spec per case"
    );
}

#[test]
#[ignore = "end-to-end tier: needs Chromium; `cargo test --test it -- --ignored` runs it, and so does .ci/run"]
fn test_types_leave_only_the_cases_of_those_types() {
    let (site, _external) = example();
    let workspace = Workspace::new();
    let output = workspace.plan(&["plan", "-u", &site.url("/"), "--test-types", "navigation"]);
    assert_exit(&output, 0, "--test-types navigation");
    let plan = workspace.json("plan/test-plan.json");
    let types: BTreeSet<&str> = plan["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|case| case["type"].as_str().expect("type"))
        .collect();
    assert_eq!(types, ["navigation"].into());
    assert_eq!(
        plan["configSnapshot"]["testTypes"],
        serde_json::json!(["navigation"])
    );
    let coverage = &workspace.json("plan/plan-summary.json")["typeCoverage"];
    assert_eq!(
        (&coverage["form"], &coverage["functional"]),
        (&Value::from(0), &Value::from(0))
    );
}

#[test]
#[ignore = "end-to-end tier: needs Chromium; `cargo test --test it -- --ignored` runs it, and so does .ci/run"]
fn credentials_are_placeholders_and_their_values_reach_no_file() {
    const USER: &str = "ada.lovelace.4f9c@example.test";
    const PASSWORD: &str = "correct-horse-7d1e-battery";
    // The adversary: a page that shows the credentials, as an app shows who is signed in, in
    // its title, its text, a link and a field.
    let external = Site::serve(HashMap::new());
    let mut pages = example_app(&external);
    pages.insert(
        "/about".to_owned(),
        Page::new(
            &format!("Signed in as {USER}"),
            &format!(
                "<h1>Hello {USER}</h1><p>Your password is {PASSWORD}.</p>\n\
                 <a href=\"/\" title=\"{PASSWORD}\">Home of {USER}</a>\n\
                 <form><label for=\"again\">Password again</label>\
                 <input id=\"again\" name=\"again\" value=\"{PASSWORD}\" placeholder=\"{PASSWORD}\"></form>"
            ),
        ),
    );
    let site = Site::serve(pages);
    let workspace = Workspace::with_config(
        "[plan]\n[plan.auth]\nusername_var = \"APP_USER\"\npassword_var = \"APP_PASSWORD\"\n",
    );
    let output = workspace
        .command(&["plan", "-u", &site.url("/")])
        .env("APP_USER", USER)
        .env("APP_PASSWORD", PASSWORD)
        .output()
        .expect("run prpd plan");
    assert_exit(&output, 0, "plan with [plan.auth]");
    let plan = workspace.json("plan/test-plan.json");
    let login = &specs(&workspace, &plan)["form-login-1"];
    assert!(
        login.contains("{{APP_USER}}") && login.contains("{{APP_PASSWORD}}"),
        "{login}"
    );
    assert!(!login.contains("{{USERNAME}}"), "{login}");
    assert_eq!(
        plan["configSnapshot"]["auth"]["passwordVar"],
        "APP_PASSWORD"
    );
    // The page was read, and what it showed is kept with placeholders.
    let about = page(&workspace.graph(), "about").clone();
    assert_eq!(about["title"], "Signed in as {{APP_USER}}");
    assert!(
        element(&about, "Home of {{APP_USER}}")["kind"] == "link",
        "{about:#}"
    );

    let session = workspace.repo.join(".prp-session");
    let files = files_under(&session);
    assert!(
        files
            .iter()
            .any(|file| file.ends_with("plan/test-plan.json"))
            && files
                .iter()
                .any(|file| file.extension().is_some_and(|extension| extension == "jpg")),
        "the scan sees the plan and the snapshots: {files:?}"
    );
    let holding: Vec<String> = files
        .iter()
        .filter(|file| {
            let bytes = std::fs::read(file).expect("read");
            file.to_string_lossy().contains(USER)
                || [USER, PASSWORD].iter().any(|secret| {
                    bytes
                        .windows(secret.len())
                        .any(|window| window == secret.as_bytes())
                })
        })
        .map(|file| file.display().to_string())
        .collect();
    assert!(
        holding.is_empty(),
        "files holding (or named after) a credential's value: {holding:#?}"
    );
    for stream in [&output.stdout, &output.stderr] {
        assert!(!text(stream).contains(PASSWORD) && !text(stream).contains(USER));
    }
}
