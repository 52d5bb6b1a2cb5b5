//! Where plans wait for their verification: in memory for 30 minutes, at most 50 of them (the
//! least recently used goes first), and — when `QA_PROJECT_ROOT` is set or `QA_PLAN_PERSIST`
//! is true — also on disk at `<root>/test-results/plans/<plan_id>.json`, written atomically, so
//! a plan outlives a restart of `prpd mcp` or an eviction. A miss in memory reads the disk;
//! a plan past its expiry is refused from disk as from memory. Disk trouble is logged and
//! never fails the caller: persistence is best effort.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use super::evidence::{self, BadEvidence};
use super::plan::{self, Plan, PlanError};
use super::verdict::{self, PlanVerdict};
use prpd_base::files::write_atomically;

/// How long a plan lives.
pub const TTL: Duration = Duration::from_secs(30 * 60);
/// How many plans are kept in memory.
pub const CAPACITY: usize = 50;

/// How a store keeps plans.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreSettings {
    pub ttl: Duration,
    pub capacity: usize,
    /// The folder plans are also written to; `None`: memory only.
    pub persist_dir: Option<PathBuf>,
}

impl StoreSettings {
    /// The seed's settings, persistence from the environment: `QA_PROJECT_ROOT` names the root;
    /// `QA_PLAN_PERSIST=true` persists under `default_root` when no root is named.
    pub fn from_env(default_root: &Path) -> StoreSettings {
        let root = std::env::var_os("QA_PROJECT_ROOT")
            .filter(|root| !root.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var("QA_PLAN_PERSIST")
                    .is_ok_and(|value| {
                        matches!(
                            value.trim().to_ascii_lowercase().as_str(),
                            "1" | "true" | "yes"
                        )
                    })
                    .then(|| default_root.to_path_buf())
            });
        StoreSettings {
            ttl: TTL,
            capacity: CAPACITY,
            persist_dir: root.map(|root| plans_dir(&root)),
        }
    }
}

/// `<root>/test-results/plans`.
pub fn plans_dir(root: &Path) -> PathBuf {
    root.join("test-results").join("plans")
}

/// A `verify_plan` that cannot judge.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    #[error("bad_plan_id: {0}")]
    BadPlanId(String),
    #[error("unknown_plan: {0}")]
    UnknownPlan(String),
    #[error("plan_expired: {0}")]
    PlanExpired(String),
    #[error(transparent)]
    BadEvidence(#[from] BadEvidence),
}

impl VerifyError {
    pub fn code(&self) -> &'static str {
        match self {
            VerifyError::BadPlanId(_) => "bad_plan_id",
            VerifyError::UnknownPlan(_) => "unknown_plan",
            VerifyError::PlanExpired(_) => "plan_expired",
            VerifyError::BadEvidence(_) => "bad_evidence",
        }
    }

    /// The error as a tool answers it: `{"error": code, "message": …}`.
    pub fn to_json(&self) -> Value {
        let message = match self {
            VerifyError::BadPlanId(message)
            | VerifyError::UnknownPlan(message)
            | VerifyError::PlanExpired(message)
            | VerifyError::BadEvidence(BadEvidence(message)) => message,
        };
        serde_json::json!({ "error": self.code(), "message": message })
    }
}

/// The plans of one process.
#[derive(Debug)]
pub struct PlanStore {
    settings: StoreSettings,
    plans: HashMap<String, Kept>,
    /// Increases with every use; the smallest `last_used` is evicted first.
    clock: u64,
}

#[derive(Debug)]
struct Kept {
    plan: Plan,
    last_used: u64,
}

impl PlanStore {
    pub fn new(settings: StoreSettings) -> PlanStore {
        PlanStore {
            settings,
            plans: HashMap::new(),
            clock: 0,
        }
    }

    /// `qa_plan`: reads `request`, keeps the plan, and writes it to disk when persistence is on.
    pub fn create(&mut self, request: &Value, now: SystemTime) -> Result<Plan, PlanError> {
        let plan_id = self.fresh_id(now);
        let mut plan = plan::create(request, plan_id, now, self.settings.ttl)?;
        if let Some(dir) = &self.settings.persist_dir {
            plan.persisted_to = persist(dir, &plan);
        }
        self.keep(plan.clone(), now);
        Ok(plan)
    }

    /// `verify_plan`: judges the evidence against the plan `plan_id`.
    pub fn verify(
        &mut self,
        plan_id: &str,
        evidence: Option<&Value>,
        now: SystemTime,
    ) -> Result<PlanVerdict, VerifyError> {
        let plan_id = plan_id.trim().to_ascii_lowercase();
        if plan_id.len() != 12 || !plan_id.bytes().all(|byte| byte.is_ascii_hexdigit()) {
            return Err(VerifyError::BadPlanId(format!(
                "plan_id must be the 12 hex digits qa_plan returned, got \"{plan_id}\""
            )));
        }
        let plan = self.find(&plan_id, now)?;
        let rows = evidence::read(evidence)?;
        Ok(verdict::judge(&plan, &rows))
    }

