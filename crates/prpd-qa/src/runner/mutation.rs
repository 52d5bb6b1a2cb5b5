//! C7 inside the runner: the mutation check's outcome (see [`crate::mutation`]) turned into a
//! finding like any other check's, its validation evaluated on the figures it measured.

use super::{CheckResult, CheckSpec, Finding, QaRequest, evaluation_finding, process_spec_timeout};
use crate::mutation::MutationOutcome;
use prpd_base::process;

/// Runs the mutation tools on the change under review (see [`crate::mutation`]).
pub(super) async fn run_mutation(
    request: &QaRequest,
    spec: &CheckSpec,
    result: &mut CheckResult,
) -> Result<Finding, process::ProcessError> {
    let started = std::time::Instant::now();
    let mutation_request = crate::mutation::MutationRequest {
        repo: &request.repo,
        base: request.base_docs.as_ref(),
        id: &spec.id,
        logs: &request.run_dir.join("checks"),
        timeout: process_spec_timeout(spec, request),
        grace: request.grace,
    };
    let (outcome, ran) = crate::mutation::run(&mutation_request).await?;
    result.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    if !ran.commands.is_empty() {
        result.command = Some(ran.commands.join("; "));
    }
    result.log = ran.log;
    result.output_tail = ran.tail;
    result.exit_code = ran.exit_code;
    Ok(match outcome {
        MutationOutcome::Measured { metrics, detail } => {
            result.metrics = metrics;
            match evaluation_finding(spec, &result.metrics) {
                Finding::Pass(_) => Finding::Pass(detail),
                Finding::Fail(reason) => Finding::Fail(format!("{reason}: {detail}")),
                other @ (Finding::Inapplicable(_) | Finding::NothingToJudge(_)) => other,
            }
        }
        MutationOutcome::NoChange(reason) => Finding::NothingToJudge(reason),
        MutationOutcome::ToolMissing(reason) => Finding::Inapplicable(reason),
        MutationOutcome::Failed(reason) => Finding::Fail(reason),
    })
}
