//! A plan's JSON checked and completed with the seed's rules (its `normalizeFlow` and
//! `normalizeCase`): the model of `model.rs` out, and a warning for every value prpd replaced.
//! Pure: the JSON in, values out.
//!
//! The rules. A plan needs at least one case ([`PlanError::NoCases`]) and has at most
//! [`MAX_CASES`] ([`PlanError::TooManyCases`]). Every text is read as one line (whitespace runs,
//! newlines included, become one space; control characters are dropped); numbers and booleans
//! are read as their text. For each case, N being its place in the list (from 1):
//!
//! | field | missing | invalid |
//! | --- | --- | --- |
//! | not an object | — | left out, warning |
//! | `id` | `case-N`, warning | (a second case with the same id) `<id>-2`, warning |
//! | `name` | the id, warning | — |
//! | `type` | `functional`, warning | not one of the six (any case) → `functional`, warning naming the value |
//! | `priority` | `p2`, warning (a case that claims no urgency gets the least) | not `p0`/`p1`/`p2` (any case) → `p2`, warning naming the value |
//! | `relatedPageIds`, `preconditions` | empty | a single text is a list of one; items that are not text are left out, warning |
//! | `steps` | empty | a text item is a step without expected result; an item without a `description` is left out, warning |
//! | `markdownPath` | `<type>-<priority>-<slug of the name>.md` | not a safe relative path under `specs/` → the default, warning; a path another case took → `-2` before `.md`, warning; no `.md` → `.md` added |
//!
//! A safe spec path is relative, has at most eight parts of letters, digits, `.`, `_` and `-`
//! (none starting with `.`, so no `..`), and at most 200 characters: an agent's plan cannot
//! write outside the plan's `specs/` directory. Flows are read the same way: `flow-N` for a
//! missing id, the id for a missing name, `pagePath` as a list of texts; a flow that is not
//! an object is left out with a warning, and `flows` that is not a list is ignored with one.

use std::collections::BTreeSet;

use serde_json::{Map, Value as Json};

use super::PlanError;
use super::model::{CaseType, FlowPlan, Priority, StepPlan, TestCasePlan, TestPlan};

/// The most cases (and flows) a plan may hold.
pub const MAX_CASES: usize = 200;

/// The longest spec path, in bytes.
const MAX_PATH: usize = 200;

/// The most parts (folders and the file) of a spec path.
const MAX_PATH_PARTS: usize = 8;

/// The longest slug of a default spec path, in characters.
const MAX_SLUG: usize = 60;

/// A plan's flows and cases as prpd accepted them, and what it had to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Normalised {
    pub flows: Vec<FlowPlan>,
    pub cases: Vec<TestCasePlan>,
    /// One sentence per value prpd replaced or left out, naming the case or flow.
    pub warnings: Vec<String>,
}

impl Normalised {
    /// The whole plan of run `run_id`, accepted at `generated_at` (RFC 3339); a plan read from
    /// an agent's answer has no configuration snapshot.
    pub fn into_plan(self, run_id: &str, generated_at: &str) -> TestPlan {
        TestPlan {
            run_id: run_id.to_owned(),
            generated_at: generated_at.to_owned(),
            config_snapshot: None,
            flows: self.flows,
            cases: self.cases,
        }
    }
}

/// Checks and completes the plan `object` (a JSON object with `cases`) with the rules of the
/// module docs.
pub fn normalise(object: &Map<String, Json>) -> Result<Normalised, PlanError> {
    let items = match object.get("cases") {
        Some(Json::Array(items)) => items,
        Some(_) => return Err(PlanError::Parse("`cases` is not an array".to_owned())),
        None => return Err(PlanError::NoCases),
    };
    if items.len() > MAX_CASES {
        return Err(PlanError::TooManyCases { count: items.len() });
    }
    let mut warnings = Vec::new();
    let flows = flows(object.get("flows"), &mut warnings)?;
    let mut ids = BTreeSet::new();
    let mut paths = BTreeSet::new();
    let mut cases = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let number = index + 1;
        let Json::Object(fields) = item else {
            warnings.push(format!("case {number} is not an object; it is left out"));
            continue;
        };
        let mut case = case(number, fields, &mut warnings);
        case.id = unique(&case.id, &mut ids, |id| {
            warnings.push(format!(
                "case {number}: id `{}` is taken by an earlier case; it is `{id}`",
                short(&case.id)
            ));
        });
        let path = case.markdown_path.clone();
        case.markdown_path = unique_path(&path, &mut paths, |taken| {
            warnings.push(format!(
                "case {number} (`{}`): spec path `{path}` is taken by an earlier case; it is \
                 `{taken}`",
                short(&case.id)
            ));
        });
        cases.push(case);
    }
    if cases.is_empty() {
        return Err(PlanError::NoCases);
    }
    Ok(Normalised {
        flows,
        cases,
        warnings,
    })
}

