//! The run's receipt: one line per agent call, with the agent, the model its CLI reported, the
//! tokens by kind, the cost, the wall time, what prpd's measurement concluded and why the phase
//! went round again. It is what a person reads to know what a change cost, in `prpd receipt`,
//! `prpd status`, `summary.json`, the QA report and the pull request.
//!
//! A cost is only ever a figure the CLI reported or one priced from `[prices]` by the model the
//! CLI reported; a call whose CLI reported no usage, or whose model has no price, has an unknown
//! cost, and the totals say how many calls they leave out instead of counting them as zero.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::agent::Usage;
use crate::config::Prices;
use crate::record::TokenUsage;
use prpd_base::phase::Phase;

/// Every agent call of a run, in order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Receipt {
    pub lines: Vec<ReceiptLine>,
}

/// One agent call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReceiptLine {
    pub phase: Phase,
    /// The iteration of the phase's current visit.
    pub iteration: u32,
    /// The QA attempt the call belongs to.
    pub attempt: u32,
    /// When the call started (Unix seconds), for the daily budgets.
    #[serde(default)]
    pub started_at: u64,
    /// Who was called when it was not the phase's own agent (`examiner`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// The program that ran (`claude`, `codex`, `aider`, a script).
    pub agent: String,
    /// The model as the CLI reported it; else the one prpd.toml asked for, marked so.
    pub model: Option<String>,
    /// Whether `model` is what the CLI reported (`false`: prpd.toml's choice).
    pub model_reported: bool,
    /// The tokens the CLI reported; `None`: it reported no usage.
    pub tokens: Option<TokenUsage>,
    /// US dollars; `None` when unknown (see `cost`).
    pub cost_usd: Option<f64>,
    pub cost: CostSource,
    pub wall_seconds: f64,
    /// What prpd's measurement concluded: `done`, `again`, `APPROVE`, `REJECT`, `stopped`.
    #[serde(default)]
    pub verdict: Option<String>,
    /// Why the phase went round again (unmet gate conditions, REJECT items), or what stopped
    /// the call (a budget, a breaker).
    #[serde(default)]
    pub reasons: Vec<String>,
    /// The seconds prpd spent on the iteration before the call (QA: its checklist; the
    /// prompt); `None` when prpd restarted in between, or the call is not an iteration's (the
    /// examiner's).
    #[serde(default)]
    pub prepared_seconds: Option<f64>,
    /// The seconds prpd spent after the call measuring the tree until the gate (QA: the
    /// verdict) was decided; `None` when prpd restarted in between, or no gate judges the call
    /// (the examiner's). The iteration took `prepared_seconds`, `wall_seconds` and these.
    #[serde(default)]
    pub measured_seconds: Option<f64>,
    /// What escalated the run after this call, on the last call before the escalation; it is
    /// set even when the call has a verdict (a breaker opens after an `again`).
    #[serde(default)]
    pub stop: Option<LineStop>,
}

/// What escalated the run after a call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineStop {
    pub by: StopKind,
    /// The escalation's reason as the report words it.
    pub reason: String,
}

/// What kind of escalation stopped the run: the escalation's reason, with a budget told apart
/// from the other guardrails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopKind {
    /// A phase's circuit breaker opened.
    Breaker,
    /// A guardrail (`max_agent_invocations`, `max_wall_time`) was reached.
    Guardrail,
    /// A budget of tokens or dollars (`max_cost_usd`, …) was used up.
    Budget,
    /// QA rejected the work for the third time.
    QaRejectedThrice,
    /// The agent failed in a way another iteration cannot fix.
    Agent,
    /// SHIP failed (the push, the pull request).
    Ship,
    /// A `[run] setup` command failed.
    Setup,
}

impl StopKind {
    /// What happened, in a few words.
    pub fn label(self) -> &'static str {
        match self {
            StopKind::Breaker => "breaker opened",
            StopKind::Guardrail => "guardrail reached",
            StopKind::Budget => "budget used up",
            StopKind::QaRejectedThrice => "QA rejected three times",
            StopKind::Agent => "agent failed",
            StopKind::Ship => "ship failed",
            StopKind::Setup => "setup failed",
        }
    }
}

/// Where a line's cost comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CostSource {
    /// The CLI reported it (Claude Code's `total_cost_usd`, Aider's `Cost:` line).
    Reported,
    /// Priced from `[prices]` by the reported model and tokens.
    Priced,
    /// Tokens were reported, but `[prices]` knows no price for the model.
    UnknownPrice,
    /// The CLI reported no usage at all.
    NotReported,
}

