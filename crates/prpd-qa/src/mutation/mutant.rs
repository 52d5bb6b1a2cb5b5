//! One mutant as prpd counts it, whichever tool made it, and the tally the check reports: how
//! many mutants the change's lines got, how many the tests killed, how many survived or timed
//! out, the share caught, and the survivors GREEN can act on (file, line, what was changed).

use std::fmt::Write as _;

use crate::metrics::Metrics;

/// How many surviving mutants the check's detail names.
pub(crate) const MAX_SURVIVORS_SHOWN: usize = 10;

/// What the tests did to one mutant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    /// A test failed: the tests noticed the change.
    Killed,
    /// Every test passed with the change in place (or no test ran the changed code).
    Survived,
    /// The tests did not finish within the tool's limit for one mutant; the three tools count
    /// a hang as noticed, and so does prpd, but it is reported apart.
    TimedOut,
    /// The mutant could not be tested (it did not build, the tool skipped it): left out of
    /// the share, reported in the total.
    Unviable,
}

/// One mutant of the changed lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mutant {
    /// The file, relative to the folder QA judges.
    pub(crate) file: String,
    /// The 1-based line it changes, when the tool says.
    pub(crate) line: Option<u32>,
    /// What was changed, in the tool's words (`replace clamp -> i32 with 0`).
    pub(crate) mutation: String,
    pub(crate) status: Status,
}

/// The counts of one check, over every tool that ran.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    pub(crate) killed: u32,
    pub(crate) survived: u32,
    pub(crate) timed_out: u32,
    pub(crate) unviable: u32,
    /// The survivors, in the tools' order.
    pub(crate) survivors: Vec<Mutant>,
}

impl Tally {
    /// Counts `mutants`.
    pub(crate) fn add(&mut self, mutants: impl IntoIterator<Item = Mutant>) {
        for mutant in mutants {
            match mutant.status {
                Status::Killed => self.killed += 1,
                Status::TimedOut => self.timed_out += 1,
                Status::Unviable => self.unviable += 1,
                Status::Survived => {
                    self.survived += 1;
                    self.survivors.push(mutant);
                }
            }
        }
    }

    /// Every mutant, unviable ones included.
    pub(crate) fn total(&self) -> u32 {
        self.killed + self.survived + self.timed_out + self.unviable
    }

    /// The share of the testable mutants the tests caught (killed or timed out), in percent;
    /// `None` when no mutant could be tested.
    pub(crate) fn score(&self) -> Option<f64> {
        let caught = self.killed + self.timed_out;
        let testable = caught + self.survived;
        (testable > 0).then(|| {
            let percentage = f64::from(caught) * 100.0 / f64::from(testable);
            (percentage * 100.0).round() / 100.0
        })
    }

    /// The figures the check's validation reads. `mutation_score` is absent when no mutant
    /// could be tested, so a validation on it cannot pass.
    pub(crate) fn metrics(&self) -> Metrics {
        let mut metrics = Metrics::default();
        metrics.set_number("mutants_total", f64::from(self.total()));
        metrics.set_number("mutants_killed", f64::from(self.killed));
        metrics.set_number("mutants_survived", f64::from(self.survived));
        metrics.set_number("mutants_timed_out", f64::from(self.timed_out));
        if let Some(score) = self.score() {
            metrics.set_number("mutation_score", score);
        }
        metrics
    }

    /// One paragraph for the report: the counts, the share, and the first survivors.
    pub(crate) fn summary(&self) -> String {
        let mut text = format!(
            "{} mutants: {} killed, {} survived, {} timed out",
            self.total(),
            self.killed,
            self.survived,
            self.timed_out
        );
        if self.unviable > 0 {
            let _ = write!(text, ", {} unviable", self.unviable);
        }
        match self.score() {
            Some(score) => {
                let _ = write!(text, "; {score}% caught");
            }
            None => text.push_str("; none could be tested, so there is no score"),
        }
        if !self.survivors.is_empty() {
            text.push_str(". Surviving (no test failed with this change): ");
            let shown: Vec<String> = self
                .survivors
                .iter()
                .take(MAX_SURVIVORS_SHOWN)
                .map(|mutant| match mutant.line {
                    Some(line) => format!("{}:{line} {}", mutant.file, mutant.mutation),
                    None => format!("{} {}", mutant.file, mutant.mutation),
                })
                .collect();
            text.push_str(&shown.join("; "));
            let more = self.survivors.len().saturating_sub(MAX_SURVIVORS_SHOWN);
            if more > 0 {
                let _ = write!(text, "; and {more} more");
            }
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::MetricValue;

    fn mutant(line: u32, status: Status) -> Mutant {
        Mutant {
            file: "src/lib.rs".to_owned(),
            line: Some(line),
            mutation: format!("replace line {line}"),
            status,
        }
    }

    #[test]
    fn the_share_counts_timeouts_as_caught_and_leaves_unviable_mutants_out() {
        let mut tally = Tally::default();
        tally.add([
            mutant(1, Status::Killed),
            mutant(2, Status::Killed),
            mutant(3, Status::TimedOut),
            mutant(4, Status::Survived),
            mutant(5, Status::Unviable),
        ]);
        assert_eq!(tally.total(), 5);
        assert_eq!(tally.score(), Some(75.0));
        assert_eq!(
            tally.metrics().get("mutation_score"),
            Some(MetricValue::Number(75.0))
        );
        assert_eq!(
            tally.summary(),
            "5 mutants: 2 killed, 1 survived, 1 timed out, 1 unviable; 75% caught. Surviving (no test failed with this change): src/lib.rs:4 replace line 4"
        );
    }

    #[test]
    fn no_testable_mutant_gives_no_score() {
        let mut tally = Tally::default();
        tally.add([mutant(1, Status::Unviable)]);
        assert_eq!(tally.score(), None);
        assert_eq!(tally.metrics().get("mutation_score"), None);
        assert!(
            tally
                .summary()
                .ends_with("none could be tested, so there is no score")
        );
    }

    #[test]
    fn only_the_first_survivors_are_named() {
        let mut tally = Tally::default();
        tally.add((1..=12).map(|line| mutant(line, Status::Survived)));
        let summary = tally.summary();
        assert!(
            summary.contains("src/lib.rs:10 replace line 10; and 2 more"),
            "{summary}"
        );
        assert!(!summary.contains("src/lib.rs:11"), "{summary}");
    }
}