fn flows(value: Option<&Json>, warnings: &mut Vec<String>) -> Result<Vec<FlowPlan>, PlanError> {
    let items = match value {
        None | Some(Json::Null) => return Ok(Vec::new()),
        Some(Json::Array(items)) => items,
        Some(_) => {
            warnings.push("`flows` is not a list; it is ignored".to_owned());
            return Ok(Vec::new());
        }
    };
    if items.len() > MAX_CASES {
        return Err(PlanError::Parse(format!(
            "TestPlan has {} flows; prpd reads at most {MAX_CASES}",
            items.len()
        )));
    }
    let mut flows = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let number = index + 1;
        let Json::Object(fields) = item else {
            warnings.push(format!("flow {number} is not an object; it is left out"));
            continue;
        };
        let id = text(fields.get("id")).unwrap_or_else(|| {
            warnings.push(format!("flow {number} has no id; it is `flow-{number}`"));
            format!("flow-{number}")
        });
        let name = text(fields.get("name")).unwrap_or_else(|| {
            warnings.push(format!(
                "flow {number} (`{}`) has no name; it is named after its id",
                short(&id)
            ));
            id.clone()
        });
        let label = format!("flow {number} (`{}`)", short(&id));
        flows.push(FlowPlan {
            description: text(fields.get("description")),
            page_path: texts(fields.get("pagePath"), &label, "pagePath", warnings),
            id,
            name,
        });
    }
    Ok(flows)
}

fn case(number: usize, fields: &Map<String, Json>, warnings: &mut Vec<String>) -> TestCasePlan {
    let id = text(fields.get("id")).unwrap_or_else(|| {
        warnings.push(format!("case {number} has no id; it is `case-{number}`"));
        format!("case-{number}")
    });
    let label = format!("case {number} (`{}`)", short(&id));
    let name = text(fields.get("name")).unwrap_or_else(|| {
        warnings.push(format!("{label} has no name; it is named after its id"));
        id.clone()
    });
    let case_type = one_of(
        fields.get("type"),
        &CaseType::ALL,
        CaseType::as_str,
        CaseType::Functional,
        &format!("{label}: type"),
        warnings,
    );
    let priority = one_of(
        fields.get("priority"),
        &Priority::ALL,
        Priority::as_str,
        Priority::P2,
        &format!("{label}: priority"),
        warnings,
    );
    let default_path = format!(
        "{case_type}-{priority}-{}.md",
        slug(&name)
            .or_else(|| slug(&id))
            .unwrap_or(format!("case-{number}"))
    );
    let markdown_path = match text(fields.get("markdownPath")) {
        None => default_path,
        Some(given) => match spec_path(&given) {
            Ok(path) => path,
            Err(reason) => {
                warnings.push(format!(
                    "{label}: spec path `{}` {reason}; it is `{default_path}`",
                    short(&given)
                ));
                default_path
            }
        },
    };
    TestCasePlan {
        related_page_ids: texts(
            fields.get("relatedPageIds"),
            &label,
            "relatedPageIds",
            warnings,
        ),
        preconditions: texts(
            fields.get("preconditions"),
            &label,
            "preconditions",
            warnings,
        ),
        steps: steps(fields.get("steps"), &label, warnings),
        id,
        name,
        case_type,
        priority,
        markdown_path,
    }
}

/// The value of `value` among `allowed` (by name, any case), else `default` with a warning
/// that names the value.
fn one_of<T: Copy>(
    value: Option<&Json>,
    allowed: &[T],
    name_of: fn(T) -> &'static str,
    default: T,
    what: &str,
    warnings: &mut Vec<String>,
) -> T {
    let names = || {
        allowed
            .iter()
            .map(|item| name_of(*item))
            .collect::<Vec<_>>()
    };
    let given = match value {
        None | Some(Json::Null) => {
            warnings.push(format!("{what} is missing; it is `{}`", name_of(default)));
            return default;
        }
        Some(given) => text(Some(given)).unwrap_or_else(|| given.to_string()),
    };
    let wanted = given.to_lowercase();
    if let Some(found) = allowed.iter().find(|item| name_of(**item) == wanted) {
        return *found;
    }
    warnings.push(format!(
        "{what} `{}` is not one of {}; it is `{}`",
        short(&given),
        names().join(", "),
        name_of(default)
    ));
    default
}

fn steps(value: Option<&Json>, label: &str, warnings: &mut Vec<String>) -> Vec<StepPlan> {
    let items = match value {
        None | Some(Json::Null) => return Vec::new(),
        Some(Json::Array(items)) => items.as_slice(),
        Some(other) => std::slice::from_ref(other),
    };
    let mut steps = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let description = match item {
            Json::Object(fields) => text(fields.get("description")),
            other => text(Some(other)),
        };
        let Some(description) = description else {
            warnings.push(format!(
                "{label}: step {} has no description; it is left out",
                index + 1
            ));
            continue;
        };
        steps.push(StepPlan {
            description,
            expected_result: item
                .as_object()
                .and_then(|fields| text(fields.get("expectedResult"))),
        });
    }
    steps
}