    fn find(&mut self, plan_id: &str, now: SystemTime) -> Result<Plan, VerifyError> {
        self.clock += 1;
        let plan = if let Some(kept) = self.plans.get_mut(plan_id) {
            kept.last_used = self.clock;
            kept.plan.clone()
        } else {
            let plan = self.read_from_disk(plan_id).ok_or_else(|| {
                VerifyError::UnknownPlan(format!(
                    "no plan {plan_id}: it was never created here, or it was evicted{}",
                    if self.settings.persist_dir.is_some() {
                        " and is not on disk"
                    } else {
                        " (set QA_PROJECT_ROOT to keep plans on disk)"
                    }
                ))
            })?;
            if !plan.expired(now) {
                self.keep(plan.clone(), now);
            }
            plan
        };
        if plan.expired(now) {
            self.plans.remove(plan_id);
            return Err(VerifyError::PlanExpired(format!(
                "plan {plan_id} expired at {}; declare the points again with qa_plan",
                plan.expires_at
            )));
        }
        Ok(plan)
    }

    fn read_from_disk(&self, plan_id: &str) -> Option<Plan> {
        let path = self
            .settings
            .persist_dir
            .as_ref()?
            .join(format!("{plan_id}.json"));
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return None,
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "could not read a stored plan");
                return None;
            }
        };
        match serde_json::from_str::<Plan>(&text) {
            Ok(plan) if plan.plan_id == plan_id => Some(plan),
            Ok(_) => {
                tracing::warn!(path = %path.display(), "a stored plan names another plan id");
                None
            }
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "a stored plan is not valid JSON");
                None
            }
        }
    }

    fn keep(&mut self, plan: Plan, now: SystemTime) {
        self.plans.retain(|_, kept| !kept.plan.expired(now));
        while self.plans.len() >= self.settings.capacity {
            let Some(oldest) = self
                .plans
                .iter()
                .min_by_key(|(_, kept)| kept.last_used)
                .map(|(id, _)| id.clone())
            else {
                break;
            };
            self.plans.remove(&oldest);
        }
        self.clock += 1;
        self.plans.insert(
            plan.plan_id.clone(),
            Kept {
                plan,
                last_used: self.clock,
            },
        );
    }

    /// A new 12-hex-digit id: 48 bits of a randomly keyed hash of the time and a counter.
    fn fresh_id(&mut self, now: SystemTime) -> String {
        loop {
            self.clock += 1;
            let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
            now.hash(&mut hasher);
            self.clock.hash(&mut hasher);
            std::process::id().hash(&mut hasher);
            let id = format!("{:012x}", hasher.finish() & 0xffff_ffff_ffff);
            if !self.plans.contains_key(&id) {
                return id;
            }
        }
    }
}

