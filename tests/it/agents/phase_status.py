"""What every Python scripted agent of the integration tests ends its answer with: the
`PRP_PHASE_STATUS` block of the phase prpd gave it (`PRPD_PHASE`, `PRPD_ITERATION`), and how it
reads prpd's QA report. Imported by the agents beside it (python-agent.py, id-agent.py,
stack-agent.py), whose folder is first on `sys.path` when python3 runs them."""

import os

PHASE = os.environ.get("PRPD_PHASE", "")
ITERATION = os.environ.get("PRPD_ITERATION", "0")


def block(done, recommendation):
    """The status block: COMPLETE with EXIT_SIGNAL when `done`; QA also gives its verdict."""
    lines = [
        "---PRP_PHASE_STATUS---",
        f"PHASE: {PHASE}",
        f"STATUS: {'COMPLETE' if done else 'IN_PROGRESS'}",
        f"ITERATION: {ITERATION}",
    ]
    if PHASE == "QA":
        lines.append(f"VERDICT: {'APPROVE' if done else 'REJECT'}")
    lines += [
        f"EXIT_SIGNAL: {'true' if done else 'false'}",
        f"RECOMMENDATION: {recommendation}",
        "---END_PRP_PHASE_STATUS---",
    ]
    return "\n".join(lines) + "\n"


def report_approves():
    """Whether the QA report prpd wrote (`PRPD_QA_REPORT`) approves."""
    with open(os.environ["PRPD_QA_REPORT"], encoding="utf-8") as handle:
        report = handle.read()
    verdict = next((line for line in report.splitlines() if line.startswith("## Verdict")), "")
    return "REJECTED" not in verdict