/// A list of texts: a single text is a list of one; other items are left out with a warning.
fn texts(value: Option<&Json>, label: &str, key: &str, warnings: &mut Vec<String>) -> Vec<String> {
    let items = match value {
        None | Some(Json::Null) => return Vec::new(),
        Some(Json::Array(items)) => items.as_slice(),
        Some(other) => std::slice::from_ref(other),
    };
    let found: Vec<String> = items.iter().filter_map(|item| text(Some(item))).collect();
    if found.len() < items.len() {
        warnings.push(format!(
            "{label}: {} item(s) of `{key}` are not text; they are left out",
            items.len() - found.len()
        ));
    }
    found
}

/// A text value as one line, `None` when missing, empty or not text, a number or a boolean.
fn text(value: Option<&Json>) -> Option<String> {
    let raw = match value? {
        Json::String(text) => text.clone(),
        Json::Number(number) => number.to_string(),
        Json::Bool(flag) => flag.to_string(),
        Json::Null | Json::Array(_) | Json::Object(_) => return None,
    };
    let line = one_line(&raw);
    (!line.is_empty()).then_some(line)
}

/// `text` on one line: whitespace runs become one space, control characters go.
fn one_line(text: &str) -> String {
    text.split_whitespace()
        .map(|word| word.chars().filter(|c| !c.is_control()).collect::<String>())
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `text` cut to 80 characters for a message.
fn short(text: &str) -> String {
    if text.chars().count() <= 80 {
        text.to_owned()
    } else {
        format!("{}…", text.chars().take(79).collect::<String>())
    }
}

/// The lowercase ASCII letters and digits of `text`, other runs as one `-`, at most
/// [`MAX_SLUG`] characters; `None` when nothing is left.
fn slug(text: &str) -> Option<String> {
    let mut slug = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
        if slug.len() >= MAX_SLUG {
            break;
        }
    }
    let slug = slug.trim_matches('-').to_owned();
    (!slug.is_empty()).then_some(slug)
}

/// `given` as a safe spec path relative to `specs/` (with `.md` added when it has none), or
/// why it is not one.
fn spec_path(given: &str) -> Result<String, &'static str> {
    if given.starts_with('/') || given.contains('\\') || given.contains(':') {
        return Err("is not a relative path");
    }
    let parts: Vec<&str> = given.split('/').collect();
    if parts.contains(&"..") {
        return Err("leaves specs/");
    }
    if parts
        .iter()
        .any(|part| part.is_empty() || part.starts_with('.'))
    {
        return Err("has an empty part or a part starting with `.`");
    }
    if !parts.iter().all(|part| {
        part.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    }) {
        return Err("has characters other than letters, digits, `.`, `_`, `-` and `/`");
    }
    if parts.len() > MAX_PATH_PARTS {
        return Err("has more than 8 parts");
    }
    let path = if std::path::Path::new(given)
        .extension()
        .is_some_and(|extension| extension.eq_ignore_ascii_case("md"))
    {
        given.to_owned()
    } else {
        format!("{given}.md")
    };
    if path.len() > MAX_PATH {
        return Err("is longer than 200 characters");
    }
    Ok(path)
}

/// `wanted`, or `wanted-2`, `wanted-3`… when `taken` holds it; records the result, and calls
/// `renamed` with it when it had to change.
fn unique(wanted: &str, taken: &mut BTreeSet<String>, renamed: impl FnOnce(&str)) -> String {
    let mut chosen = wanted.to_owned();
    let mut suffix = 2;
    while taken.contains(&chosen) {
        chosen = format!("{wanted}-{suffix}");
        suffix += 1;
    }
    taken.insert(chosen.clone());
    if chosen != wanted {
        renamed(&chosen);
    }
    chosen
}

/// As [`unique`] for a spec path: the suffix goes before `.md`, and paths are compared without
/// case (two specs differing only in case would be one file on some file systems).
fn unique_path(wanted: &str, taken: &mut BTreeSet<String>, renamed: impl FnOnce(&str)) -> String {
    let stem = &wanted[..wanted.len() - ".md".len()];
    let mut chosen = wanted.to_owned();
    let mut suffix = 2;
    while taken.contains(&chosen.to_lowercase()) {
        chosen = format!("{stem}-{suffix}.md");
        suffix += 1;
    }
    taken.insert(chosen.to_lowercase());
    if chosen != wanted {
        renamed(&chosen);
    }
    chosen
}

#[cfg(test)]
mod tests;
