//! Which run a person's request to the daemon means (`prpd resume`, `prpd abort` through its
//! socket): the one they named if it is unfinished, else the only unfinished one; otherwise a
//! sentence that says why not, sent back as the reply.

use std::path::Path;

use prpd_run::session::{self, Listed};

/// The unfinished run `run` names, or the only unfinished run; else why not, for the
/// person who asked to `action` it.
pub(crate) fn asked_run(repo: &Path, run: Option<&str>, action: &str) -> Result<String, String> {
    let runs =
        session::status(repo).map_err(|error| format!("{:#}", anyhow::Error::from(error)))?;
    let unfinished: Vec<&Listed> = runs
        .iter()
        .filter(|listed| {
            listed
                .record
                .as_ref()
                .map_or(true, |record| !record.is_finished())
        })
        .collect();
    match run {
        Some(asked) => {
            let listed = runs
                .iter()
                .find(|listed| listed.run_id == asked)
                .ok_or_else(|| format!("there is no run {asked} (`prpd status` lists them)"))?;
            if unfinished.iter().any(|open| open.run_id == asked) {
                Ok(listed.run_id.clone())
            } else {
                Err(format!(
                    "run {asked} has ended: there is nothing to {action}"
                ))
            }
        }
        None => match unfinished.as_slice() {
            [] => Err(format!("there is no run to {action}")),
            [only] => Ok(only.run_id.clone()),
            several => Err(format!(
                "{} runs could be meant: {}; name one, as in `prpd {action} {}`",
                several.len(),
                several
                    .iter()
                    .map(|listed| listed.run_id.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                several[0].run_id
            )),
        },
    }
}
