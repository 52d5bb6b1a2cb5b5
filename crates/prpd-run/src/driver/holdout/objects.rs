//! Taking the held-out tests out of git, in an order a kill cannot break: what the rewrite will
//! drop is computed and saved in the record first (ids only); then the snapshots are written
//! again (`snapshot/rewrite.rs`; done again after a kill, it ends the same) and the record
//! follows them and is saved; only then are the dropped objects removed, and the list cleared.
//!
//! An object is removed only when nothing prpd can see still needs it: the run's base and its
//! cut tree, the snapshots prpd's freeze names, `HEAD`, every branch, every other run's
//! snapshots and the repository's index keep theirs (at the held files' paths, where the
//! originals are). What stays for that reason is said in the record.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::snapshot::Snapshots;

use super::super::{DriveError, Driver};

impl Driver {
    /// The snapshots from `from` to the last one no longer hold the originals of the held
    /// files, whose paths and blobs as GREEN sees them are `replace`.
    pub(super) fn hide_from_git(
        &mut self,
        from: u32,
        replace: &std::collections::BTreeMap<PathBuf, Option<String>>,
    ) -> Result<(), DriveError> {
        let snapshots = self.snapshots()?;
        let count = self.record.snapshots.count;
        let first = from.max(1);
        let paths: Vec<PathBuf> = replace.keys().cloned().collect();
        let plan = snapshots.plan_rewrite(first, count, replace)?;
        let holdout = &mut self.record.holdout;
        holdout.to_remove.extend(plan.dropped_blobs);
        holdout.to_remove.extend(plan.dropped_objects);
        holdout
            .to_remove
            .extend(snapshots.named_ref_objects("without-feature", &paths)?);
        self.save()?;
        snapshots.rewrite(first, count, replace)?;
        // The trees the rewrite drops are gone from git soon: nothing listed from them is kept.
        self.listed = None;
        snapshots.remove_named_ref("without-feature")?;
        if let Some(last) = snapshots.at(count) {
            self.record.snapshots.last = Some(last);
        }
        Ok(())
    }

    /// Removes the objects [`Driver::hide_from_git`] recorded, but those something still needs.
    pub(super) fn remove_original_objects(&mut self) -> Result<(), DriveError> {
        let dropped = std::mem::take(&mut self.record.holdout.to_remove);
        if dropped.is_empty() {
            return Ok(());
        }
        if self.agent_committed() {
            self.record.holdout.objects_note = Some(
                "an agent committed in the run's tree, so its commits may hold the held-out tests; prpd left git's objects alone"
                    .to_owned(),
            );
            return Ok(());
        }
        let paths: Vec<PathBuf> = self
            .record
            .holdout
            .files
            .iter()
            .map(|file| file.path.clone())
            .collect();
        let snapshots = self.snapshots()?;
        let mut kept = self.needed_objects(&snapshots, &paths)?;
        let in_index = index_blobs(&self.context.repo, &paths);
        let staged = in_index.iter().any(|id| dropped.contains(id));
        kept.extend(in_index);
        let (removed, packed) =
            snapshots.remove_loose_objects(dropped.iter().filter(|id| !kept.contains(*id)));
        self.record.holdout.objects_removed += removed;
        let mut notes = Vec::new();
        if packed > 0 {
            notes.push(format!(
                "git had already packed {packed} object(s) holding held-out tests; an agent that reads git's packs can find them"
            ));
        }
        if staged {
            notes.push(
                "git's index holds a held-out test's original (an agent ran `git add`); prpd left it there"
                    .to_owned(),
            );
        }
        if !notes.is_empty() {
            self.record.holdout.objects_note = Some(notes.join("; "));
        }
        Ok(())
    }

    /// Whether `HEAD` moved off the commit the run started from: an agent's commits hold
    /// versions of the held files that nothing else names, and would break without them.
    fn agent_committed(&self) -> bool {
        let Some(base) = &self.record.snapshots.base else {
            return false;
        };
        let repo = git2::Repository::open(&self.context.repo).ok();
        let head = repo
            .as_ref()
            .and_then(|repo| repo.head().ok()?.peel_to_commit().ok())
            .map(|commit| commit.id());
        let start = repo.as_ref().and_then(|repo| {
            let base = repo
                .find_commit(git2::Oid::from_str(&base.commit).ok()?)
                .ok()?;
            base.parent_id(0).ok()
        });
        head != start
    }

    /// What must stay, at the held files' `paths`: the objects of the run's base and last
    /// snapshots, of the snapshots the freeze names, of `HEAD`, every branch and every other
    /// run's snapshots.
    fn needed_objects(
        &self,
        snapshots: &Snapshots,
        paths: &[PathBuf],
    ) -> Result<BTreeSet<String>, DriveError> {
        let mut commits: Vec<String> = self
            .record
            .snapshots
            .base
            .iter()
            .chain(&self.record.snapshots.last)
            .chain(self.record.freeze.frozen_at.values())
            .map(|snapshot| snapshot.commit.clone())
            .collect();
        commits.extend(snapshots.commits_outside_this_run()?);
        let mut kept = BTreeSet::new();
        for commit in commits {
            kept.append(&mut snapshots.objects_at(&commit, paths)?);
        }
        Ok(kept)
    }
}

/// The blob ids the repository's index (at `tree`) holds at `paths`.
fn index_blobs(tree: &Path, paths: &[PathBuf]) -> BTreeSet<String> {
    let Ok(index) = git2::Repository::open(tree).and_then(|repo| repo.index()) else {
        return BTreeSet::new();
    };
    paths
        .iter()
        .filter_map(|path| index.get_path(path, 0))
        .map(|entry| entry.id.to_string())
        .collect()
}