impl CostSource {
    fn label(self) -> &'static str {
        match self {
            CostSource::Reported => "reported",
            CostSource::Priced => "priced",
            CostSource::UnknownPrice => "unknown price",
            CostSource::NotReported => "usage not reported",
        }
    }
}

/// The cost of `usage` and where it comes from: the CLI's figure, else `[prices]` for `model`.
pub fn cost_of(
    usage: Option<&Usage>,
    model: Option<&str>,
    prices: &Prices,
) -> (Option<f64>, CostSource) {
    let Some(usage) = usage else {
        return (None, CostSource::NotReported);
    };
    if let Some(cost) = usage.cost_usd {
        return (Some(cost), CostSource::Reported);
    }
    match model.and_then(|model| prices.of(model)) {
        Some(price) => (
            Some(price.cost(
                usage.input_tokens,
                usage.cache_write_tokens,
                usage.cache_read_tokens,
                usage.output_tokens,
            )),
            CostSource::Priced,
        ),
        None => (None, CostSource::UnknownPrice),
    }
}

/// The sums of a receipt.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Totals {
    pub calls: u32,
    pub tokens: TokenUsage,
    /// The sum of the known costs, to a millionth of a dollar.
    pub cost_usd: f64,
    /// Calls whose cost is unknown (no usage reported, or no price), left out of `cost_usd`.
    pub calls_without_cost: u32,
    pub wall_seconds: f64,
}

impl ReceiptLine {
    /// The tokens the token budgets count: fresh input, cache writes and output (see
    /// [`Usage::billed_tokens`]).
    pub fn billed_tokens(&self) -> u64 {
        self.tokens.map_or(0, |tokens| {
            tokens.input + tokens.cache_write + tokens.output
        })
    }
}

impl Receipt {
    /// Sums every line.
    pub fn totals(&self) -> Totals {
        let mut totals = Totals::default();
        for line in &self.lines {
            totals.calls += 1;
            if let Some(tokens) = line.tokens {
                totals.tokens.input += tokens.input;
                totals.tokens.cache_write += tokens.cache_write;
                totals.tokens.cache_read += tokens.cache_read;
                totals.tokens.output += tokens.output;
            }
            match line.cost_usd {
                Some(cost) => totals.cost_usd += cost,
                None => totals.calls_without_cost += 1,
            }
            totals.wall_seconds += line.wall_seconds;
        }
        totals.cost_usd = (totals.cost_usd * 1e6).round() / 1e6;
        totals
    }

    /// Where the last line of `phase`'s iteration `iteration` that is the phase's own agent
    /// is in `lines`.
    pub fn position(&self, phase: Phase, iteration: u32) -> Option<usize> {
        self.lines.iter().rposition(|line| {
            line.phase == phase && line.iteration == iteration && line.role.is_none()
        })
    }

    /// The receipt as a Markdown table with a total line, for the QA report, `pr.md` and
    /// `prpd receipt`.
    pub fn markdown(&self) -> String {
        if self.lines.is_empty() {
            return "No agent was called.\n".to_owned();
        }
        let mut text = String::from(
            "| # | Phase | Agent | Model | Tokens in / cache w / cache r / out | Cost | Time | Verdict | Why again |\n\
             |---|---|---|---|---|---|---|---|---|\n",
        );
        for (index, line) in self.lines.iter().enumerate() {
            let phase = match &line.role {
                Some(role) => format!("{} {} ({role})", line.phase, line.iteration),
                None => format!("{} {}", line.phase, line.iteration),
            };
            let model = model_cell(line);
            let tokens = match line.tokens {
                Some(tokens) => format!(
                    "{} / {} / {} / {}",
                    tokens.input, tokens.cache_write, tokens.cache_read, tokens.output
                ),
                None => "not reported".to_owned(),
            };
            let cost = match line.cost_usd {
                Some(cost) => format!("${cost:.4} ({})", line.cost.label()),
                None => line.cost.label().to_owned(),
            };
            let _ = writeln!(
                text,
                "| {} | {phase} | {} | {model} | {tokens} | {cost} | {:.1} s | {} | {} |",
                index + 1,
                cell(&line.agent),
                line.wall_seconds,
                verdict_cell(line),
                cell(&line.reasons.join("; ")),
            );
        }
        let totals = self.totals();
        let unknown = match totals.calls_without_cost {
            0 => String::new(),
            count => format!(" ({count} call(s) of unknown cost not included)"),
        };
        let _ = writeln!(
            text,
            "\n**Total:** {} call(s), {} tokens in, {} cache writes, {} cache reads, {} out; **${:.4}**{unknown}; {:.1} s of agent time.",
            totals.calls,
            totals.tokens.input,
            totals.tokens.cache_write,
            totals.tokens.cache_read,
            totals.tokens.output,
            totals.cost_usd,
            totals.wall_seconds,
        );
        text
    }
}

