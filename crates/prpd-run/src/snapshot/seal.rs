//! The seal on the run record: every time prpd writes a run's record
//! (`.prp-session/runs/<id>/state.json`) it first stores the new content's blob id on the run's
//! private ref `refs/prpd/<run>/record` (and the one before it on `…/record-previous`). Every
//! command that reads a record (`status`, `resume`, `diff`, the daemon) trusts only a record
//! prpd wrote: an agent that edited the file (to skip QA, or to make a run look SHIPPED) and
//! killed prpd is refused, by name.
//!
//! Sealing before the write means a kill between the two leaves the previous content in the
//! file, which the previous seal still vouches for. A record of the current version is always
//! sealed while its run is unfinished, so a missing seal is refused like a wrong one: an agent
//! that deletes the refs along with editing the file gains nothing. When a run ends, the final
//! record, once written, is left sealed alone ([`Snapshots::drop_previous_seal`]), so the
//! unfinished record before it cannot be put back and resumed, and the seal outlives the run's
//! snapshot refs. The seal is tamper evidence
//! against an agent editing files, not a lock: a process of the same user that rewrites prpd's
//! private refs to match an edited record is not stopped, which ARCHITECTURE.md says.

use git2::{ObjectType, Oid};

use super::{REF_PREFIX, SnapshotError, Snapshots};

impl Snapshots {
    pub(super) fn seal_ref(&self, name: &str) -> String {
        format!("{REF_PREFIX}/{}/{name}", self.run_id)
    }

    /// Seals `content` as the record prpd is about to write.
    pub fn seal_record(&self, content: &[u8]) -> Result<(), SnapshotError> {
        let id = self.git("store the record's seal", self.repo.blob(content))?;
        let current = self.repo.refname_to_id(&self.seal_ref("record")).ok();
        if current == Some(id) {
            return Ok(());
        }
        let message = format!("prpd {}: record", self.run_id);
        if let Some(current) = current {
            self.git(
                "keep the previous record's seal",
                self.repo
                    .reference(&self.seal_ref("record-previous"), current, true, &message),
            )?;
        }
        self.git(
            "write the record's seal",
            self.repo
                .reference(&self.seal_ref("record"), id, true, &message),
        )?;
        Ok(())
    }

    /// Stops vouching for the record before the last one, once the last record of a run that
    /// has ended (SHIPPED or ABORTED) is written: an unfinished record put back is refused.
    /// Called after the write, so a kill before it leaves the previous record sealed.
    pub fn drop_previous_seal(&self) -> Result<(), SnapshotError> {
        if let Ok(mut previous) = self.repo.find_reference(&self.seal_ref("record-previous")) {
            self.git("drop the previous record's seal", previous.delete())?;
        }
        Ok(())
    }

    /// Whether `content` is a record prpd wrote: the sealed one or the one before it. `None`
    /// when the run has no seal (its refs are gone), which for a record of this version means
    /// one prpd cannot vouch for.
    pub fn is_sealed_record(&self, content: &[u8]) -> Result<Option<bool>, SnapshotError> {
        let id = self.git(
            "hash the record",
            Oid::hash_object(ObjectType::Blob, content),
        )?;
        let sealed: Vec<Oid> = ["record", "record-previous"]
            .iter()
            .filter_map(|name| self.repo.refname_to_id(&self.seal_ref(name)).ok())
            .collect();
        Ok((!sealed.is_empty()).then(|| sealed.contains(&id)))
    }
}

#[cfg(test)]
mod tests {
    use crate::snapshot::tests::{repo_with, snapshots};

    #[test]
    fn only_the_last_two_records_prpd_wrote_are_sealed() {
        let repo = repo_with(&[("a.txt", "a\n")]);
        let snapshots = snapshots(repo.path());
        assert_eq!(snapshots.is_sealed_record(b"{}").expect("check"), None);
        snapshots.seal_record(b"{\"n\":1}").expect("seal");
        snapshots.seal_record(b"{\"n\":2}").expect("seal");
        snapshots
            .seal_record(b"{\"n\":2}")
            .expect("the same content again");
        assert_eq!(
            snapshots.is_sealed_record(b"{\"n\":2}").expect("check"),
            Some(true)
        );
        assert_eq!(
            snapshots.is_sealed_record(b"{\"n\":1}").expect("check"),
            Some(true),
            "a kill between the seal and the write leaves the previous record"
        );
        snapshots.seal_record(b"{\"n\":3}").expect("seal");
        assert_eq!(
            snapshots.is_sealed_record(b"{\"n\":1}").expect("check"),
            Some(false)
        );
        assert_eq!(
            snapshots
                .is_sealed_record(b"{\"n\":3,\"edited\":true}")
                .expect("check"),
            Some(false)
        );
        snapshots.seal_record(b"{\"n\":4}").expect("seal");
        snapshots.drop_previous_seal().expect("the final one alone");
        assert_eq!(
            snapshots.is_sealed_record(b"{\"n\":4}").expect("check"),
            Some(true)
        );
        assert_eq!(
            snapshots.is_sealed_record(b"{\"n\":3}").expect("check"),
            Some(false),
            "the unfinished record before the final one is not vouched for"
        );
        assert_eq!(snapshots.remove_snapshot_refs().expect("remove"), 0);
        assert_eq!(
            snapshots.is_sealed_record(b"{\"n\":4}").expect("check"),
            Some(true),
            "the seal outlives the snapshot refs"
        );
    }
}
