//! The dashboard in a real browser (the end-to-end tier: the headless Chromium `prpd plan`
//! drives), served by the daemon (`prpd watch --ui`) for a run that QA rejected once and whose
//! REFACTOR breaker then opened. The runs page lists the run as escalated. Its page, opened
//! from the URL with the token, draws the timeline (every visit, a bar per agent call, the
//! REJECT and the breaker), shows what the stuck agent printed as text when its iteration is
//! opened, and takes the token off the address bar. A resume the page's own script sends
//! without the token is refused and changes nothing; the Resume button, which sends it, resumes
//! the run, and the open page follows it to SHIPPED without reloading.
//!
//! With `PRPD_SCREENSHOT=path.jpg` the test also saves the run page while it waits for a
//! person: the picture the book shows (`docs/src/images/run-page.jpg`). Without it, the test
//! writes nothing outside its temporary directories.

use std::path::Path;
use std::time::{Duration, Instant};

use prpd_web::browser::{Browser, Tab};
use serde_json::{Value, json};

use crate::run::read;
use crate::ui::escalated_under_the_dashboard;
use crate::watch::{PATIENCE, state};

/// The variable naming the file the screenshot of the run page goes to.
const SCREENSHOT_VARIABLE: &str = "PRPD_SCREENSHOT";

/// The screenshot's viewport: a laptop's width, tall enough for the facts, the escalation, the
/// buttons and the timeline.
const SCREENSHOT_VIEWPORT: (u32, u32) = (1280, 1000);

#[test]
#[ignore = "end-to-end tier: needs Chromium; `cargo test --test it -- --ignored` runs it, and so does .ci/run"]
fn in_chromium_the_run_page_refuses_a_tokenless_resume_and_follows_the_resume_live() {
    let (repo, daemon, base, token, run) = escalated_under_the_dashboard();

    let scratch = tempfile::tempdir().expect("tempdir");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let mut browser = Browser::start(&scratch.path().join("chromium.log"))
            .await
            .expect("start Chromium");
        let mut tab = browser.new_tab().await.expect("a tab");
        runs_page(&mut tab, &base, &run).await;
        run_page(&mut tab, repo.path(), &base, &token, &run).await;
        if let Some(path) = std::env::var_os(SCREENSHOT_VARIABLE) {
            screenshot(&mut tab, Path::new(&path)).await;
        }
        stuck_output_is_text(&mut tab).await;
        tokenless_resume_is_refused(&mut tab, repo.path(), &run).await;
        resume_updates_the_page_live(&mut tab).await;
        browser.close().await;
    });
    assert_eq!(state(repo.path()), "SHIPPED");
    drop(daemon);
}

/// `/`: the run is in the table, escalated in REFACTOR.
async fn runs_page(tab: &mut Tab, base: &str, run: &str) {
    tab.open(base).await.expect("open the runs page");
    let rows = evaluate(
        tab,
        "Array.from(document.querySelectorAll('table#runs tbody tr')).map(row => \
         ({run: row.dataset.run, state: row.dataset.state, phase: row.dataset.phase}))",
    )
    .await;
    assert!(
        rows.as_array()
            .is_some_and(|rows| rows
                .contains(&json!({"run": run, "state": "escalated", "phase": "REFACTOR"}))),
        "{rows:#}"
    );
}

/// `/runs/<id>#token=…`: where the run stands, the buttons, the timeline; the token kept for
/// the tab and gone from the address bar.
async fn run_page(tab: &mut Tab, repo: &Path, base: &str, token: &str, run: &str) {
    tab.open(&format!("{base}runs/{run}#token={token}"))
        .await
        .expect("open the run page");
    let facts = evaluate(
        tab,
        "({state: document.getElementById('run-state').textContent, \
          phase: document.getElementById('run-phase').textContent, \
          resume: !!document.querySelector('button#resume[data-action]'), \
          abort: !!document.querySelector('button#abort[data-action]'), \
          escalation: document.querySelector('#escalation h2').textContent})",
    )
    .await;
    assert_eq!(
        facts,
        json!({"state": "escalated", "phase": "REFACTOR", "resume": true, "abort": true,
               "escalation": "Escalated in REFACTOR"}),
    );

    let timeline = evaluate(
        tab,
        "(() => { const svg = document.querySelector('main svg.timeline'); \
         return {visits: Array.from(svg.querySelectorAll('g.phase')).map(visit => \
           visit.dataset.phase + ' ' + visit.dataset.attempt), \
         bars: Array.from(svg.querySelectorAll('rect.bar[data-phase][data-iteration]')).map(bar => \
           bar.getAttribute('class'))}; })()",
    )
    .await;
    let visits: Vec<&str> = strings(&timeline["visits"]);
    for visit in [
        "RED 1",
        "GREEN 1",
        "REFACTOR 1",
        "DOCUMENT 1",
        "QA 1",
        "GREEN 2",
    ] {
        assert!(visits.contains(&visit), "{visit} in {visits:?}");
    }
    let bars: Vec<&str> = strings(&timeline["bars"]);
    let record: Value = serde_json::from_str(&read(
        &repo.join(format!(".prp-session/runs/{run}/state.json")),
    ))
    .expect("the record is JSON");
    let calls = record["receipt"]["lines"]
        .as_array()
        .expect("receipt lines")
        .len();
    assert!(
        calls > 0 && bars.len() >= calls,
        "{} bars for {calls} agent calls: {bars:?}",
        bars.len()
    );
    for ending in ["bar reject", "bar breaker"] {
        assert!(bars.contains(&ending), "{ending} in {bars:?}");
    }

    let address = evaluate(
        tab,
        "({href: location.href, hash: location.hash, kept: sessionStorage.getItem('prpd-token')})",
    )
    .await;
    assert_eq!(
        address,
        json!({"href": format!("{base}runs/{run}"), "hash": "", "kept": token}),
        "the token leaves the address bar and stays with the tab"
    );
}

