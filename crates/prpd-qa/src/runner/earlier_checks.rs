//! The checks QA ran before its methods, as evidence for F2: the methods run last, so the
//! requirements check reads which tests passed, in which checks that run the tests, and how
//! the PRP's command criteria and the gate's checks ended.

use std::collections::BTreeSet;

use super::{CheckResult, CheckStatus};
use crate::method::{EarlierCheck, Ended};

/// The checks that ran before the methods, as F2's evidence: `test_checks` are the ids of the
/// checks that run the tests.
pub(super) fn evidence<'a>(
    results: &'a [CheckResult],
    test_checks: &BTreeSet<String>,
) -> Vec<EarlierCheck<'a>> {
    results
        .iter()
        .map(|check| EarlierCheck {
            id: &check.id,
            ended: match check.status {
                CheckStatus::Pass => Ended::Passed,
                CheckStatus::Fail => Ended::Failed,
                CheckStatus::Warn => Ended::Warned,
                CheckStatus::Skip => Ended::Skipped,
            },
            detail: &check.detail,
            runs_tests: test_checks.contains(&check.id),
            cases: check.metrics.test_cases(),
        })
        .collect()
}
