//! `prpd plan explore` in several tabs (`[plan] tabs`) finds what it finds in one. On a
//! generated site whose pages answer after different delays (so the tabs finish out of order),
//! with redirects (to a page explored already, and off the site), a missing page, a GET form
//! and many links back, a walk in 4 tabs leaves the same files as a walk in 1 — graph,
//! snapshots, transcript and summary, the times in them set aside — when it ends at the depth
//! limit, at the page limit and at the snapshot guardrail; and the site is asked for the same
//! pages, so the tabs in flight never load one past a limit.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::time::Duration;

use serde_json::Value;

use crate::web_plan::pages;
use crate::web_site::{Page, Site};
use crate::web_workspace::{Workspace, assert_exit, files_under};

/// The pages of the generated site.
const PAGES: usize = 24;

/// `/` for page 0, `/p/<index>` for the others.
fn path(index: usize) -> String {
    if index == 0 {
        "/".to_owned()
    } else {
        format!("/p/{index}")
    }
}

/// The site: page `index` links to three others spread over the site and home, answers after
/// 0 to 240 ms; some pages add a missing page, a redirect to another page, a redirect off the
/// site, or a GET search form. `external` is the site the redirect off leads to.
fn site(external: &Site) -> HashMap<String, Page> {
    let mut site = HashMap::new();
    for index in 0..PAGES {
        let mut body = format!("<h1>Page {index}</h1>\n<nav>\n");
        for target in [
            (index + 1) % PAGES,
            (index * 2 + 1) % PAGES,
            (index * 7 + 3) % PAGES,
            0,
        ] {
            let _ = writeln!(body, "<a href=\"{}\">Page {target}</a>", path(target));
        }
        if index % 6 == 1 {
            let _ = writeln!(body, "<a href=\"/gone/{index}\">Old page</a>");
        }
        if index % 4 == 2 {
            let _ = writeln!(body, "<a href=\"/moved/{index}\">Moved page</a>");
            site.insert(
                format!("/moved/{index}"),
                Page::redirect(&path((index * 5) % PAGES)),
            );
        }
        if index == 3 {
            body.push_str("<a href=\"/away\">Partner</a>\n");
            body.push_str(
                "<form action=\"/search\" method=\"get\"><label for=\"q\">Search</label> \
                 <input id=\"q\" name=\"q\"><button type=\"submit\">Search</button></form>\n",
            );
        }
        body.push_str("</nav>\n");
        let delay = Duration::from_millis(u64::try_from(index * 37 % 7).unwrap_or(0) * 40);
        site.insert(
            path(index),
            Page::new(&format!("Page {index}"), &body).slow(delay),
        );
    }
    site.insert(
        "/away".to_owned(),
        Page::redirect(&external.url("/partner")),
    );
    site.insert(
        "/search".to_owned(),
        Page::new("Search", "<h1>Results</h1><a href=\"/p/9\">Page 9</a>"),
    );
    site
}

/// What a run of `prpd plan explore` in `tabs` tabs (with `config` added to `[plan]`) left,
/// file by file, with the times set aside (`at`, `capturedAt`, `generatedAt`, the run's id);
/// and the requests the site received meanwhile. Chromium's own log is no output of prpd's.
fn explore(
    site: &Site,
    tabs: usize,
    config: &str,
    args: &[&str],
    code: i32,
) -> (BTreeMap<String, Vec<u8>>, HashMap<String, usize>) {
    let before = site.requests_by_path();
    let workspace = Workspace::with_config(&format!("[plan]\ntabs = {tabs}\n{config}"));
    let mut command = vec!["plan", "explore", "-u"];
    let url = site.url("/");
    command.push(&url);
    command.extend(args);
    let output = workspace.plan(&command);
    assert_exit(&output, code, &format!("{tabs} tabs, {config} {args:?}"));
    let run = workspace.run_dir();
    let mut files = BTreeMap::new();
    for file in files_under(&run) {
        let name = file
            .strip_prefix(&run)
            .expect("in the run")
            .display()
            .to_string();
        if name.ends_with("browser.log") {
            continue;
        }
        let bytes = std::fs::read(&file).expect("read");
        let extension = file.extension().and_then(|extension| extension.to_str());
        let bytes = if extension == Some("jsonl") {
            String::from_utf8_lossy(&bytes)
                .lines()
                .map(|line| without_times(line.as_bytes()) + "\n")
                .collect::<String>()
                .into_bytes()
        } else if extension == Some("json") {
            without_times(&bytes).into_bytes()
        } else {
            bytes
        };
        files.insert(name, bytes);
    }
    workspace.assert_closed_cleanly(&format!("{tabs} tabs"));
    let mut asked = site.requests_by_path();
    for (path, count) in before {
        *asked.entry(path).or_default() -= count;
    }
    asked.retain(|path, count| *count > 0 && path != "/favicon.ico");
    (files, asked)
}

