//! GitHub refuses a pull request, issue or comment body longer than 65,536 characters (422
//! "body is too long"), and a check run's output summary or text longer than 65,535. A QA
//! report with many failing checks can pass that, and a refused body would stop a ship that QA
//! approved; so a long text is cut at a character boundary and says so at its end.

use std::borrow::Cow;

/// The most characters GitHub accepts in a body.
pub(super) const MAX_BODY_CHARS: usize = 65_536;

/// The most characters GitHub accepts in a check run's output summary or text.
pub(super) const MAX_OUTPUT_CHARS: usize = 65_535;

/// What a cut body ends with.
const CUT_NOTE: &str = "\n\n… (cut here: GitHub takes no more; the whole text is in the run's directory under `.prp-session/runs/`)";

/// `body`, or its first characters and [`CUT_NOTE`] when it is longer than GitHub takes.
pub(super) fn fit(body: &str) -> Cow<'_, str> {
    fit_to(body, MAX_BODY_CHARS)
}

/// `text` cut to `max` characters as [`fit`] cuts a body.
pub(super) fn fit_within(text: &str, max: usize) -> String {
    fit_to(text, max).into_owned()
}

fn fit_to(body: &str, max: usize) -> Cow<'_, str> {
    if body.chars().count() <= max {
        return Cow::Borrowed(body);
    }
    let keep = max - CUT_NOTE.chars().count();
    let end = body
        .char_indices()
        .nth(keep)
        .map_or(body.len(), |(index, _)| index);
    Cow::Owned(format!("{}{CUT_NOTE}", &body[..end]))
}

#[cfg(test)]
mod tests {
    use super::{MAX_BODY_CHARS, MAX_OUTPUT_CHARS, fit, fit_within};

    #[test]
    fn a_body_within_the_limit_is_sent_as_it_is() {
        let body = "é".repeat(MAX_BODY_CHARS);
        assert_eq!(fit(&body), body.as_str());
    }

    #[test]
    fn a_longer_body_is_cut_to_the_limit_and_says_so() {
        let body = "é".repeat(MAX_BODY_CHARS + 1);
        let fitted = fit(&body);
        assert_eq!(fitted.chars().count(), MAX_BODY_CHARS);
        assert!(fitted.starts_with("éé"));
        assert!(
            fitted.ends_with("under `.prp-session/runs/`)"),
            "{}",
            &fitted[fitted.len() - 200..]
        );
    }

    #[test]
    fn a_check_runs_output_is_cut_one_character_shorter_than_a_body() {
        let text = "a".repeat(MAX_BODY_CHARS);
        assert_eq!(
            fit_within(&text, MAX_OUTPUT_CHARS).chars().count(),
            MAX_OUTPUT_CHARS
        );
        assert_eq!(fit_within("short", MAX_OUTPUT_CHARS), "short");
    }
}
