//! The timeline drawn as one self-contained SVG file: no external reference, no script, an
//! inline style. It stands apart from the timeline's data because its concerns are the
//! drawing's: the geometry (a fixed width, bars proportional to their time but never too thin
//! to see), the words a person reads without hovering (a summary per visit, a legend), and
//! escaping, since reasons, model names and run ids come from agents and people.
//!
//! Its classes and data attributes are an interface a web page styles and queries: the root
//! `svg.timeline`, a `g.phase[data-phase][data-attempt]` per visit, and in it a
//! `rect.bar.<ending>[data-phase][data-iteration]` per call (the examiner's with
//! `data-role`), whose `<title>` says why it ended so.

use std::fmt::Write as _;

use prpd_base::markup::escape;

use super::{Bar, Ending, Timeline, Visit};

/// The drawing's width, in pixels.
const WIDTH: f64 = 960.0;
/// The space left and right of everything.
const MARGIN: f64 = 12.0;
/// The space between two visits.
const VISIT_GAP: f64 = 6.0;
/// The thinnest a bar is drawn, so that a 0.4 s call shows; less only when the bars would not
/// fit the width otherwise.
const MIN_BAR: f64 = 3.0;
/// Where the visits' labels stand, and the bars' top and height.
const LABEL_BASELINE: f64 = 50.0;
const BAR_TOP: f64 = 56.0;
const BAR_HEIGHT: f64 = 24.0;
/// The summary's first line, and the height of a line of text.
const SUMMARY_TOP: f64 = 100.0;
const LINE_HEIGHT: f64 = 16.0;
/// The visits' summaries stand in this many columns.
const COLUMNS: usize = 3;
/// Rough widths of a character of the visits' labels (bold capitals) and of the legend's
/// small letters and capitals, to tell whether a label fits and where the next key goes.
const LABEL_CHAR_WIDTH: f64 = 7.0;
const LEGEND_CHAR_WIDTH: f64 = 6.0;
const LEGEND_CAPITAL_WIDTH: f64 = 9.0;
/// How much of a bar's reasons its title quotes, and of an escalation the header.
const REASONS_CHARS: usize = 100;
const ESCALATION_CHARS: usize = 140;

/// The colours: distinct in hue and lightness where possible, for readers who do not tell red
/// from green; a running bar is striped rather than animated.
const STYLE: &str = ".timeline{font:11px system-ui,-apple-system,\"Segoe UI\",sans-serif;fill:#212121}\
.timeline .head{font-size:13px;font-weight:600}.timeline .note{fill:#555}\
.timeline .label{font-size:10px;font-weight:600}.timeline .bar{stroke:#fff;stroke-width:.5}\
.timeline .passed{fill:#2e7d32}.timeline .failed{fill:#f9a825}.timeline .approve{fill:#004d40}\
.timeline .reject{fill:#c62828}.timeline .breaker{fill:#6a1b9a}.timeline .guardrail{fill:#1565c0}\
.timeline .budget{fill:#5d4037}.timeline .stopped{fill:#9e9e9e}\
.timeline .running{fill:url(#timeline-running)}";

