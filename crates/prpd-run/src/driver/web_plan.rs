//! The web plan in the loop (`[plan]` of prpd.toml set): at RED's start prpd starts the app
//! when `serve` says how, explores it and writes the baseline plan under `runs/<id>/web/`
//! (`plan-explore/`, `plan/`), keeps in the record the section of RED's prompt with the specs
//! of the pages the PRP names, and at each QA lists in the report which plan cases have a test.
//! The plan advises; it never blocks: an app that cannot be explored is said in RED's prompt
//! and in the report, and the run goes on.

use crate::record::WebPlanState;
use prpd_qa::runner::{QaOutcome, ReportSection};
use prpd_web::{self as web_plan, in_run};

use super::{DriveError, Driver};

impl Driver {
    /// Makes the run's web plan once, before RED's first prompt; nothing without `[plan]`.
    pub(super) async fn ensure_web_plan(&mut self) -> Result<(), DriveError> {
        let Some(section) = self.context.config.plan.clone() else {
            return Ok(());
        };
        if self.record.web_plan.is_some() {
            return Ok(());
        }
        let dir = self.run_dir().join("web");
        let state = match section.base_url.clone() {
            None => failed(
                &dir,
                "`[plan]` of prpd.toml has no `base_url` to explore".to_owned(),
            ),
            Some(url) => {
                let served = match &section.serve {
                    Some(command) => web_plan::serve(
                        command,
                        &url,
                        section.serve_timeout,
                        &self.context.repo,
                        &dir.join("serve.log"),
                    )
                    .await
                    .map_err(|error| format!("`[plan] serve` failed: {error}")),
                    None => Ok(None),
                };
                match served {
                    Err(error) => failed(&dir, error),
                    Ok(app) => {
                        let config = web_plan::plan_config(&section, &url);
                        let planned =
                            web_plan::plan_app(&dir, &self.record.run_id, config, section.tabs)
                                .await;
                        if let Some(app) = app {
                            app.stop(std::time::Duration::from_secs(5)).await;
                        }
                        match planned {
                            Err(error) => {
                                failed(&dir, format!("prpd could not explore {url}: {error}"))
                            }
                            Ok(planned) => self.web_plan_state(&dir, &planned),
                        }
                    }
                }
            }
        };
        if let Some(error) = &state.error {
            tracing::warn!(%error, "no web plan for this run");
        }
        self.record.web_plan = Some(state);
        self.save()
    }

    fn web_plan_state(&self, dir: &std::path::Path, planned: &web_plan::Planned) -> WebPlanState {
        let Some(plan) = &planned.plan else {
            let hit = planned
                .guardrail()
                .map_or_else(String::new, ToString::to_string);
            return failed(
                dir,
                format!(
                    "the exploration stopped early ({hit}); see {}",
                    dir.join("plan").display()
                ),
            );
        };
        let named = in_run::named_pages(&planned.graph, &self.context.prp_text);
        let shown_dir = dir
            .strip_prefix(&self.context.repo)
            .unwrap_or(dir)
            .join("plan");
        WebPlanState {
            dir: dir.to_path_buf(),
            error: None,
            prompt: in_run::prompt_section(
                plan,
                &planned.graph,
                &named,
                &shown_dir.display().to_string(),
            ),
            cases: in_run::cases(plan, &named),
        }
    }

    /// Adds the report's table of which plan cases have a test (the tests the QA checks ran).
    pub(super) fn report_web_plan(&self, outcome: &mut QaOutcome) {
        let Some(state) = &self.record.web_plan else {
            return;
        };
        let markdown = if let Some(error) = &state.error {
            format!("No web test plan for this run: {error}\n")
        } else {
            let tests: Vec<String> = outcome
                .checks
                .iter()
                .flat_map(|check| {
                    check
                        .metrics
                        .test_cases()
                        .iter()
                        .map(|(name, _)| name.to_owned())
                })
                .collect();
            format!(
                "The cases prpd planned from the running app (`{}`), and the tests of this run that name them.\n\n{}",
                state.dir.join("plan/specs").display(),
                in_run::coverage_markdown(&state.cases, &tests)
            )
        };
        outcome.sections.push(ReportSection {
            title: "Web Test Plan".to_owned(),
            markdown,
        });
    }
}

fn failed(dir: &std::path::Path, error: String) -> WebPlanState {
    WebPlanState {
        dir: dir.to_path_buf(),
        prompt: format!(
            "## The web app's test plan\n\nprpd has no plan of the running app for this run: {error}\n"
        ),
        error: Some(error),
        cases: Vec::new(),
    }
}
