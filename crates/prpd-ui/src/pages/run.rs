//! One run's page: where it stands, the escalation report with the Resume and Abort buttons
//! when it waits for a person, the timeline, its iterations (each opened on demand), the
//! receipt, the last QA report, and the pull request.

use std::fmt::Write as _;
use std::io::Read as _;
use std::path::Path;

use prpd_base::paths::SessionPaths;
use prpd_run::machine::State;
use prpd_run::record::RunRecord;
use prpd_run::timeline::Timeline;

use crate::html::{self, escape};
use crate::markdown;
use crate::pages::iteration::Folder;
use crate::runs::{self, Standing};

/// The largest report the page renders; a longer one is cut, and says so.
const MAX_REPORT: usize = 512 * 1024;

/// The whole page of `record` at `now` (Unix seconds).
pub fn page(session: &SessionPaths, record: &RunRecord, now: u64, version: u64) -> String {
    html::page(&record.run_id, version, &main(session, record, now))
}

/// The page's `main`.
pub fn main(session: &SessionPaths, record: &RunRecord, now: u64) -> String {
    let standing = runs::standing(session, record);
    let mut out = String::with_capacity(64 * 1024);
    let _ = write!(
        out,
        "<h1>{prp}</h1>\n<dl class=\"facts\" id=\"facts\" data-run=\"{id}\">\
         <dt>Run</dt><dd>{id}</dd>\
         <dt>State</dt><dd><span id=\"run-state\" class=\"state {state}\">{state}</span></dd>\
         <dt>Phase</dt><dd id=\"run-phase\">{phase}</dd>\
         <dt>QA attempt</dt><dd>{attempt} of 3</dd>\
         <dt>Started</dt><dd>{age} ago</dd>\
         <dt>Iterations</dt><dd>{iterations}</dd>\
         <dt>Cost</dt><dd>{cost}</dd>",
        prp = escape(&record.prp.display().to_string()),
        id = escape(&record.run_id),
        state = standing.word(),
        phase = runs::phase(record)
            .map(|phase| phase.to_string())
            .unwrap_or_default(),
        attempt = record.machine.qa_attempt(),
        age = runs::age(record.started_at, now),
        iterations = record.total_iterations(),
        cost = escape(&runs::cost_text(Some({
            let totals = record.receipt.totals();
            (totals.cost_usd, totals.calls_without_cost)
        }))),
    );
    ship_facts(&mut out, record);
    out.push_str("</dl>\n");
    actions(&mut out, record, standing);
    escalation(&mut out, record);
    let timeline = Timeline::of(record);
    let _ = writeln!(
        out,
        "<section id=\"timeline\"><h2>Timeline</h2>{}<p class=\"hint\">The same picture as a \
         file: <a href=\"/runs/{}/timeline.svg\">timeline.svg</a></p></section>",
        timeline.svg(),
        escape(&record.run_id)
    );
    iterations(&mut out, session, record, &timeline);
    let _ = writeln!(
        out,
        "<section id=\"receipt\"><h2>Receipt</h2>{}</section>",
        markdown::render(&record.receipt.markdown())
    );
    qa_report(&mut out, record);
    out
}

/// The branch, the commit, the pull request: a link when GitHub gave one, else the file.
fn ship_facts(out: &mut String, record: &RunRecord) {
    let ship = &record.ship;
    if let Some(branch) = &ship.branch {
        let _ = write!(
            out,
            "<dt>Branch</dt><dd>{} at {}</dd>",
            escape(branch),
            escape(&ship.short_commit())
        );
    }
    if let Some(pull) = &ship.github_pull_request {
        let url = if pull.html_url.starts_with("https://") || pull.html_url.starts_with("http://") {
            pull.html_url.as_str()
        } else {
            "#"
        };
        let _ = write!(
            out,
            "<dt>Pull request</dt><dd><a id=\"pull-request\" href=\"{}\" rel=\"noreferrer\">#{}</a></dd>",
            escape(url),
            pull.number
        );
    } else if let Some(file) = &ship.pull_request {
        let _ = write!(
            out,
            "<dt>Pull request</dt><dd>not opened: its text is in <code>{}</code></dd>",
            escape(&file.display().to_string())
        );
    }
}

