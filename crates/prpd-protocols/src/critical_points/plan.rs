//! A plan of critical points as `qa_plan` receives and returns it: the request is read from
//! JSON (an MCP tool call, `prpd plan create`), checked with the seed's error shapes, and given
//! its ids, hints, id and lifetime. Pure: the caller supplies the clock and the random id.

use std::collections::BTreeSet;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One thing that must be true when the work is done.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CriticalPoint {
    /// `CP1`..`CPn` unless the caller named it.
    pub id: String,
    pub description: String,
    /// A substring that will literally appear in the evidence; the description when not given.
    pub verification_hint: String,
}

/// Which evidence stream a downstream verifier should expect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Test result rows.
    Test,
    /// Findings of a scanner or linter.
    Scan,
    /// Log lines.
    Log,
    /// Screenshot paths.
    Screenshot,
    /// Several of these.
    Mixed,
}

impl Kind {
    const ALL: [(&'static str, Kind); 5] = [
        ("test", Kind::Test),
        ("scan", Kind::Scan),
        ("log", Kind::Log),
        ("screenshot", Kind::Screenshot),
        ("mixed", Kind::Mixed),
    ];

    fn named(name: &str) -> Option<Kind> {
        Kind::ALL
            .iter()
            .find(|(known, _)| known.eq_ignore_ascii_case(name.trim()))
            .map(|(_, kind)| *kind)
    }

    fn names() -> String {
        Kind::ALL.map(|(name, _)| name).join(", ")
    }
}

/// A stored plan, exactly as `qa_plan` returns it and as it is written to disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// 12 lowercase hex digits.
    pub plan_id: String,
    pub task: String,
    pub kind: Option<Kind>,
    pub critical_points: Vec<CriticalPoint>,
    /// RFC 3339, UTC, to the second.
    pub created_at: String,
    pub expires_at: String,
    /// Where the plan was written, or `None` when persistence is off or the write failed.
    pub persisted_to: Option<String>,
}

impl Plan {
    /// Whether the plan has expired at `now` (an unreadable expiry counts as expired).
    pub fn expired(&self, now: SystemTime) -> bool {
        humantime::parse_rfc3339(&self.expires_at).map_or(true, |expires| expires <= now)
    }
}

/// A request `qa_plan` refuses, with the seed's error code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("no_task: {0}")]
    NoTask(String),
    #[error("no_critical_points: {0}")]
    NoCriticalPoints(String),
    #[error("bad_critical_points: {0}")]
    BadCriticalPoints(String),
    #[error("bad_kind: {0}")]
    BadKind(String),
}

impl PlanError {
    /// The seed's error code.
    pub fn code(&self) -> &'static str {
        match self {
            PlanError::NoTask(_) => "no_task",
            PlanError::NoCriticalPoints(_) => "no_critical_points",
            PlanError::BadCriticalPoints(_) => "bad_critical_points",
            PlanError::BadKind(_) => "bad_kind",
        }
    }

    /// What was wrong, for a person.
    pub fn message(&self) -> &str {
        match self {
            PlanError::NoTask(message)
            | PlanError::NoCriticalPoints(message)
            | PlanError::BadCriticalPoints(message)
            | PlanError::BadKind(message) => message,
        }
    }

    /// The error as a tool answers it: `{"error": code, "message": …}`.
    pub fn to_json(&self) -> Value {
        serde_json::json!({ "error": self.code(), "message": self.message() })
    }
}

/// Reads a `qa_plan` request (`{task, critical_points, kind?}`) into a plan with id `plan_id`
/// created at `now` that lives for `ttl`.
pub fn create(
    request: &Value,
    plan_id: String,
    now: SystemTime,
    ttl: Duration,
) -> Result<Plan, PlanError> {
    let task = match request.get("task") {
        Some(Value::String(task)) if !task.trim().is_empty() => task.trim().to_owned(),
        Some(Value::String(_)) => return Err(PlanError::NoTask("task is empty".to_owned())),
        Some(other) => {
            return Err(PlanError::NoTask(format!(
                "task must be a string, got {}",
                type_name(other)
            )));
        }
        None => return Err(PlanError::NoTask("task is required".to_owned())),
    };
    let kind = match request.get("kind") {
        None | Some(Value::Null) => None,
        Some(Value::String(name)) => Some(Kind::named(name).ok_or_else(|| {
            PlanError::BadKind(format!(
                "kind \"{name}\" is not one of {}; omit it if unsure",
                Kind::names()
            ))
        })?),
        Some(other) => {
            return Err(PlanError::BadKind(format!(
                "kind must be a string ({}), got {}",
                Kind::names(),
                type_name(other)
            )));
        }
    };
    let critical_points = points(request.get("critical_points"))?;
    Ok(Plan {
        plan_id,
        task,
        kind,
        critical_points,
        created_at: humantime::format_rfc3339_seconds(now).to_string(),
        expires_at: humantime::format_rfc3339_seconds(now + ttl).to_string(),
        persisted_to: None,
    })
}

fn points(value: Option<&Value>) -> Result<Vec<CriticalPoint>, PlanError> {
    let entries = match value {
        None | Some(Value::Null) => {
            return Err(PlanError::NoCriticalPoints(
                "critical_points is required: a non-empty list".to_owned(),
            ));
        }
        Some(Value::Array(entries)) if entries.is_empty() => {
            return Err(PlanError::NoCriticalPoints(
                "critical_points is empty: declare at least one point".to_owned(),
            ));
        }
        Some(Value::Array(entries)) => entries,
        Some(other) => {
            return Err(PlanError::BadCriticalPoints(format!(
                "critical_points must be a list, got {}",
                type_name(other)
            )));
        }
    };
    let mut seen = BTreeSet::new();
    let mut points = Vec::with_capacity(entries.len());
    for (index, entry) in entries.iter().enumerate() {
        let point = point(index, entry)?;
        if !seen.insert(point.id.clone()) {
            return Err(PlanError::BadCriticalPoints(format!(
                "critical_points[{index}]: duplicate id \"{}\"",
                point.id
            )));
        }
        points.push(point);
    }
    Ok(points)
}

