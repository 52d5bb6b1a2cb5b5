//! The words SHIP sends: the Conventional Commit message of the shipped commit, and the pull
//! request's title and body. They are built (purely) from the PRP and from what prpd itself
//! measured and decided during the run — its own QA report as it rendered it, the verdicts,
//! iterations and usage it counted — never from a file an agent could have written.
//!
//! The commit type is `feat`, or `fix` when the PRP's title says so by its first word (`Fix …`,
//! `Fixes …`, `Bugfix …`, `Hotfix …`). A title already written as a Conventional Commit subject
//! (`feat(parser): …`, `docs: …`) is used as it is. The message ends with two trailers,
//! `Prpd-PRP` and `Prpd-Run`: the first is how a later run on the same PRP recognises the
//! branch's commit as prpd's own (see `git/branch.rs`).

use std::fmt::Write as _;
use std::path::Path;

use prpd_base::phase::Phase;
use prpd_base::status_block::Verdict;
use prpd_prp::Prp;

/// The trailer naming the PRP a shipped commit implements.
pub const PRP_TRAILER: &str = "Prpd-PRP";

/// The trailer naming the run that shipped a commit.
pub const RUN_TRAILER: &str = "Prpd-Run";

/// The Conventional Commit types a PRP's title may already carry.
const TYPES: [&str; 11] = [
    "feat", "fix", "docs", "refactor", "perf", "test", "chore", "build", "ci", "style", "revert",
];

/// First words of a title that make its commit a `fix`.
const FIX_WORDS: [&str; 6] = ["fix", "fixes", "fixed", "fixing", "bugfix", "hotfix"];

/// What prpd counted during the run, for the commit message and the PR body.
#[derive(Debug, Clone, PartialEq)]
pub struct RunFacts {
    pub run_id: String,
    /// Iterations per phase, in loop order, for the phases that ran.
    pub iterations: Vec<(Phase, u32)>,
    /// Each QA verdict with its attempt, in order.
    pub verdicts: Vec<(u32, Verdict)>,
    pub agent_invocations: u32,
    /// The tokens the agents reported, by kind; `None` when no agent reported usage.
    pub tokens: Option<Tokens>,
    /// The agents' known cost in US dollars (reported by their CLIs, else priced from the
    /// model's price); `None` when none is known.
    pub cost_usd: Option<f64>,
    /// The run's receipt summed per phase, as a Markdown table; `None` when no agent ran.
    pub receipt: Option<String>,
}

/// Tokens by kind, as the agents reported them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tokens {
    pub input: u64,
    pub cache_write: u64,
    pub cache_read: u64,
    pub output: u64,
}

/// A pull request's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullRequestText {
    pub title: String,
    pub body: String,
}

impl PullRequestText {
    /// `pr.md`: the title as a heading, then the body.
    pub fn markdown(&self) -> String {
        format!("# {}\n\n{}", self.title, self.body)
    }
}

/// The commit's subject line, which is also the pull request's title.
pub fn subject(prp: &Prp) -> String {
    let title = prp.title.trim();
    let title = strip_prp_prefix(title);
    if is_conventional(title) {
        return title.to_owned();
    }
    let first_word = title
        .split(|character: char| !character.is_ascii_alphanumeric())
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    let kind = if FIX_WORDS.contains(&first_word.as_str()) {
        "fix"
    } else {
        "feat"
    };
    format!("{kind}: {title}")
}

/// The commit message: the subject, what the commit implements, and the trailers.
pub fn commit_message(prp: &Prp, prp_path: &Path, facts: &RunFacts) -> String {
    let mut message = format!("{}\n\n", subject(prp));
    if let Some(goal) = prp
        .goal
        .as_deref()
        .map(str::trim)
        .filter(|goal| !goal.is_empty())
    {
        let _ = write!(message, "{goal}\n\n");
    }
    let _ = write!(
        message,
        "Implements {}. Written by agents driven by prpd through {}; {}.\n\n\
         {PRP_TRAILER}: {}\n{RUN_TRAILER}: {}\n",
        prp_path.display(),
        phase_list(facts),
        approval(facts),
        prp_path.display(),
        facts.run_id,
    );
    message
}

/// The PRP path a commit message's `Prpd-PRP` trailer names, if it has one.
pub fn prp_of(message: &str) -> Option<&str> {
    message.lines().rev().find_map(|line| {
        line.strip_prefix(PRP_TRAILER)
            .and_then(|rest| rest.strip_prefix(':'))
            .map(str::trim)
    })
}

