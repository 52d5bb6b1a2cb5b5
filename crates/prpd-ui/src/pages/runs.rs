//! The runs page: every run of the repository — queued, running, escalated, shipped, aborted —
//! with its PRP, phase, QA attempt, age and cost, the runs that wait for a person first.

use std::fmt::Write as _;
use std::path::Path;

use crate::html::{self, escape};
use crate::runs::{self, Row, Standing};

/// The page's `main`, for the runs of `repo` at `now` (Unix seconds).
pub fn main(repo: &Path, rows: &[Row], now: u64) -> String {
    let name = repo.file_name().map_or_else(
        || repo.display().to_string(),
        |name| name.to_string_lossy().into_owned(),
    );
    let mut out = format!("<h1>Runs of {}</h1>\n", escape(&name));
    let waiting: Vec<&Row> = rows
        .iter()
        .filter(|row| row.standing == Standing::Escalated)
        .collect();
    if !waiting.is_empty() {
        out.push_str("<section id=\"waiting\"><h2>Waiting for you</h2><ul>");
        for row in waiting {
            let id = row.run_id.as_deref().unwrap_or_default();
            let _ = write!(
                out,
                "<li><a href=\"/runs/{id}\">{id}</a> · {prp} escalated in {phase}</li>",
                id = escape(id),
                prp = escape(&row.prp.display().to_string()),
                phase = row.phase.map(|phase| phase.to_string()).unwrap_or_default(),
            );
        }
        out.push_str("</ul></section>\n");
    }
    if rows.is_empty() {
        out.push_str(
            "<p class=\"empty\">No run yet. Drop a PRP where the daemon watches, or run \
             <code>prpd queue PRPs/feature.md</code>.</p>",
        );
        return out;
    }
    out.push_str(
        "<table id=\"runs\"><thead><tr><th>Run</th><th>PRP</th><th>State</th><th>Phase</th>\
         <th>QA attempt</th><th>Age</th><th>Cost</th></tr></thead><tbody>\n",
    );
    for row in rows {
        let state = row.standing.word();
        let phase = row.phase.map(|phase| phase.to_string()).unwrap_or_default();
        let link = match &row.run_id {
            Some(id) => format!("<a href=\"/runs/{id}\">{id}</a>", id = escape(id)),
            None => "—".to_owned(),
        };
        let prp = match &row.refused {
            Some(why) => format!("<span class=\"refused\">{}</span>", escape(why)),
            None => escape(&row.prp.display().to_string()),
        };
        let attempt = if row.attempt > 0 {
            row.attempt.to_string()
        } else {
            String::new()
        };
        let age = if row.since > 0 {
            runs::age(row.since, now)
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "<tr data-run=\"{id}\" data-state=\"{state}\" data-phase=\"{phase}\"><td>{link}</td>\
             <td>{prp}</td><td><span class=\"state {state}\">{state}</span></td><td>{phase}</td>\
             <td>{attempt}</td><td>{age}</td><td>{cost}</td></tr>",
            id = escape(row.run_id.as_deref().unwrap_or_default()),
            cost = escape(&runs::cost_text(row.cost)),
        );
    }
    out.push_str("</tbody></table>\n");
    out
}

/// The whole runs page.
pub fn page(repo: &Path, rows: &[Row], now: u64, version: u64) -> String {
    html::page("Runs", version, &main(repo, rows, now))
}
