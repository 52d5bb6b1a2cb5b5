//! The `validate_openapi` method: an HTTP API's description must stay readable by the tools
//! that consume it, so this check finds the `OpenAPI` or Swagger document and checks that it
//! parses and declares a version and its paths; without one the check is not applicable.

use std::path::Path;

use super::files::{display, extension, read_text};
use super::{MethodOutcome, measured};
use crate::metrics::Metrics;

/// Where `OpenAPI` documents usually live, and their usual names.
const OPENAPI_DIRECTORIES: &[&str] = &["", "docs", "api"];
const OPENAPI_NAMES: &[&str] = &[
    "openapi.yaml",
    "openapi.yml",
    "openapi.json",
    "swagger.yaml",
    "swagger.yml",
    "swagger.json",
];

/// `openapi_valid` and `not_applicable`: the `OpenAPI` document, if any, is well formed.
pub(super) fn validate_openapi(repo: &Path) -> MethodOutcome {
    let found = OPENAPI_DIRECTORIES.iter().find_map(|directory| {
        OPENAPI_NAMES.iter().find_map(|name| {
            let path = repo.join(directory).join(name);
            path.is_file().then_some(path)
        })
    });
    let mut metrics = Metrics::default();
    let Some(path) = found else {
        metrics.set_bool("openapi_valid", false);
        metrics.set_bool("not_applicable", true);
        return measured(
            metrics,
            "no OpenAPI document (openapi.yaml/.yml/.json or swagger.*) at the root, docs/ or \
             api/; the repository has no HTTP API description to check"
                .to_owned(),
        );
    };
    let name = display(repo, &path);
    let verdict = match read_text(&path) {
        None => Err("could not be read as text (or is larger than 1 MiB)".to_owned()),
        Some(text) if extension(&path) == "json" => {
            serde_json::from_str::<serde_json::Value>(&text)
                .map_err(|error| format!("is not valid JSON: {error}"))
                .and_then(|document| describe_openapi_json(&document))
        }
        Some(text) => yaml_serde::from_str::<yaml_serde::Value>(&text)
            .map_err(|error| format!("is not valid YAML: {error}"))
            .and_then(|document| describe_openapi_yaml(&document)),
    };
    metrics.set_bool("not_applicable", false);
    match verdict {
        Ok(description) => {
            metrics.set_bool("openapi_valid", true);
            measured(metrics, format!("{name}: {description}"))
        }
        Err(problem) => {
            metrics.set_bool("openapi_valid", false);
            measured(metrics, format!("{name} {problem}"))
        }
    }
}

fn describe_openapi_json(document: &serde_json::Value) -> Result<String, String> {
    let version = ["openapi", "swagger"].iter().find_map(|key| {
        let value = document.get(key)?;
        Some((
            *key,
            value
                .as_str()
                .map_or_else(|| value.to_string(), str::to_owned),
        ))
    });
    let paths = document.get("paths").and_then(serde_json::Value::as_object);
    describe_openapi(version, paths.map(serde_json::Map::len))
}

fn describe_openapi_yaml(document: &yaml_serde::Value) -> Result<String, String> {
    let version = ["openapi", "swagger"].iter().find_map(|key| {
        let value = document.get(key)?;
        let text = match value {
            yaml_serde::Value::String(text) => text.clone(),
            yaml_serde::Value::Number(number) => number.to_string(),
            other => format!("{other:?}"),
        };
        Some((*key, text))
    });
    let paths = document
        .get("paths")
        .and_then(yaml_serde::Value::as_mapping);
    describe_openapi(version, paths.map(yaml_serde::Mapping::len))
}

fn describe_openapi(
    version: Option<(&str, String)>,
    paths: Option<usize>,
) -> Result<String, String> {
    let Some((key, version)) = version else {
        return Err("has no top-level `openapi` or `swagger` version field".to_owned());
    };
    let Some(paths) = paths else {
        return Err("has no top-level `paths` mapping".to_owned());
    };
    let kind = if key == "openapi" {
        "OpenAPI"
    } else {
        "Swagger"
    };
    let plural = if paths == 1 { "" } else { "s" };
    Ok(format!("{kind} {version} with {paths} path{plural}"))
}

#[cfg(test)]
mod tests {
    use crate::method::Method;
    use crate::method::tests::{Repo, figure};
    use crate::metrics::MetricValue;

    #[test]
    fn validate_openapi_checks_version_and_paths() {
        let repo = Repo::new();
        repo.file("docs/openapi.yaml", "openapi: 3.0.3\ninfo:\n  title: x\n  version: '1'\npaths:\n  /limits:\n    get:\n      responses:\n        200:\n          description: ok\n");
        let outcome = repo.run(Method::ValidateOpenapi, None);
        let (value, detail) = figure(&outcome, "openapi_valid");
        assert_eq!(value, MetricValue::Bool(true));
        assert_eq!(detail, "docs/openapi.yaml: OpenAPI 3.0.3 with 1 path");
        assert_eq!(
            figure(&outcome, "not_applicable").0,
            MetricValue::Bool(false)
        );

        let json = Repo::new();
        json.file("swagger.json", "{\"swagger\": \"2.0\", \"info\": {}}");
        let (value, detail) = figure(&json.run(Method::ValidateOpenapi, None), "openapi_valid");
        assert_eq!(value, MetricValue::Bool(false));
        assert_eq!(detail, "swagger.json has no top-level `paths` mapping");

        let broken = Repo::new();
        broken.file("api/openapi.json", "{\"openapi\": ");
        let (value, detail) = figure(&broken.run(Method::ValidateOpenapi, None), "openapi_valid");
        assert_eq!(value, MetricValue::Bool(false));
        assert!(
            detail.starts_with("api/openapi.json is not valid JSON"),
            "{detail}"
        );
    }

    #[test]
    fn validate_openapi_without_a_document_is_not_applicable() {
        let outcome = Repo::new().run(Method::ValidateOpenapi, None);
        assert_eq!(
            figure(&outcome, "not_applicable").0,
            MetricValue::Bool(true)
        );
        assert_eq!(
            figure(&outcome, "openapi_valid").0,
            MetricValue::Bool(false)
        );
    }
}