/// Writes `plan` to `<dir>/<plan_id>.json`; the path written, or `None` (logged) on failure.
fn persist(dir: &Path, plan: &Plan) -> Option<String> {
    let path = dir.join(format!("{}.json", plan.plan_id));
    let mut stored = plan.clone();
    stored.persisted_to = Some(path.display().to_string());
    let written = std::fs::create_dir_all(dir).and_then(|()| {
        let mut text = serde_json::to_vec_pretty(&stored).map_err(std::io::Error::other)?;
        text.push(b'\n');
        write_atomically(&path, &text)
    });
    match written {
        Ok(()) => stored.persisted_to,
        Err(error) => {
            tracing::warn!(path = %path.display(), %error, "could not persist a plan; it lives in memory only");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn at(seconds: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000 + seconds)
    }

    fn settings(persist_dir: Option<PathBuf>) -> StoreSettings {
        StoreSettings {
            ttl: TTL,
            capacity: CAPACITY,
            persist_dir,
        }
    }

    fn request(task: &str) -> Value {
        json!({"task": task, "critical_points": [{"description": "login passes", "verification_hint": "test_login"}]})
    }

    fn passing() -> Value {
        json!(["test_login ... ok"])
    }

    #[test]
    fn a_plan_is_verified_until_it_expires() {
        let mut store = PlanStore::new(settings(None));
        let plan = store.create(&request("t"), at(0)).expect("created");
        assert_eq!(plan.plan_id.len(), 12);
        assert!(plan.plan_id.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(plan.persisted_to, None);
        let verdict = store
            .verify(&plan.plan_id, Some(&passing()), at(1_799))
            .expect("judged");
        assert_eq!(verdict.task, "t");
        assert_eq!(verdict.passed, 1);
        let expired = store
            .verify(&plan.plan_id, Some(&passing()), at(1_800))
            .expect_err("expired");
        assert_eq!(expired.code(), "plan_expired");
        let gone = store
            .verify(&plan.plan_id, Some(&passing()), at(1_801))
            .expect_err("gone");
        assert_eq!(gone.code(), "unknown_plan");
    }

    #[test]
    fn bad_ids_and_evidence_are_refused() {
        let mut store = PlanStore::new(settings(None));
        let plan = store.create(&request("t"), at(0)).expect("created");
        let cases = [
            ("../../etc/x", Some(passing()), "bad_plan_id"),
            ("abc", Some(passing()), "bad_plan_id"),
            ("000000000000", Some(passing()), "unknown_plan"),
            (plan.plan_id.as_str(), None, "bad_evidence"),
            (plan.plan_id.as_str(), Some(json!(5)), "bad_evidence"),
        ];
        for (id, evidence, code) in cases {
            let error = store
                .verify(id, evidence.as_ref(), at(1))
                .expect_err("refused");
            assert_eq!(error.code(), code, "{id}");
            assert_eq!(error.to_json()["error"], code);
        }
        let refused = store
            .create(&json!({"task": "t"}), at(0))
            .expect_err("no points");
        assert_eq!(refused.code(), "no_critical_points");
    }

    #[test]
    fn the_least_recently_used_plan_is_evicted_at_capacity() {
        let mut store = PlanStore::new(StoreSettings {
            capacity: 3,
            ..settings(None)
        });
        let ids: Vec<String> = (0..3)
            .map(|n| {
                store
                    .create(&request(&format!("t{n}")), at(n))
                    .expect("created")
                    .plan_id
            })
            .collect();
        // The first is used again, so the second is now the least recently used.
        store
            .verify(&ids[0], Some(&passing()), at(10))
            .expect("judged");
        let fourth = store
            .create(&request("t3"), at(11))
            .expect("created")
            .plan_id;
        assert_eq!(
            store
                .verify(&ids[1], Some(&passing()), at(12))
                .expect_err("evicted")
                .code(),
            "unknown_plan"
        );
        for id in [&ids[0], &ids[2], &fourth] {
            store.verify(id, Some(&passing()), at(12)).expect("kept");
        }
    }

    #[test]
    fn fifty_plans_are_kept_and_the_fifty_first_evicts_the_oldest() {
        let mut store = PlanStore::new(settings(None));
        let ids: Vec<String> = (0..51)
            .map(|n| store.create(&request("t"), at(n)).expect("created").plan_id)
            .collect();
        assert_eq!(
            store
                .verify(&ids[0], Some(&passing()), at(60))
                .expect_err("evicted")
                .code(),
            "unknown_plan"
        );
        store
            .verify(&ids[1], Some(&passing()), at(60))
            .expect("kept");
        store
            .verify(&ids[50], Some(&passing()), at(60))
            .expect("kept");
    }

    #[test]
    fn persisted_plans_survive_a_new_store_but_not_their_expiry() {
        let root = tempfile::tempdir().expect("tempdir");
        let dir = plans_dir(root.path());
        let plan = PlanStore::new(settings(Some(dir.clone())))
            .create(&request("t"), at(0))
            .expect("created");
        let path = dir.join(format!("{}.json", plan.plan_id));
        assert_eq!(
            plan.persisted_to.as_deref(),
            Some(path.to_str().expect("utf-8"))
        );
        let on_disk: Plan = serde_json::from_str(&std::fs::read_to_string(&path).expect("written"))
            .expect("a plan");
        assert_eq!(on_disk, plan);
        // A new process: the plan comes back from disk.
        let mut restarted = PlanStore::new(settings(Some(dir.clone())));
        let verdict = restarted
            .verify(&plan.plan_id, Some(&passing()), at(60))
            .expect("from disk");
        assert_eq!(verdict.passed, 1);
        // Expiry is honoured on disk reads.
        let mut later = PlanStore::new(settings(Some(dir.clone())));
        assert_eq!(
            later
                .verify(&plan.plan_id, Some(&passing()), at(1_800))
                .expect_err("expired")
                .code(),
            "plan_expired"
        );
        // A damaged file is a miss, not a failure of the caller.
        std::fs::write(&path, "{not json").expect("damage it");
        let mut damaged = PlanStore::new(settings(Some(dir)));
        assert_eq!(
            damaged
                .verify(&plan.plan_id, Some(&passing()), at(60))
                .expect_err("miss")
                .code(),
            "unknown_plan"
        );
    }

    #[test]
    fn an_unwritable_folder_never_fails_the_caller() {
        let root = tempfile::tempdir().expect("tempdir");
        let blocker = root.path().join("test-results");
        std::fs::write(&blocker, "a file where the folder should be").expect("write");
        let mut store = PlanStore::new(settings(Some(plans_dir(root.path()))));
        let plan = store
            .create(&request("t"), at(0))
            .expect("created all the same");
        assert_eq!(plan.persisted_to, None);
        store
            .verify(&plan.plan_id, Some(&passing()), at(1))
            .expect("kept in memory");
    }
}