/// The run page at the screenshot's size, from the top (the escalation report folded, as the
/// page shows it), saved as a JPEG at `path`.
async fn screenshot(tab: &mut Tab, path: &Path) {
    tab.set_viewport(SCREENSHOT_VIEWPORT.0, SCREENSHOT_VIEWPORT.1)
        .await
        .expect("viewport");
    evaluate(tab, "window.scrollTo(0, 0); true").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let jpeg = tab.screenshot_jpeg().await.expect("screenshot");
    std::fs::write(path, &jpeg).expect("write the screenshot");
    eprintln!("the run page: {} ({} bytes)", path.display(), jpeg.len());
}

/// The stuck REFACTOR iteration, opened: its `<script>` is text, and nothing ran (an `alert`
/// would have set a flag).
async fn stuck_output_is_text(tab: &mut Tab) {
    evaluate(tab, "window.alert = () => { window.__pwned = true; }; true").await;
    let refactor = evaluate(
        tab,
        "Array.from(document.querySelectorAll('main details.iteration')).filter(details => \
         details.querySelector('summary').textContent.includes('REFACTOR')).map(details => \
         details.dataset.iteration)",
    )
    .await;
    let sequences = strings(&refactor);
    assert!(sequences.len() >= 3, "{refactor:#}");
    for sequence in &sequences {
        tab.click(&format!(
            "main details.iteration[data-iteration=\"{sequence}\"] > summary"
        ))
        .await
        .expect("open an iteration");
    }
    until(
        tab,
        "the REFACTOR iterations to load",
        &format!(
            "document.querySelectorAll('main details.iteration[open] pre.output').length === {}",
            sequences.len()
        ),
    )
    .await;
    let shown = evaluate(
        tab,
        "(() => { const stuck = Array.from(document.querySelectorAll('main details.iteration[open] \
         pre.output')).find(pre => pre.textContent.includes('stuck <script>')); \
         return {text: stuck ? stuck.textContent : null, \
         elements: stuck ? stuck.children.length : null, \
         scripts: document.querySelectorAll('main script').length, \
         pwned: typeof window.__pwned}; })()",
    )
    .await;
    assert!(
        shown["text"]
            .as_str()
            .is_some_and(|text| text.contains("stuck <script>alert(\"agent\")</script>")),
        "{shown:#}"
    );
    assert_eq!(shown["elements"], 0, "{shown:#}");
    assert_eq!(shown["scripts"], 0, "{shown:#}");
    assert_eq!(shown["pwned"], "undefined", "{shown:#}");
}

/// The page's script posts a resume without the token: 403, and the record stays as it was.
async fn tokenless_resume_is_refused(tab: &mut Tab, repo: &Path, run: &str) {
    let record = repo.join(format!(".prp-session/runs/{run}/state.json"));
    let before = read(&record);
    let answer = evaluate(
        tab,
        &format!(
            "fetch({}, {{method: 'POST'}}).then(response => response.text().then(body => \
             ({{status: response.status, body}})))",
            json!(format!("/runs/{run}/resume"))
        ),
    )
    .await;
    assert_eq!(answer["status"], 403, "{answer:#}");
    assert!(
        answer["body"]
            .as_str()
            .is_some_and(|body| body.contains("X-Prpd-Token")),
        "{answer:#}"
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(read(&record), before, "a refused resume changed the record");
    assert_eq!(state(repo), "ESCALATED");
}

/// Resume: the flash line says the daemon's answer, and the same page (never reloaded) follows
/// the run out of REFACTOR to SHIPPED as the server's events arrive.
async fn resume_updates_the_page_live(tab: &mut Tab) {
    evaluate(tab, "window.__notReloaded = true; true").await;
    tab.click("#resume").await.expect("click Resume");
    let flash = until(
        tab,
        "the daemon's answer",
        "(() => { const line = document.getElementById('flash'); return line.textContent ? \
         {text: line.textContent, class: line.className} : null; })()",
    )
    .await;
    assert_eq!(flash["class"], "ok", "{flash:#}");
    assert!(
        flash["text"]
            .as_str()
            .is_some_and(|text| text.ends_with("resumes now")),
        "{flash:#}"
    );
    let standing = "({state: document.getElementById('run-state').textContent, \
                    phase: document.getElementById('run-phase').textContent, \
                    notReloaded: window.__notReloaded === true, \
                    live: document.getElementById('live').className, \
                    resume: !!document.getElementById('resume')})";
    until(
        tab,
        "the page to leave REFACTOR",
        &format!("(s => s.phase !== 'REFACTOR' ? s : null)({standing})"),
    )
    .await;
    let shipped = until(
        tab,
        "the page to show the run shipped",
        &format!("(s => s.state === 'shipped' ? s : null)({standing})"),
    )
    .await;
    assert_eq!(shipped["notReloaded"], true, "the page was reloaded");
    assert_eq!(shipped["live"], "on", "{shipped:#}");
    assert_eq!(shipped["resume"], false, "{shipped:#}");
    let navigations = evaluate(tab, "performance.getEntriesByType('navigation').length").await;
    assert_eq!(navigations, 1);
}

async fn evaluate(tab: &mut Tab, expression: &str) -> Value {
    tab.evaluate(expression)
        .await
        .unwrap_or_else(|error| panic!("{expression}: {error}"))
}

/// Evaluates `expression` every 100 ms until it is neither `null` nor `false`; its value.
async fn until(tab: &mut Tab, what: &str, expression: &str) -> Value {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let value = evaluate(tab, expression).await;
        if !value.is_null() && value != Value::Bool(false) {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn strings(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .map(|items| items.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}