fn point(index: usize, entry: &Value) -> Result<CriticalPoint, PlanError> {
    let at = |message: String| {
        PlanError::BadCriticalPoints(format!("critical_points[{index}]: {message}"))
    };
    let auto_id = format!("CP{}", index + 1);
    match entry {
        Value::String(text) if !text.trim().is_empty() => Ok(CriticalPoint {
            id: auto_id,
            description: text.trim().to_owned(),
            verification_hint: text.trim().to_owned(),
        }),
        Value::String(_) => Err(at("the description is empty".to_owned())),
        Value::Object(fields) => {
            let text_field = |name: &str| -> Result<Option<String>, PlanError> {
                match fields.get(name) {
                    None | Some(Value::Null) => Ok(None),
                    Some(Value::String(text)) if text.trim().is_empty() => Ok(None),
                    Some(Value::String(text)) => Ok(Some(text.trim().to_owned())),
                    Some(other) => Err(at(format!(
                        "{name} must be a string, got {}",
                        type_name(other)
                    ))),
                }
            };
            let description =
                text_field("description")?.ok_or_else(|| at("missing description".to_owned()))?;
            let id = text_field("id")?.unwrap_or(auto_id);
            let verification_hint =
                text_field("verification_hint")?.unwrap_or_else(|| description.clone());
            Ok(CriticalPoint {
                id,
                description,
                verification_hint,
            })
        }
        other => Err(at(format!(
            "expected a string or an object {{id?, description, verification_hint?}}, got {}",
            type_name(other)
        ))),
    }
}

/// JSON's name for the type of `value`, for messages.
pub(super) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const TTL: Duration = Duration::from_secs(30 * 60);

    fn at(seconds: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(seconds)
    }

    fn made(request: &Value) -> Result<Plan, PlanError> {
        create(request, "0123456789ab".to_owned(), at(1_800_000_000), TTL)
    }

    #[test]
    fn strings_and_objects_get_ids_and_hints() {
        let plan = made(&json!({
            "task": " add login ",
            "kind": "Test",
            "critical_points": [
                "login test passes",
                {"description": "no console errors", "verification_hint": "0 errors"},
                {"id": "SEC", "description": "password is hashed"},
            ],
        }))
        .expect("valid");
        assert_eq!(plan.task, "add login");
        assert_eq!(plan.kind, Some(Kind::Test));
        let ids: Vec<&str> = plan.critical_points.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(ids, ["CP1", "CP2", "SEC"]);
        assert_eq!(
            plan.critical_points[0].verification_hint,
            "login test passes"
        );
        assert_eq!(plan.critical_points[1].verification_hint, "0 errors");
        assert_eq!(
            plan.critical_points[2].verification_hint,
            "password is hashed"
        );
        assert_eq!(plan.created_at, "2027-01-15T08:00:00Z");
        assert_eq!(plan.expires_at, "2027-01-15T08:30:00Z");
        assert!(!plan.expired(at(1_800_000_000 + 1_799)));
        assert!(plan.expired(at(1_800_000_000 + 1_800)));
    }

    #[test]
    fn every_error_shape() {
        let cases: [(Value, &str, &str); 13] = [
            (
                json!({"critical_points": ["x"]}),
                "no_task",
                "task is required",
            ),
            (
                json!({"task": "  ", "critical_points": ["x"]}),
                "no_task",
                "task is empty",
            ),
            (
                json!({"task": 3, "critical_points": ["x"]}),
                "no_task",
                "got a number",
            ),
            (json!({"task": "t"}), "no_critical_points", "required"),
            (
                json!({"task": "t", "critical_points": []}),
                "no_critical_points",
                "empty",
            ),
            (
                json!({"task": "t", "critical_points": "x"}),
                "bad_critical_points",
                "must be a list",
            ),
            (
                json!({"task": "t", "critical_points": [7]}),
                "bad_critical_points",
                "critical_points[0]: expected a string or an object",
            ),
            (
                json!({"task": "t", "critical_points": ["a", {"id": "x"}]}),
                "bad_critical_points",
                "critical_points[1]: missing description",
            ),
            (
                json!({"task": "t", "critical_points": ["a", {"id": "CP1", "description": "b"}]}),
                "bad_critical_points",
                "duplicate id \"CP1\"",
            ),
            (
                json!({"task": "t", "critical_points": [{"description": "b", "id": 4}]}),
                "bad_critical_points",
                "id must be a string, got a number",
            ),
            (
                json!({"task": "t", "critical_points": [""]}),
                "bad_critical_points",
                "description is empty",
            ),
            (
                json!({"task": "t", "critical_points": ["a"], "kind": "vibes"}),
                "bad_kind",
                "\"vibes\" is not one of test, scan, log, screenshot, mixed",
            ),
            (
                json!({"task": "t", "critical_points": ["a"], "kind": 1}),
                "bad_kind",
                "must be a string",
            ),
        ];
        for (request, code, message) in cases {
            let error = made(&request).expect_err("refused");
            assert_eq!(error.code(), code, "{request}");
            assert!(error.message().contains(message), "{request}: {error}");
            assert_eq!(error.to_json()["error"], code);
        }
    }

    #[test]
    fn a_null_kind_is_no_kind() {
        let plan =
            made(&json!({"task": "t", "critical_points": ["a"], "kind": null})).expect("valid");
        assert_eq!(plan.kind, None);
    }
}