/// The pull request: the title, then a body made of what the PR implements, the proof's
/// section (`proof`, first, so a body cut to GitHub's limit keeps it), prpd's QA report
/// (`qa_report`, as prpd rendered it) and the run's summary.
pub fn pull_request(
    prp: &Prp,
    prp_path: &Path,
    facts: &RunFacts,
    proof: Option<&str>,
    qa_report: Option<&str>,
) -> PullRequestText {
    let mut body = format!(
        "Implements `{}` (prpd run `{}`).\n\n",
        prp_path.display(),
        facts.run_id
    );
    if let Some(goal) = prp
        .goal
        .as_deref()
        .map(str::trim)
        .filter(|goal| !goal.is_empty())
    {
        let _ = write!(body, "{goal}\n\n");
    }
    if let Some(proof) = proof {
        body.push_str(proof.trim_end());
        body.push_str("\n\n");
    }
    match qa_report {
        Some(report) => {
            body.push_str(report.trim_end());
            body.push_str("\n\n");
        }
        None => body.push_str("prpd has no QA report for this run.\n\n"),
    }
    body.push_str(&run_summary(facts));
    PullRequestText {
        title: subject(prp),
        body,
    }
}

/// The comment on a pull request that a later SHIP updated (`[ship] comment_on_update`): the
/// description was replaced, so the comment keeps the thread's readers told what changed.
pub fn update_comment(facts: &RunFacts, commit: &str) -> String {
    let short: String = commit.chars().take(7).collect();
    let last = facts.verdicts.last().map_or_else(
        || "no QA verdict".to_owned(),
        |(attempt, verdict)| {
            let word = match verdict {
                Verdict::Approve => "APPROVE",
                Verdict::Reject => "REJECT",
            };
            format!("QA {word} on attempt {attempt}")
        },
    );
    format!(
        "prpd run `{}` pushed `{short}` to this branch ({last}) and replaced the description \
         with its QA report and run summary.\n",
        facts.run_id
    )
}

/// The run's summary as the PR body ends with it: iterations per phase, the QA verdicts, the
/// agent calls, tokens and cost.
fn run_summary(facts: &RunFacts) -> String {
    let mut text = String::from("## Run summary\n\n| Phase | Iterations |\n| --- | --- |\n");
    for (phase, count) in &facts.iterations {
        let _ = writeln!(text, "| {phase} | {count} |");
    }
    text.push('\n');
    let verdicts: Vec<String> = facts
        .verdicts
        .iter()
        .map(|(attempt, verdict)| {
            let word = match verdict {
                Verdict::Approve => "APPROVE",
                Verdict::Reject => "REJECT",
            };
            format!("{word} on attempt {attempt}")
        })
        .collect();
    let _ = writeln!(
        text,
        "- QA verdicts: {}",
        if verdicts.is_empty() {
            "none".to_owned()
        } else {
            verdicts.join(", ")
        }
    );
    let _ = writeln!(text, "- Agent invocations: {}", facts.agent_invocations);
    let _ = match facts.tokens {
        Some(tokens) => writeln!(
            text,
            "- Tokens: {} input, {} cache writes, {} cache reads, {} output",
            tokens.input, tokens.cache_write, tokens.cache_read, tokens.output
        ),
        None => writeln!(text, "- Tokens: not reported by the agents"),
    };
    let _ = match facts.cost_usd {
        Some(cost) => writeln!(
            text,
            "- Cost: ${cost:.4} (as the agents' CLIs reported it, or priced from their tokens)"
        ),
        None => writeln!(text, "- Cost: not reported by the agents"),
    };
    if let Some(receipt) = &facts.receipt {
        let _ = write!(text, "\n### Receipt\n\n{receipt}");
    }
    text
}