/// Resume for a run that waits (escalated, or interrupted with nothing driving it), Abort for
/// any unfinished one. Both go through the daemon, with the token.
fn actions(out: &mut String, record: &RunRecord, standing: Standing) {
    let id = escape(&record.run_id);
    let resume = matches!(standing, Standing::Escalated | Standing::Interrupted);
    let abort = !record.is_finished();
    if !resume && !abort {
        return;
    }
    out.push_str("<section id=\"actions\" class=\"actions\">");
    if resume {
        let _ = write!(
            out,
            "<button id=\"resume\" data-action=\"/runs/{id}/resume\">Resume</button>"
        );
    }
    if abort {
        let _ = write!(
            out,
            "<button id=\"abort\" class=\"danger\" data-action=\"/runs/{id}/abort\" \
             data-confirm=\"Abort: click again to confirm\">Abort</button>"
        );
    }
    out.push_str(
        "<span class=\"hint\">through the daemon, as <code>prpd resume</code> and \
         <code>prpd abort</code> do</span></section>\n",
    );
}

/// Why the run stopped, and the escalation report.
fn escalation(out: &mut String, record: &RunRecord) {
    let State::Escalated { from, reason } = record.state() else {
        return;
    };
    let _ = write!(
        out,
        "<section id=\"escalation\"><h2>Escalated in {from}</h2><p class=\"reason\">{}</p>",
        escape(&reason.to_string())
    );
    if let Some(path) = &record.escalation_report {
        match read_capped(path) {
            Ok(text) => {
                let _ = write!(
                    out,
                    "<details><summary>The escalation report (what was tried, the last status blocks)</summary>\
                     <div class=\"report\">{}</div></details>",
                    markdown::render(&text)
                );
            }
            Err(error) => {
                let _ = write!(
                    out,
                    "<p class=\"missing\">The report {} cannot be read: {}</p>",
                    escape(&path.display().to_string()),
                    escape(&error.to_string())
                );
            }
        }
    }
    out.push_str("</section>\n");
}

/// Every iteration of the run, newest first, each a closed `details` whose content the page
/// loads when it is opened; its summary says how long it took and how it ended (its bar on the
/// timeline).
fn iterations(out: &mut String, session: &SessionPaths, record: &RunRecord, timeline: &Timeline) {
    let dir = session.run_dir(&record.run_id).join("iterations");
    let mut folders: Vec<Folder> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|entry| Folder::parse(entry.file_name().to_str()?))
                .collect()
        })
        .unwrap_or_default();
    folders.sort_by_key(|folder| folder.sequence);
    // The phase's own calls, in order, match the folders in order (the examiner's have none).
    let mut bars = timeline.bars.iter().filter(|bar| bar.role.is_none());
    let mut lines = Vec::with_capacity(folders.len());
    for folder in &folders {
        let bar = bars
            .by_ref()
            .find(|bar| bar.phase.to_string() == folder.phase && bar.iteration == folder.iteration);
        let ended = bar.map_or_else(String::new, |bar| {
            format!(
                " · {:.1} s · <span class=\"ending {}\">{}</span>",
                bar.seconds,
                bar.ending.class(),
                bar.ending.label()
            )
        });
        lines.push(format!(
            "<details class=\"iteration\" data-iteration=\"{n}\" \
             data-src=\"/runs/{id}/iterations/{n}\"><summary>#{n} · {phase} · iteration {k}{ended}\
             </summary><div class=\"lazy\">Loading…</div></details>",
            n = folder.sequence,
            phase = escape(&folder.phase),
            k = folder.iteration,
            id = escape(&record.run_id),
        ));
    }
    out.push_str("<section id=\"iterations\"><h2>Iterations</h2>");
    if lines.is_empty() {
        out.push_str("<p class=\"empty\">None yet.</p>");
    }
    for line in lines.iter().rev() {
        out.push_str(line);
    }
    out.push_str("</section>\n");
}

/// The run's last QA report, from the file prpd wrote (in which hold-out tests are withheld).
fn qa_report(out: &mut String, record: &RunRecord) {
    let Some(path) = &record.last_qa_report else {
        return;
    };
    let Ok(text) = read_capped(path) else {
        return;
    };
    let _ = writeln!(
        out,
        "<section id=\"qa-report\"><h2>The last QA report</h2><div class=\"report\">{}</div>\
         </section>",
        markdown::render(&text)
    );
}

/// A report's text, cut at [`MAX_REPORT`] bytes: only that much is read.
pub fn read_capped(path: &Path) -> std::io::Result<String> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_REPORT as u64 + 1)
        .read_to_end(&mut bytes)?;
    let cut = bytes.len() > MAX_REPORT;
    bytes.truncate(MAX_REPORT);
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    if cut {
        text.push_str("\n\n*(cut: the rest is in the file)*\n");
    }
    Ok(text)
}