/// A JSON document without its time fields.
fn without_times(bytes: &[u8]) -> String {
    let mut value: Value = serde_json::from_slice(bytes).expect("JSON");
    if let Some(fields) = value.as_object_mut() {
        for key in ["at", "capturedAt", "generatedAt", "runId"] {
            fields.remove(key);
        }
    }
    serde_json::to_string_pretty(&value).expect("JSON")
}

/// The same files, one by one, and the same requests.
fn assert_same(
    one: &(BTreeMap<String, Vec<u8>>, HashMap<String, usize>),
    four: &(BTreeMap<String, Vec<u8>>, HashMap<String, usize>),
    what: &str,
) {
    assert_eq!(
        one.0.keys().collect::<Vec<_>>(),
        four.0.keys().collect::<Vec<_>>(),
        "{what}: the same files"
    );
    for (name, bytes) in &one.0 {
        assert!(
            four.0[name] == *bytes,
            "{what}: {name} differs:\none tab:\n{}\nfour tabs:\n{}",
            String::from_utf8_lossy(bytes),
            String::from_utf8_lossy(&four.0[name])
        );
    }
    assert_eq!(
        one.1, four.1,
        "{what}: the site was asked for the same pages"
    );
}

fn graph(run: &(BTreeMap<String, Vec<u8>>, HashMap<String, usize>)) -> Value {
    serde_json::from_slice(&run.0["plan-explore/graph.json"]).expect("graph")
}

#[test]
#[ignore = "end-to-end tier: needs Chromium; `cargo test --test it -- --ignored` runs it, and so does .ci/run"]
fn four_tabs_leave_the_files_of_one_tab_at_every_limit() {
    let external = Site::serve(HashMap::new());
    let site = Site::serve(site(&external));

    let args = ["-d", "3", "--max-pages", "100"];
    let one = explore(&site, 1, "", &args, 0);
    let four = explore(&site, 4, "", &args, 0);
    assert_same(&one, &four, "to the depth limit");
    let everything = graph(&four);
    assert!(pages(&everything).len() > 12, "{everything:#}");
    let reasons: Vec<&str> = everything["skipped"]
        .as_array()
        .expect("skipped")
        .iter()
        .filter_map(|skipped| skipped["reason"].as_str())
        .collect();
    for reason in ["depth", "external"] {
        assert!(reasons.contains(&reason), "{reason}: {everything:#}");
    }

    let args = ["-d", "10", "--max-pages", "7"];
    let one = explore(&site, 1, "", &args, 0);
    let four = explore(&site, 4, "", &args, 0);
    assert_same(&one, &four, "to the page limit");
    let limited = graph(&four);
    assert_eq!(pages(&limited).len(), 7, "{limited:#}");
    assert!(limited["skipped"].to_string().contains("\"pages\""));
    for path in four
        .1
        .keys()
        .filter(|path| *path == "/" || path.starts_with("/p/"))
    {
        assert!(
            pages(&limited)
                .iter()
                .any(|page| page["url"] == site.url(path)),
            "{path} was asked for and is not one of the 7 pages: {limited:#}"
        );
    }

    let args = ["-d", "10"];
    let one = explore(&site, 1, "max_snapshots = 5\n", &args, 1);
    let four = explore(&site, 4, "max_snapshots = 5\n", &args, 1);
    assert_same(&one, &four, "to the snapshot guardrail");
    assert_eq!(pages(&graph(&four)).len(), 5);
}
