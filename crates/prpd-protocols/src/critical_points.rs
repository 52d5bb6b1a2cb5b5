//! Critical points (seed `000_…`, the `qa_plan` / `verify_plan` protocol): whoever is about to
//! do a piece of work declares up front what success looks like, as a list of points each with
//! a hint that will literally appear in the evidence; later the evidence is judged point by
//! point. Declaring the criteria before the work is what keeps the verdict honest: the judge
//! compares evidence with what was promised, not with what the worker says it did.
//!
//! [`plan`] reads a request into a [`Plan`] (the seed's error shapes), [`evidence`] reads
//! evidence rows, [`reading`] finds a hint in a row as a whole name and says whether the row
//! supports it, says it failed or says it did not run, [`verdict`] judges a plan against them, [`store`] keeps plans for
//! 30 minutes (at most 50, least recently used evicted first) and on disk when persistence is
//! on, and [`from_prp`] turns a PRP's success criteria into a run's points. All of it is pure
//! except the store's best-effort disk copies.

pub mod evidence;
pub mod from_prp;
pub mod in_run;
pub mod plan;
pub mod reading;
pub mod store;
pub mod table;
pub mod verdict;

pub use evidence::Evidence;
pub use plan::{CriticalPoint, Kind, Plan, PlanError};
pub use store::{PlanStore, StoreSettings};
pub use verdict::{PlanVerdict, PointVerdict};
