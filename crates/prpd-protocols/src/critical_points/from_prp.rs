//! A PRP's success criteria as a run's critical points, CP1..CPn in the PRP's order. The hint a
//! criterion is checked by comes from its own words: an explicit `(verify: …)` at its end, else
//! each span in backticks (`` `npm test` ``, `` `src/lib.rs` ``, `` `wordStats` ``), each of
//! which must then appear in the evidence. A criterion with neither has no hint: it is shown
//! as unverified rather than guessed at.

use prpd_prp::Prp;

use super::plan::CriticalPoint;

/// A run's point: the point as the report shows it and the hints it is judged by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunPoint {
    pub point: CriticalPoint,
    pub hints: Vec<String>,
}

/// The critical points of `prp`'s success criteria.
pub fn points(prp: &Prp) -> Vec<RunPoint> {
    prp.success_criteria
        .iter()
        .enumerate()
        .map(|(index, criterion)| {
            let (description, hints) = hints_of(&criterion.text);
            RunPoint {
                point: CriticalPoint {
                    id: format!("CP{}", index + 1),
                    verification_hint: hints.join(" + "),
                    description,
                },
                hints,
            }
        })
        .collect()
}

/// The criterion's text without its `(verify: …)`, and its hints.
fn hints_of(text: &str) -> (String, Vec<String>) {
    let trimmed = text.trim();
    if let Some(open) = trimmed.rfind("(verify:")
        && trimmed.ends_with(')')
    {
        let hint = trimmed[open + "(verify:".len()..trimmed.len() - 1].trim();
        let hint = hint.trim_matches('`').trim();
        let description = trimmed[..open].trim_end().to_owned();
        let hints = if hint.is_empty() {
            Vec::new()
        } else {
            vec![hint.to_owned()]
        };
        return (description, hints);
    }
    let hints = trimmed
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::trim)
        .filter(|span| !span.is_empty())
        .map(str::to_owned)
        .collect();
    (trimmed.to_owned(), hints)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_come_from_verify_or_backticks() {
        let cases: [(&str, &str, &[&str]); 5] = [
            (
                "`npm run lint` and `npm test` pass",
                "`npm run lint` and `npm test` pass",
                &["npm run lint", "npm test"],
            ),
            (
                "Login works (verify: `test_login`)",
                "Login works",
                &["test_login"],
            ),
            (
                "The CHANGELOG lists it (verify: CHANGELOG.md)",
                "The CHANGELOG lists it",
                &["CHANGELOG.md"],
            ),
            ("It feels fast", "It feels fast", &[]),
            ("Unclosed `span", "Unclosed `span", &["span"]),
        ];
        for (text, description, hints) in cases {
            assert_eq!(
                hints_of(text),
                (
                    description.to_owned(),
                    hints.iter().map(|h| (*h).to_owned()).collect()
                ),
                "{text}"
            );
        }
    }

    #[test]
    fn criteria_become_points_in_order() {
        let prp = prpd_prp::parse(
            std::path::Path::new("PRPs/x.md"),
            "# X\n\n## Success Criteria\n\n- [ ] `a` works\n- [ ] b is nice\n",
        )
        .expect("a PRP");
        let points = points(&prp);
        assert_eq!(points.len(), 2);
        assert_eq!(points[0].point.id, "CP1");
        assert_eq!(points[0].point.verification_hint, "a");
        assert_eq!(points[1].point.id, "CP2");
        assert!(points[1].hints.is_empty());
    }
}