impl Timeline {
    /// The timeline as a self-contained SVG document.
    pub fn svg(&self) -> String {
        let plot = WIDTH - 2.0 * MARGIN - gaps(self.visits.len());
        let seconds: Vec<f64> = self.bars.iter().map(|bar| bar.seconds).collect();
        let widths = widths(&seconds, plot, MIN_BAR);
        let summary_rows = self.visits.len().div_ceil(COLUMNS).max(1);
        let legend_top = SUMMARY_TOP + count(summary_rows) * LINE_HEIGHT + 8.0;
        let (legend, legend_rows) = legend(legend_top);
        let height = legend_top + count(legend_rows) * LINE_HEIGHT + 8.0;

        let mut out = String::new();
        let _ = write!(
            out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" data-run=\"{run}\" \
             width=\"{WIDTH}\" height=\"{height}\" viewBox=\"0 0 {WIDTH} {height}\" role=\"img\">\n\
             <title>The timeline of run {run}</title>\n<style>{STYLE}</style>\n\
             <defs><pattern id=\"timeline-running\" width=\"8\" height=\"8\" \
             patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">\
             <rect width=\"8\" height=\"8\" fill=\"#bbdefb\"/><rect width=\"4\" height=\"8\" \
             fill=\"#64b5f6\"/></pattern></defs>\n",
            run = escape(&self.run_id),
        );
        self.header(&mut out);
        let mut x = MARGIN;
        for (number, visit) in self.visits.iter().enumerate() {
            let bars = visit.first_bar..visit.first_bar + visit.bar_count;
            let width: f64 = widths[bars.clone()].iter().sum();
            let _ = writeln!(
                out,
                "<g class=\"phase\" data-phase=\"{}\" data-attempt=\"{}\">",
                visit.phase, visit.attempt
            );
            if let Some(label) = visit_label(visit, number + 1, width + VISIT_GAP) {
                let _ = writeln!(
                    out,
                    "<text class=\"label\" x=\"{x:.1}\" y=\"{LABEL_BASELINE}\">{}</text>",
                    escape(&label)
                );
            }
            for index in bars {
                bar(&mut out, &self.bars[index], x, widths[index]);
                x += widths[index];
            }
            let column = number % COLUMNS;
            let row = number / COLUMNS;
            let _ = writeln!(
                out,
                "<text class=\"summary\" x=\"{:.1}\" y=\"{}\">{}</text>\n</g>",
                MARGIN + count(column) * (WIDTH - 2.0 * MARGIN) / count(COLUMNS),
                SUMMARY_TOP + count(row) * LINE_HEIGHT,
                summary(visit, number + 1),
            );
            x += VISIT_GAP;
        }
        if self.visits.is_empty() {
            let _ = writeln!(
                out,
                "<text class=\"note\" x=\"{MARGIN}\" y=\"{}\">No agent was called.</text>",
                BAR_TOP + BAR_HEIGHT / 2.0
            );
        }
        out.push_str(&legend);
        out.push_str("</svg>\n");
        out
    }

    /// The run, its state and its time; under it, why it escalated, or how to read the rest.
    fn header(&self, out: &mut String) {
        let calls = self.bars.len();
        let _ = writeln!(
            out,
            "<text class=\"head\" x=\"{MARGIN}\" y=\"18\">Run {} · {} · {} in {calls} agent call{}</text>",
            escape(&self.run_id),
            escape(&self.state),
            duration(self.seconds()),
            if calls == 1 { "" } else { "s" },
        );
        let note = match &self.escalation {
            Some(reason) => format!("Escalated: {}", cut(reason, ESCALATION_CHARS)),
            None => "Phases left to right in time order; a bar per agent call, as wide as its \
                     iteration took (prpd's work around the call included); hover a bar for why \
                     it ended so."
                .to_owned(),
        };
        let _ = writeln!(
            out,
            "<text class=\"note\" x=\"{MARGIN}\" y=\"34\">{}</text>",
            escape(&note)
        );
    }
}

/// One bar, with its title.
fn bar(out: &mut String, bar: &Bar, x: f64, width: f64) {
    let role = bar.role.as_ref().map_or_else(String::new, |role| {
        format!(" data-role=\"{}\"", escape(role))
    });
    let _ = writeln!(
        out,
        "<rect class=\"bar {}\" data-phase=\"{}\" data-iteration=\"{}\"{role} x=\"{x:.1}\" \
         y=\"{BAR_TOP}\" width=\"{width:.1}\" height=\"{BAR_HEIGHT}\"><title>{}</title></rect>",
        bar.ending.class(),
        bar.phase,
        bar.iteration,
        escape(&bar_title(bar)),
    );
}

/// What a bar's hover says: which call, how long, which agent, how it ended and why.
fn bar_title(bar: &Bar) -> String {
    let call = match &bar.role {
        Some(role) => format!("{} {role}", bar.phase),
        None => format!("{} iteration {}", bar.phase, bar.iteration),
    };
    let parts: Vec<String> = [
        bar.prepared_seconds
            .map(|seconds| format!("prpd before {seconds:.1} s")),
        Some(format!("agent {:.1} s", bar.wall_seconds)),
        bar.measured_seconds
            .map(|seconds| format!("prpd after {seconds:.1} s")),
    ]
    .into_iter()
    .flatten()
    .collect();
    let time = match parts.len() {
        1 => duration(bar.seconds),
        _ => format!("{} ({})", duration(bar.seconds), parts.join(", ")),
    };
    let agent = match &bar.model {
        Some(model) => format!("{}, {model}", bar.agent),
        None => bar.agent.clone(),
    };
    let ending = bar.ending.label();
    let why = if bar.reasons.is_empty() {
        ending.to_owned()
    } else {
        format!("{ending}: {}", cut(&bar.reasons.join("; "), REASONS_CHARS))
    };
    format!(
        "{call} (attempt {}) · {time} · {agent} · {why}",
        bar.attempt
    )
}

