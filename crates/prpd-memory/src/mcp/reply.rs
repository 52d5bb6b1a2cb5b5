//! A tool's answer turned into [`Finding`]s. MCP says only that a tool answers with content
//! blocks (text, mostly) and, optionally, structured JSON; memory servers fill them in their own
//! ways, so prpd reads, in order: structured content holding a list of results; a text block
//! that is such JSON (claude-self-reflect's JSON answers); a text block of `<result>` elements
//! (its XML answers); otherwise each text block is one finding, and a text that says nothing
//! was found is none. From a result it takes what it recognises — a score, a timestamp, the
//! conversation or run, a title, an excerpt, files — and leaves out what is missing.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Value};

use crate::finding::{Finding, excerpt};

/// A `<result …>…</result>` element of an XML answer.
static RESULT_ELEMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?s)<result\b([^>]*)>(.*?)</result>")
        .unwrap_or_else(|error| unreachable!("{error}"))
});

/// A text that says the search found nothing ("No results found", "No conversations found").
static NOTHING_FOUND: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^\s*(no\b[^\n]{0,80}\b(found|results?|matches)\b|0 results\b)")
        .unwrap_or_else(|error| unreachable!("{error}"))
});

/// The findings in a tool's answer: its structured content and its text blocks.
pub fn findings(tool: &str, structured: Option<&Value>, texts: &[&str]) -> Vec<Finding> {
    if let Some(items) = structured.and_then(result_items) {
        return items.iter().map(|item| from_object(tool, item)).collect();
    }
    let mut found = Vec::new();
    for text in texts {
        if let Some(items) = serde_json::from_str::<Value>(text)
            .ok()
            .as_ref()
            .and_then(result_items)
        {
            found.extend(items.iter().map(|item| from_object(tool, item)));
        } else if RESULT_ELEMENT.is_match(text) {
            found.extend(
                RESULT_ELEMENT
                    .captures_iter(text)
                    .map(|element| from_element(tool, &element[1], &element[2])),
            );
        } else if !text.trim().is_empty() && !NOTHING_FOUND.is_match(text) {
            found.push(Finding {
                score: 0.0,
                created_at: None,
                run_id: None,
                kind: tool.to_owned(),
                title: first_line(text),
                excerpt: excerpt(text, &[]),
                files: Vec::new(),
            });
        }
    }
    found
}

/// The result objects of a JSON answer: a list, or the list under `results`.
fn result_items(value: &Value) -> Option<Vec<Map<String, Value>>> {
    let list = match value {
        Value::Array(list) => list,
        Value::Object(object) => object.get("results")?.as_array()?,
        _ => return None,
    };
    Some(list.iter().filter_map(Value::as_object).cloned().collect())
}

fn from_object(tool: &str, item: &Map<String, Value>) -> Finding {
    let text = |keys: &[&str]| {
        keys.iter().find_map(|key| match item.get(*key)? {
            Value::String(text) if !text.trim().is_empty() => Some(text.clone()),
            Value::Number(number) => Some(number.to_string()),
            _ => None,
        })
    };
    let body = text(&["excerpt", "content", "text", "snippet", "summary"]).unwrap_or_default();
    let mut files: Vec<String> = ["files", "files_analyzed", "files_edited"]
        .iter()
        .filter_map(|key| item.get(*key)?.as_array())
        .flatten()
        .filter_map(|file| file.as_str().map(str::to_owned))
        .collect();
    if let Some(file) = text(&["file_path", "file"]) {
        files.push(file);
    }
    files.dedup();
    Finding {
        score: ["score", "relevance", "similarity"]
            .iter()
            .find_map(|key| item.get(*key)?.as_f64())
            .unwrap_or(0.0),
        created_at: item
            .get("created_at")
            .and_then(Value::as_u64)
            .or_else(|| text(&["timestamp", "created_at", "date"]).and_then(|time| unix(&time))),
        run_id: text(&["run_id", "conversation_id", "cid", "id"]),
        kind: tool.to_owned(),
        title: text(&["title", "project_name", "project"]).unwrap_or_else(|| first_line(&body)),
        excerpt: excerpt(&body, &[]),
        files,
    }
}