impl Receipt {
    /// The receipt summed per phase (and per role), for the pull request: the calls, the
    /// models, tokens, cost, time, and the first reason of each retry.
    pub fn phase_markdown(&self) -> String {
        let mut groups: Vec<(String, Vec<&ReceiptLine>)> = Vec::new();
        for line in &self.lines {
            let name = match &line.role {
                Some(role) => format!("{} ({role})", line.phase),
                None => line.phase.to_string(),
            };
            match groups.iter_mut().find(|(group, _)| *group == name) {
                Some((_, lines)) => lines.push(line),
                None => groups.push((name, vec![line])),
            }
        }
        let mut text = String::from(
            "| Phase | Calls | Model | Tokens in / cache reads / out | Cost | Time | Why again |\n\
             |---|---|---|---|---|---|---|\n",
        );
        for (name, lines) in &groups {
            let part = Receipt {
                lines: lines.iter().map(|line| (*line).clone()).collect(),
            };
            let totals = part.totals();
            let mut models: Vec<String> = Vec::new();
            for line in lines {
                let model = model_cell(line);
                if !models.contains(&model) {
                    models.push(model);
                }
            }
            let tokens = if lines.iter().all(|line| line.tokens.is_none()) {
                "not reported".to_owned()
            } else {
                format!(
                    "{} / {} / {}",
                    totals.tokens.input + totals.tokens.cache_write,
                    totals.tokens.cache_read,
                    totals.tokens.output
                )
            };
            let why: Vec<String> = lines
                .iter()
                .filter(|line| line.verdict.as_deref() != Some("done"))
                .filter_map(|line| Some(cut(line.reasons.first()?, 120)))
                .collect();
            let _ = writeln!(
                text,
                "| {name} | {} | {} | {tokens} | {} | {:.0} s | {} |",
                totals.calls,
                cell(&models.join(", ")),
                cost_cell(&totals),
                totals.wall_seconds,
                cell(&why.join("; ")),
            );
        }
        let totals = self.totals();
        let _ = writeln!(
            text,
            "| **Total** | {} | | | **{}** | {:.0} s | |",
            totals.calls,
            cost_cell(&totals),
            totals.wall_seconds
        );
        text
    }
}

/// The model the CLI reported, else the configured one, marked so.
fn model_cell(line: &ReceiptLine) -> String {
    match (&line.model, line.model_reported) {
        (Some(model), true) => model.clone(),
        (Some(model), false) => format!("{model} (configured)"),
        (None, _) => "unknown".to_owned(),
    }
}

/// The line's verdict, followed by what escalated the run after it.
fn verdict_cell(line: &ReceiptLine) -> String {
    let verdict = line.verdict.as_deref().unwrap_or("-");
    match &line.stop {
        Some(stop) => format!("{verdict}; run escalated: {}", stop.by.label()),
        None => verdict.to_owned(),
    }
}

/// `$0.1234`, with the calls of unknown cost it leaves out.
fn cost_cell(totals: &Totals) -> String {
    match (totals.calls_without_cost, totals.calls) {
        (0, _) => format!("${:.4}", totals.cost_usd),
        (unknown, calls) if unknown == calls => "unknown".to_owned(),
        (unknown, _) => format!("${:.4} + {unknown} unknown", totals.cost_usd),
    }
}