/// The label over a visit that is `room` wide: the phase and attempt, shorter when it does not
/// fit, its number in the summary when even that does not, nothing below a character.
fn visit_label(visit: &Visit, number: usize, room: f64) -> Option<String> {
    [
        format!("{} · attempt {}", visit.phase, visit.attempt),
        format!("{} {}", visit.phase, visit.attempt),
        number.to_string(),
    ]
    .into_iter()
    .find(|label| count(label.chars().count()) * LABEL_CHAR_WIDTH <= room)
}

/// A visit in words: its number (as the label over it may show), phase, attempt, calls, time.
fn summary(visit: &Visit, number: usize) -> String {
    format!(
        "{number}. {}, attempt {}: {} call{}, {}",
        visit.phase,
        visit.attempt,
        visit.bar_count,
        if visit.bar_count == 1 { "" } else { "s" },
        duration(visit.seconds)
    )
}

/// Every ending's colour and label, wrapped to the width, from `top`; and how many rows it
/// takes.
fn legend(top: f64) -> (String, usize) {
    let mut out = String::from("<g class=\"legend\">\n");
    let (mut x, mut y, mut rows) = (MARGIN, top, 1);
    for ending in Ending::ALL {
        let label = ending.label();
        let capitals = label.chars().filter(char::is_ascii_uppercase).count();
        let width = 14.0
            + count(label.len() - capitals) * LEGEND_CHAR_WIDTH
            + count(capitals) * LEGEND_CAPITAL_WIDTH
            + 12.0;
        if x + width > WIDTH - MARGIN {
            x = MARGIN;
            y += LINE_HEIGHT;
            rows += 1;
        }
        let _ = writeln!(
            out,
            "<rect class=\"key {}\" x=\"{x:.1}\" y=\"{:.1}\" width=\"10\" height=\"10\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\">{label}</text>",
            ending.class(),
            y - 9.0,
            x + 14.0,
            y,
        );
        x += width;
    }
    out.push_str("</g>\n");
    (out, rows)
}

/// The space the gaps between `visits` visits take.
fn gaps(visits: usize) -> f64 {
    count(visits.saturating_sub(1)) * VISIT_GAP
}

/// Widths for bars of `seconds` that fill `available`: in proportion to their seconds, except
/// that none is thinner than `minimum` (itself lowered when the bars would not fit otherwise);
/// the bars that would be are drawn at `minimum`, and the rest share what remains.
pub(super) fn widths(seconds: &[f64], available: f64, minimum: f64) -> Vec<f64> {
    if seconds.is_empty() {
        return Vec::new();
    }
    let minimum = minimum.min(available / count(seconds.len()));
    let mut thin = vec![false; seconds.len()];
    loop {
        let fixed = count(thin.iter().filter(|thin| **thin).count()) * minimum;
        let shared: f64 = seconds
            .iter()
            .zip(&thin)
            .filter(|(_, thin)| !**thin)
            .map(|(seconds, _)| seconds.max(0.0))
            .sum();
        let scale = if shared > 0.0 {
            (available - fixed) / shared
        } else {
            0.0
        };
        let mut changed = false;
        for (seconds, thin) in seconds.iter().zip(thin.iter_mut()) {
            if !*thin && seconds.max(0.0) * scale < minimum {
                *thin = true;
                changed = true;
            }
        }
        if !changed {
            return seconds
                .iter()
                .zip(&thin)
                .map(|(seconds, thin)| if *thin { minimum } else { seconds * scale })
                .collect();
        }
    }
}

/// `41.2 s`, `3 min 5 s`, `1 h 12 min`.
fn duration(seconds: f64) -> String {
    if seconds < 59.95 {
        return format!("{seconds:.1} s");
    }
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "a run's seconds are positive and far below 2^64"
    )]
    let whole = seconds.round() as u64;
    if whole < 3600 {
        format!("{} min {} s", whole / 60, whole % 60)
    } else {
        format!("{} h {} min", whole / 3600, whole % 3600 / 60)
    }
}

/// `text` cut to `max` characters.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// `count` as a length.
#[expect(
    clippy::cast_precision_loss,
    reason = "counts of bars, visits and characters stay far below 2^52"
)]
fn count(count: usize) -> f64 {
    count as f64
}