fn from_element(tool: &str, attributes: &str, inner: &str) -> Finding {
    let field = |names: &[&str]| {
        names.iter().find_map(|name| {
            let element = Regex::new(&format!(r"(?s)<{name}\b[^>]*>(.*?)</{name}>")).ok()?;
            let attribute = Regex::new(&format!(r#"\b{name}="([^"]*)""#)).ok()?;
            element
                .captures(inner)
                .or_else(|| attribute.captures(attributes))
                .map(|found| unescape(found[1].trim()))
                .filter(|value| !value.is_empty())
        })
    };
    let body = field(&["excerpt", "content", "text", "snippet", "summary"])
        .unwrap_or_else(|| unescape(&strip_tags(inner)));
    Finding {
        score: field(&["score", "relevance"])
            .and_then(|score| score.parse().ok())
            .unwrap_or(0.0),
        created_at: field(&["timestamp", "created_at", "date"]).and_then(|time| unix(&time)),
        run_id: field(&["run_id", "conversation_id", "cid", "id"]),
        kind: tool.to_owned(),
        title: field(&["title", "project"]).unwrap_or_else(|| first_line(&body)),
        excerpt: excerpt(&body, &[]),
        files: field(&["file_path", "file"]).into_iter().collect(),
    }
}

/// An RFC 3339 timestamp (or one without a zone, read as UTC) in Unix seconds.
fn unix(time: &str) -> Option<u64> {
    let parsed = humantime::parse_rfc3339_weak(time.trim().trim_end_matches('Z')).ok()?;
    parsed
        .duration_since(std::time::UNIX_EPOCH)
        .ok()
        .map(|since| since.as_secs())
}

fn first_line(text: &str) -> String {
    let line = text.lines().map(str::trim).find(|line| !line.is_empty());
    line.unwrap_or_default().chars().take(120).collect()
}

fn strip_tags(text: &str) -> String {
    let mut plain = String::with_capacity(text.len());
    let mut in_tag = false;
    for character in text.chars() {
        match character {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                plain.push(' ');
            }
            _ if !in_tag => plain.push(character),
            _ => {}
        }
    }
    plain
}

fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn structured_results_are_read_field_by_field() {
        let structured = json!({"results": [{
            "score": 0.82,
            "timestamp": "2024-01-15T10:30:00Z",
            "conversation_id": "abc123",
            "excerpt": "The token bucket overflowed",
            "files_analyzed": ["src/bucket.rs"]
        }]});
        let found = findings("csr_search_by_file", Some(&structured), &["ignored"]);
        assert_eq!(found.len(), 1);
        let finding = &found[0];
        assert!((finding.score - 0.82).abs() < 1e-9);
        assert_eq!(finding.created_at, Some(1_705_314_600));
        assert_eq!(finding.run_id.as_deref(), Some("abc123"));
        assert_eq!(finding.kind, "csr_search_by_file");
        assert_eq!(finding.title, "The token bucket overflowed");
        assert_eq!(finding.files, vec!["src/bucket.rs".to_owned()]);
    }

    #[test]
    fn a_json_text_answer_is_a_list_of_results() {
        let text = r#"[{"score": 0.9, "id": "p1", "excerpt": "a"}, {"score": 0.5, "id": "p2", "content": "b"}]"#;
        let found = findings("csr_reflect_on_past", None, &[text]);
        assert_eq!(
            found
                .iter()
                .map(|finding| finding.run_id.clone().unwrap_or_default())
                .collect::<Vec<_>>(),
            ["p1", "p2"]
        );
        assert_eq!(found[1].excerpt, "b");
    }

    #[test]
    fn an_xml_text_answer_gives_one_finding_per_result_element() {
        let text = "<search><result rank=\"1\" score=\"0.71\"><cid>c-9</cid>\
                    <timestamp>2024-01-15T10:30:00</timestamp><title>Docker &amp; compose</title>\
                    <excerpt>restart policy was missing</excerpt></result>\
                    <result rank=\"2\"><score>0.4</score><content>second</content></result></search>";
        let found = findings("csr_search_by_concept", None, &[text]);
        assert_eq!(found.len(), 2);
        assert!((found[0].score - 0.71).abs() < 1e-9);
        assert_eq!(found[0].run_id.as_deref(), Some("c-9"));
        assert_eq!(found[0].title, "Docker & compose");
        assert_eq!(found[0].excerpt, "restart policy was missing");
        assert_eq!(found[0].created_at, Some(1_705_314_600));
        assert!((found[1].score - 0.4).abs() < 1e-9);
        assert_eq!(found[1].title, "second");
    }

    #[test]
    fn plain_text_is_one_finding_each_and_nothing_found_is_none() {
        let found = findings(
            "csr_why",
            None,
            &[
                "We chose SQLite\nbecause it is embedded.",
                "  ",
                "No results found for 'x'",
                "No conversations found matching your query",
            ],
        );
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].title, "We chose SQLite");
        assert_eq!(found[0].excerpt, "We chose SQLite because it is embedded.");
        assert!(found[0].score.abs() < f64::EPSILON);
        assert_eq!(found[0].created_at, None);
    }
}
