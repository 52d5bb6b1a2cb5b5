//! Finding the `TestPlan` JSON in an agent's final message (the seed's `extractJsonFromOutput`).
//! It stands apart from normalising because the message is messy text, while normalising works
//! on JSON: this file only decides which piece of the text is the plan.
//!
//! The rules, in order:
//!
//! - Only the last [`MAX_PLAN_BYTES`] of the message are read: the plan ends an answer, and an
//!   agent's output may be large.
//! - Candidates are the contents of fenced blocks labelled `json` or unlabelled, and every bare
//!   `{…}` object in the text outside other fences (a ```` ```rust ```` block is code, not
//!   data). A bare object is found by bracket-depth matching that skips strings (brackets,
//!   braces and escaped quotes inside a string do not count); an object that does not parse is
//!   searched again from inside it, so a stray `{` in prose cannot hide the plan behind it.
//! - A candidate is the plan when it parses as a JSON object whose `cases` is an array. With
//!   several, the **last** one wins: the agent's final word, as with status blocks.
//! - A candidate whose cases are the prompt's own example (a `type` or `priority` written
//!   `<…>`) is an echo of the prompt, not the agent's plan, and is passed over.
//! - With no plan: a candidate that holds a `"cases":` key but does not parse, or whose
//!   `cases` is not an array, is [`PlanError::Parse`] (the last such one); a `"cases":` key
//!   with no complete object around it (a truncated answer) is [`PlanError::Extract`]; a
//!   message without a `"cases":` key (prose may say "cases", even in quotes) holds no plan.

use serde_json::{Map, Value as Json};

use super::PlanError;

/// How much of the end of a message is searched for a plan (1 MiB).
pub const MAX_PLAN_BYTES: usize = 1024 * 1024;

/// How many bytes the search for bare objects may visit in all: a message full of unclosed
/// braces would otherwise cost a pass over the rest of the text per brace.
const SCAN_BUDGET: usize = 32 * MAX_PLAN_BYTES;

/// The key whose presence (followed by a colon) says the agent meant to give a plan.
const CASES_KEY: &str = "\"cases\"";

/// The seed's extraction: the plan object of `output`, or [`PlanError::Extract`] when there is
/// none.
pub fn extract_plan(output: &str) -> Result<Map<String, Json>, PlanError> {
    find_plan(output)?.ok_or(PlanError::Extract)
}

/// The plan object of an agent's final message; `Ok(None)` when the message neither holds nor
/// names one. See the module docs for the rules.
pub fn find_plan(message: &str) -> Result<Option<Map<String, Json>>, PlanError> {
    let text = plan_window(message);
    let segments = segments(text);
    let mut budget = SCAN_BUDGET;
    let mut candidates = Vec::new();
    for segment in &segments {
        if segment.whole_candidate {
            let leading = segment.text.len() - segment.text.trim_start().len();
            candidates.push((segment.start + leading, segment.text.trim()));
        }
        for (start, object) in bare_objects(segment.text, &mut budget) {
            candidates.push((segment.start + start, object));
        }
    }
    candidates.sort_by_key(|(start, _)| *start);

    let mut plan = None;
    let mut failure = None;
    let mut echoes = Vec::new();
    for (start, candidate) in candidates {
        match classify(candidate) {
            Candidate::Plan(object) => plan = Some(object),
            Candidate::Echo => echoes.push(start..start + candidate.len()),
            Candidate::Broken(error) => failure = Some(error),
            Candidate::Other => {}
        }
    }
    if let Some(object) = plan {
        return Ok(Some(object));
    }
    if let Some(error) = failure {
        return Err(PlanError::Parse(error));
    }
    let names_a_plan = segments.iter().any(|segment| {
        cases_keys(segment.text).any(|offset| {
            let at = segment.start + offset;
            !echoes.iter().any(|echo| echo.contains(&at))
        })
    });
    if names_a_plan {
        Err(PlanError::Extract)
    } else {
        Ok(None)
    }
}

/// What one candidate turned out to be.
enum Candidate {
    /// An object with a `cases` array.
    Plan(Map<String, Json>),
    /// The prompt's example plan.
    Echo,
    /// Meant as a plan (it holds a `"cases":` key), but not one: why.
    Broken(String),
    /// Anything else: prose in braces, another JSON value.
    Other,
}