/// `text` cut to `max` characters.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// `text` fit for one table cell (prpd-qa's `table_cell`), at most 200 characters.
fn cell(text: &str) -> String {
    cut(&prpd_qa::table_cell::cell(text), 200)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(cost_usd: Option<f64>) -> Usage {
        Usage {
            input_tokens: 1000,
            cache_write_tokens: 0,
            cache_read_tokens: 10_000,
            output_tokens: 500,
            cost_usd,
        }
    }

    #[test]
    fn a_cost_is_the_clis_figure_else_priced_else_unknown_never_zero() {
        let prices = Prices::default();
        assert_eq!(
            cost_of(Some(&usage(Some(0.25))), Some("gpt-5"), &prices),
            (Some(0.25), CostSource::Reported)
        );
        let (cost, source) = cost_of(Some(&usage(None)), Some("gpt-5-codex"), &prices);
        assert_eq!(source, CostSource::Priced);
        let expected = (1000.0 * 1.25 + 10_000.0 * 0.125 + 500.0 * 10.0) / 1e6;
        assert!((cost.expect("priced") - expected).abs() < 1e-12);
        assert_eq!(
            cost_of(Some(&usage(None)), Some("llama3"), &prices),
            (None, CostSource::UnknownPrice)
        );
        assert_eq!(
            cost_of(None, Some("gpt-5"), &prices),
            (None, CostSource::NotReported)
        );
    }

    fn line(phase: Phase, cost_usd: Option<f64>, cost: CostSource) -> ReceiptLine {
        ReceiptLine {
            phase,
            iteration: 1,
            attempt: 1,
            started_at: 0,
            role: None,
            agent: "codex".to_owned(),
            model: Some("gpt-5-codex".to_owned()),
            model_reported: true,
            tokens: (cost != CostSource::NotReported).then_some(TokenUsage {
                input: 100,
                cache_write: 0,
                cache_read: 50,
                output: 10,
            }),
            cost_usd,
            cost,
            wall_seconds: 2.5,
            verdict: Some("again".to_owned()),
            reasons: vec!["3 test(s) fail | one\nper line".to_owned()],
            prepared_seconds: Some(0.5),
            measured_seconds: Some(1.5),
            stop: None,
        }
    }

    #[test]
    fn the_totals_leave_unknown_costs_out_and_say_how_many() {
        let receipt = Receipt {
            lines: vec![
                line(Phase::Red, Some(0.1), CostSource::Reported),
                line(Phase::Green, Some(0.200_000_000_1), CostSource::Priced),
                line(Phase::Green, None, CostSource::NotReported),
            ],
        };
        let totals = receipt.totals();
        assert_eq!(totals.calls, 3);
        assert_eq!(totals.calls_without_cost, 1);
        assert_eq!(totals.cost_usd.to_string(), "0.3");
        assert_eq!(totals.tokens.input, 200);
        let table = receipt.markdown();
        assert!(table.contains("| 3 | GREEN 1 | codex | gpt-5-codex | not reported | usage not reported | 2.5 s | again | 3 test(s) fail \\| one per line |"), "{table}");
        assert!(table.contains("$0.1000 (reported)"), "{table}");
        assert!(
            table.contains("**$0.3000** (1 call(s) of unknown cost not included)"),
            "{table}"
        );
        let short = receipt.phase_markdown();
        assert!(short.contains("| RED | 1 | gpt-5-codex | 100 / 50 / 10 | $0.1000 | 2 s | 3 test(s) fail \\| one per line |"), "{short}");
        assert!(
            short.contains("| GREEN | 2 | gpt-5-codex | 100 / 50 / 10 | $0.2000 + 1 unknown |"),
            "{short}"
        );
        assert!(
            short.contains("| **Total** | 3 | | | **$0.3000 + 1 unknown** | 8 s | |"),
            "{short}"
        );
    }

    #[test]
    fn a_line_saved_before_stops_were_recorded_still_loads() {
        let old = r#"{"phase":"GREEN","iteration":2,"attempt":1,"agent":"codex","model":null,
            "model_reported":false,"tokens":null,"cost_usd":null,"cost":"not_reported",
            "wall_seconds":4.0,"verdict":"again","reasons":["tests fail"]}"#;
        let line: ReceiptLine = serde_json::from_str(old).expect("an old line");
        assert_eq!((line.prepared_seconds, line.measured_seconds), (None, None));
        assert_eq!(line.stop, None);
    }

    #[test]
    fn the_table_says_what_escalated_the_run_after_a_call_with_a_verdict() {
        let mut stopped = line(Phase::Green, Some(0.1), CostSource::Reported);
        stopped.stop = Some(LineStop {
            by: StopKind::Breaker,
            reason: "the GREEN breaker opened".to_owned(),
        });
        let receipt = Receipt {
            lines: vec![stopped],
        };
        let table = receipt.markdown();
        assert!(
            table.contains("| again; run escalated: breaker opened | 3 test(s) fail"),
            "{table}"
        );
    }
}