/// `RED, GREEN, REFACTOR, DOCUMENT and QA` for the phases that ran.
fn phase_list(facts: &RunFacts) -> String {
    let names: Vec<String> = facts
        .iterations
        .iter()
        .map(|(phase, _)| phase.to_string())
        .collect();
    match names.split_last() {
        None => "no phase".to_owned(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

/// `QA approved on attempt 2` (or that no approval was recorded).
fn approval(facts: &RunFacts) -> String {
    facts
        .verdicts
        .iter()
        .rev()
        .find(|(_, verdict)| *verdict == Verdict::Approve)
        .map_or_else(
            || "no QA approval is recorded".to_owned(),
            |(attempt, _)| format!("QA approved it on attempt {attempt}"),
        )
}

/// The title without a leading `PRP:` (a common way to write a PRP's heading).
fn strip_prp_prefix(title: &str) -> &str {
    title
        .get(..4)
        .filter(|head| head.eq_ignore_ascii_case("prp:"))
        .map_or(title, |_| title[4..].trim_start())
}

/// Whether `title` already reads `type: …` or `type(scope)!: …`.
fn is_conventional(title: &str) -> bool {
    let Some((head, rest)) = title.split_once(':') else {
        return false;
    };
    if !rest.starts_with(' ') || rest.trim().is_empty() {
        return false;
    }
    let head = head.strip_suffix('!').unwrap_or(head);
    let kind = match head.split_once('(') {
        Some((kind, scope)) if scope.ends_with(')') && scope.len() > 1 => kind,
        Some(_) => return false,
        None => head,
    };
    TYPES.contains(&kind)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn prp(title: &str, goal: Option<&str>) -> Prp {
        Prp {
            path: PathBuf::from("PRPs/x.md"),
            title: title.to_owned(),
            goal: goal.map(str::to_owned),
            why: None,
            success_criteria: Vec::new(),
            tasks: Vec::new(),
            acceptance: Vec::new(),
            requirements: Vec::new(),
        }
    }

    fn facts() -> RunFacts {
        RunFacts {
            run_id: "run-1".to_owned(),
            iterations: vec![
                (Phase::Red, 1),
                (Phase::Green, 2),
                (Phase::Refactor, 1),
                (Phase::Document, 1),
                (Phase::Qa, 2),
            ],
            verdicts: vec![(1, Verdict::Reject), (2, Verdict::Approve)],
            agent_invocations: 7,
            tokens: Some(Tokens {
                input: 100,
                cache_write: 20,
                cache_read: 300,
                output: 40,
            }),
            cost_usd: Some(0.123_456),
            receipt: Some("| Phase | Calls |\n|---|---|\n| RED | 1 |\n".to_owned()),
        }
    }

    #[test]
    fn the_subject_is_feat_unless_the_title_says_fix_or_is_conventional_already() {
        for (title, expected) in [
            ("Word statistics", "feat: Word statistics"),
            ("PRP: Word statistics", "feat: Word statistics"),
            (
                "Fix the crash on empty input",
                "fix: Fix the crash on empty input",
            ),
            ("Hotfix: token refresh", "fix: Hotfix: token refresh"),
            ("Fixtures for the parser", "feat: Fixtures for the parser"),
            ("fix(parser): empty input", "fix(parser): empty input"),
            ("docs: the API guide", "docs: the API guide"),
            ("feat!: drop Node 16", "feat!: drop Node 16"),
            ("Note: a caveat", "feat: Note: a caveat"),
        ] {
            assert_eq!(subject(&prp(title, None)), expected, "{title}");
        }
    }

    #[test]
    fn the_commit_message_names_the_prp_and_the_run_in_trailers() {
        let message = commit_message(
            &prp("Word statistics", Some("Count words.\n")),
            Path::new("PRPs/word-stats.md"),
            &facts(),
        );
        assert_eq!(
            message,
            "feat: Word statistics\n\nCount words.\n\nImplements PRPs/word-stats.md. Written by \
             agents driven by prpd through RED, GREEN, REFACTOR, DOCUMENT and QA; QA approved \
             it on attempt 2.\n\nPrpd-PRP: PRPs/word-stats.md\nPrpd-Run: run-1\n"
        );
        assert_eq!(prp_of(&message), Some("PRPs/word-stats.md"));
        assert_eq!(prp_of("feat: something a human wrote\n"), None);
    }

    #[test]
    fn the_pull_request_holds_the_qa_report_and_the_run_summary() {
        let text = pull_request(
            &prp("Word statistics", None),
            Path::new("PRPs/word-stats.md"),
            &facts(),
            Some("## Proof\n\n- Fail-to-pass: holds\n"),
            Some("# QA Report\n\n## Verdict: ✅ APPROVED\n"),
        );
        assert_eq!(text.title, "feat: Word statistics");
        let markdown = text.markdown();
        assert!(
            markdown.starts_with(
                "# feat: Word statistics\n\nImplements `PRPs/word-stats.md` (prpd run `run-1`).\n\n## Proof\n\n- Fail-to-pass: holds\n\n# QA Report"
            ),
            "{markdown}"
        );
        for expected in [
            "## Verdict: ✅ APPROVED\n\n## Run summary",
            "| GREEN | 2 |",
            "- QA verdicts: REJECT on attempt 1, APPROVE on attempt 2",
            "- Agent invocations: 7",
            "- Tokens: 100 input, 20 cache writes, 300 cache reads, 40 output",
            "- Cost: $0.1235 (as the agents' CLIs reported it, or priced from their tokens)",
            "\n### Receipt\n\n| Phase | Calls |\n|---|---|\n| RED | 1 |\n",
        ] {
            assert!(
                markdown.contains(expected),
                "no {expected:?} in:\n{markdown}"
            );
        }
    }

    #[test]
    fn a_run_without_usage_or_report_says_so() {
        let facts = RunFacts {
            tokens: None,
            cost_usd: None,
            receipt: None,
            verdicts: Vec::new(),
            ..facts()
        };
        let body = pull_request(&prp("X", None), Path::new("PRPs/x.md"), &facts, None, None).body;
        for expected in [
            "prpd has no QA report for this run.",
            "- QA verdicts: none",
            "- Tokens: not reported by the agents",
            "- Cost: not reported by the agents",
        ] {
            assert!(body.contains(expected), "no {expected:?} in:\n{body}");
        }
    }

    #[test]
    fn the_update_comment_names_the_run_the_commit_and_the_last_verdict() {
        let comment = update_comment(&facts(), "0123456789abcdef");
        assert_eq!(
            comment,
            "prpd run `run-1` pushed `0123456` to this branch (QA APPROVE on attempt 2) and \
             replaced the description with its QA report and run summary.\n"
        );
        let none = RunFacts {
            verdicts: Vec::new(),
            ..facts()
        };
        assert!(update_comment(&none, "abc").contains("(no QA verdict)"));
    }
}
