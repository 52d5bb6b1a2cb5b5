//! The verification protocols prpd's users already speak with their agents (the seeds of
//! `../shared/DESIGN.md` §10), spoken natively: critical points declared up front and judged
//! against evidence (`qa_plan` / `verify_plan`), `[VERIFY]` tasks prpd runs itself, and the
//! `TestPlan` a RED agent may answer with.
//!
//! Uses `prpd-base`, `prpd-prp`, `prpd-qa` and `prpd-ship` (a `[VERIFY] CI pipeline passes` task
//! reads the remote checks); used by `prpd-web` and `prpd-run` (the loop turns a PRP's success
//! criteria into critical points, runs its `[VERIFY]` tasks at QA and reads RED's test plan). It
//! knows nothing of the run record.

pub mod critical_points;
pub mod test_plan;
pub mod verify_tasks;