fn classify(candidate: &str) -> Candidate {
    match serde_json::from_str::<Json>(candidate) {
        Ok(Json::Object(object)) => match object.get("cases") {
            Some(Json::Array(cases)) if cases.iter().any(is_template_case) => Candidate::Echo,
            Some(Json::Array(_)) => Candidate::Plan(object),
            Some(_) => Candidate::Broken("`cases` is not an array".to_owned()),
            None => Candidate::Other,
        },
        Err(error) if cases_keys(candidate).next().is_some() => {
            Candidate::Broken(error.to_string())
        }
        Ok(_) | Err(_) => Candidate::Other,
    }
}

/// Where `text` holds a `"cases"` key: the quoted word followed, after any whitespace, by a
/// colon.
fn cases_keys(text: &str) -> impl Iterator<Item = usize> + '_ {
    text.match_indices(CASES_KEY)
        .filter(|(offset, key)| text[offset + key.len()..].trim_start().starts_with(':'))
        .map(|(offset, _)| offset)
}

/// A case of the prompt's example: its `type` or `priority` is a `<…>` placeholder.
fn is_template_case(case: &Json) -> bool {
    ["type", "priority"].iter().any(|key| {
        case.get(key)
            .and_then(Json::as_str)
            .is_some_and(|value| value.len() > 2 && value.starts_with('<') && value.ends_with('>'))
    })
}

/// A piece of the message searched for candidates, with its offset in the message.
struct Segment<'a> {
    start: usize,
    text: &'a str,
    /// The contents of a `json` or unlabelled fence: a candidate as a whole too.
    whole_candidate: bool,
}

/// The prose outside fences and the contents of `json` or unlabelled fences, in order; the
/// contents of fences in another language are left out. A fence opens with three or more
/// backticks or tildes at the start of a line (up to three spaces of indent) and closes with
/// the same character at least as many times; an unclosed fence runs to the end.
fn segments(text: &str) -> Vec<Segment<'_>> {
    let mut segments = Vec::new();
    let mut prose_start = 0;
    let mut offset = 0;
    let mut open: Option<(char, usize, bool, usize)> = None;
    for line in text.split_inclusive('\n') {
        let line_start = offset;
        offset += line.len();
        let fence = fence_of(line);
        match (&open, fence) {
            (None, Some((marker, count, info))) => {
                if line_start > prose_start {
                    segments.push(Segment {
                        start: prose_start,
                        text: &text[prose_start..line_start],
                        whole_candidate: false,
                    });
                }
                let data = info.is_empty() || info.eq_ignore_ascii_case("json");
                open = Some((marker, count, data, offset));
            }
            (Some((marker, count, data, content_start)), Some((closing, closing_count, info)))
                if closing == *marker && closing_count >= *count && info.is_empty() =>
            {
                if *data {
                    segments.push(Segment {
                        start: *content_start,
                        text: &text[*content_start..line_start],
                        whole_candidate: true,
                    });
                }
                open = None;
                prose_start = offset;
            }
            (Some(_) | None, _) => {}
        }
    }
    match open {
        Some((_, _, true, content_start)) => segments.push(Segment {
            start: content_start,
            text: &text[content_start..],
            whole_candidate: true,
        }),
        None if prose_start < text.len() => segments.push(Segment {
            start: prose_start,
            text: &text[prose_start..],
            whole_candidate: false,
        }),
        Some((_, _, false, _)) | None => {}
    }
    segments
}

/// The fence a line opens or closes: its character, how many, and its info string.
fn fence_of(line: &str) -> Option<(char, usize, &str)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let marker = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let count = rest.len() - rest.trim_start_matches(marker).len();
    if count < 3 {
        return None;
    }
    let info = rest[count..].trim();
    if marker == '`' && info.contains('`') {
        return None;
    }
    Some((marker, count, info.split_whitespace().next().unwrap_or("")))
}

/// Every balanced `{…}` of `text` with its offset: outermost objects, and inside one that does
/// not parse as JSON, the objects it holds. Stops when `budget` bytes have been visited.
fn bare_objects<'a>(text: &'a str, budget: &mut usize) -> Vec<(usize, &'a str)> {
    let mut found = Vec::new();
    let mut position = 0;
    while let Some(offset) = text[position..].find('{') {
        let start = position + offset;
        let Some(end) = matching_end(text.as_bytes(), start, budget) else {
            if *budget == 0 {
                break;
            }
            position = start + 1;
            continue;
        };
        let object = &text[start..end];
        found.push((start, object));
        position = if serde_json::from_str::<serde::de::IgnoredAny>(object).is_ok() {
            end
        } else {
            start + 1
        };
    }
    found
}

/// The end (exclusive) of the object or array that opens at `bytes[start]`, matching brackets
/// by depth outside strings; `None` when it never closes, a closer does not match its opener,
/// or the budget runs out. JSON's structural characters are ASCII, and no byte of a multi-byte
/// UTF-8 character is ASCII, so walking bytes is exact.
fn matching_end(bytes: &[u8], start: usize, budget: &mut usize) -> Option<usize> {
    let mut open = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    for (index, byte) in bytes.iter().enumerate().skip(start) {
        *budget = budget.checked_sub(1)?;
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' => open.push(b'}'),
            b'[' => open.push(b']'),
            b'}' | b']' => {
                if open.pop() != Some(*byte) {
                    return None;
                }
                if open.is_empty() {
                    return Some(index + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// The part of a message [`find_plan`] reads: its last [`MAX_PLAN_BYTES`], from a character
/// boundary.
pub fn plan_window(message: &str) -> &str {
    last_bytes(message, MAX_PLAN_BYTES)
}

/// The last `limit` bytes of `text`, starting on a character boundary.
fn last_bytes(text: &str, limit: usize) -> &str {
    let mut start = text.len().saturating_sub(limit);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAN: &str = r#"{"cases": [{"id": "ac-1", "name": "Multiplies", "type": "functional", "priority": "p0"}]}"#;

    fn case_ids(found: &Map<String, Json>) -> Vec<String> {
        found["cases"]
            .as_array()
            .expect("cases")
            .iter()
            .map(|case| case["id"].as_str().unwrap_or("?").to_owned())
            .collect()
    }

    /// Messy answers and the ids of the plan found in each (`None`: no plan).
    #[test]
    fn messy_answers() {
        let other_plan = PLAN.replace("ac-1", "ac-2");
        let cases: Vec<(&str, String, Option<Vec<&str>>)> = vec![
            ("a labelled fence", format!("```json\n{PLAN}\n```\n"), Some(vec!["ac-1"])),
            ("an unlabelled fence", format!("```\n{PLAN}\n```"), Some(vec!["ac-1"])),
            ("a tilde fence, indented", format!("  ~~~~JSON\n{PLAN}\n  ~~~~\n"), Some(vec!["ac-1"])),
            ("a bare object", PLAN.to_owned(), Some(vec!["ac-1"])),
            (
                "prose around it",
                format!("I wrote three tests.\nHere is the plan: {PLAN} and that is all.\n"),
                Some(vec!["ac-1"]),
            ),
            (
                "prose with braces before it",
                format!("Use {{x}} and a stray {{ brace, then:\n{PLAN}\nDone {{"),
                Some(vec!["ac-1"]),
            ),
            (
                "a stray quote and brace swallowing the plan",
                format!("A {{ \"quoted\" note:\n{PLAN}\n}} end"),
                Some(vec!["ac-1"]),
            ),
            (
                "several code blocks and a JSON that is not a plan",
                format!(
                    "```rust\nfn main() {{ let cases = vec![]; }}\n```\n```json\n{{\"config\": {{\"cases\": 3}}}}\n```\n\
                     ```json\n{PLAN}\n```\n---PRP_PHASE_STATUS---\nEXIT_SIGNAL: true\n---END_PRP_PHASE_STATUS---\n"
                ),
                Some(vec!["ac-1"]),
            ),
            (
                "two plans: the last wins",
                format!("Draft: {other_plan}\nFinal:\n```json\n{PLAN}\n```"),
                Some(vec!["ac-1"]),
            ),
            (
                "a valid plan beats a broken one after it",
                format!("{PLAN}\n```json\n{{\"cases\": [\n```"),
                Some(vec!["ac-1"]),
            ),
            (
                "braces, brackets and escaped quotes inside strings",
                r#"Plan: {"cases": [{"id": "ac-1", "name": "reads \"{[\" and }]\\", "type": "form", "priority": "p1"}]} ok"#.to_owned(),
                Some(vec!["ac-1"]),
            ),
            (
                "multi-byte text around and inside",
                format!("测试计划 — voilà: {}", PLAN.replace("Multiplies", "乘法 ✓")),
                Some(vec!["ac-1"]),
            ),
            (
                "a plan in a code block of another language is code",
                format!("```js\nconst plan = {PLAN};\n```\n"),
                None,
            ),
            ("no JSON at all", "All tests written.".to_owned(), None),
            (
                "prose that quotes the word",
                "I did not fill the \"cases\" of the plan. {\"cases\" are later}".to_owned(),
                None,
            ),
            ("JSON that is not a plan", "{\"ok\": true} [1, 2]".to_owned(), None),
        ];
        for (name, answer, expected) in cases {
            let found = find_plan(&answer).unwrap_or_else(|error| panic!("{name}: {error}"));
            let ids = found.as_ref().map(case_ids);
            let expected: Option<Vec<String>> =
                expected.map(|ids| ids.into_iter().map(str::to_owned).collect());
            assert_eq!(ids, expected, "{name}");
        }
    }

    /// Answers that attempt a plan and the error each gives.
    #[test]
    fn attempted_plans_give_the_seeds_errors() {
        let parse = |text: &str| match find_plan(text) {
            Err(PlanError::Parse(message)) => message,
            other => panic!("{text}: {other:?}"),
        };
        assert!(
            parse("```json\n{\"cases\": [{\"id\": \"a\",}]}\n```").contains("line 1"),
            "a trailing comma names where"
        );
        assert_eq!(
            parse("{\"cases\": {\"id\": \"a\"}}"),
            "`cases` is not an array"
        );
        assert!(
            !parse("```json\n{\"cases\": [\n").is_empty(),
            "an unclosed fence"
        );
        assert_eq!(
            find_plan("Here it is: {\"cases\": [{\"id\": \"a\"}"),
            Err(PlanError::Extract),
            "a truncated bare plan"
        );
        assert_eq!(
            extract_plan("no plan here"),
            Err(PlanError::Extract),
            "the seed's extraction of nothing"
        );
        assert_eq!(
            PlanError::Extract.to_string(),
            "Failed to extract JSON TestPlan from planner output"
        );
    }

    #[test]
    fn the_prompts_example_is_an_echo_not_a_plan() {
        let echo = r#"```json
{"cases": [{"id": "<case id>", "type": "<functional|form>", "priority": "<p0|p1|p2>"}]}
```"#;
        assert_eq!(find_plan(echo), Ok(None), "an echoed prompt alone");
        let answer = format!("{echo}\nMy plan:\n{PLAN}\n");
        let found = find_plan(&answer)
            .expect("reads")
            .expect("the agent's plan");
        assert_eq!(case_ids(&found), ["ac-1"]);
    }

    #[test]
    fn only_the_end_of_a_long_answer_is_read() {
        let early = format!("{PLAN}\n{}", "x".repeat(MAX_PLAN_BYTES));
        assert_eq!(find_plan(&early), Ok(None), "a plan before the last MiB");
        let late = format!("{}é\n{PLAN}", "x".repeat(MAX_PLAN_BYTES));
        assert!(find_plan(&late).expect("reads").is_some());
    }

    #[test]
    fn the_end_starts_on_a_character_boundary() {
        let text = format!("é{}", "x".repeat(9));
        assert_eq!(last_bytes(&text, 10), "x".repeat(9));
        assert_eq!(last_bytes(&text, 11), text);
        assert_eq!(last_bytes("short", 10), "short");
    }

    #[test]
    fn many_unclosed_braces_do_not_hang_the_search() {
        let answer = format!("{}{PLAN}", "{ \"".repeat(200_000));
        let started = std::time::Instant::now();
        let _ = find_plan(&answer);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "bounded by the scan budget"
        );
    }

    #[test]
    fn bracket_matching_skips_strings_and_refuses_mismatches() {
        let mut budget = usize::MAX;
        let text = br#"{"a": "}]\"{", "b": [1, {"c": 2}]} tail"#;
        let end = matching_end(text, 0, &mut budget).expect("closes");
        assert_eq!(&text[end..], b" tail");
        assert_eq!(matching_end(b"{[}]", 0, &mut budget), None);
        assert_eq!(matching_end(b"{\"a\": 1", 0, &mut budget), None);
        let mut small = 3;
        assert_eq!(matching_end(b"{\"a\": 1}", 0, &mut small), None);
        assert_eq!(small, 0);
    }
}
