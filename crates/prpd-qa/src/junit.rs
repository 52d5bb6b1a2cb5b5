//! The JUnit XML reports a test run writes, found through `[qa] junit = "<glob>"` and read in
//! place of its console output, both by the QA check that runs the test command and by prpd's
//! own test runs in the loop. A project whose runner prints nothing prpd recognises, or whose
//! console names no tests, still gets exact figures and names this way.
//!
//! Theory of operation: a report counts only when **this run wrote it**. A report left by an
//! earlier run (yesterday's `junit.xml`, a passing report from before the tests broke) would
//! otherwise stand for a run that proved nothing. Before the command starts, [`Watch::start`]
//! notes every file the glob matches with its stamp (size, modification and change times,
//! inode, a hash of its content); after the command ends, [`Watch::finish`] takes only the
//! matching files that are new or whose stamp changed, and whose modification time is not
//! before the start (a copy that kept an old time does not count). A glob that then matches nothing, or a file that is not a
//! JUnit report, fails the measurement and names the glob or the file; it never passes.
//!
//! The reports read are copied beside the command's log (`<log>.junit/`): they are the evidence
//! behind the figures, and what [`read_kept`] reads when a later measurement of the same tree
//! reuses that run instead of running the command again.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use globset::{GlobBuilder, GlobMatcher};

use crate::metrics::{JunitError, JunitTests, Metrics};

/// How far before the start a new report's modification time may lie: file systems stamp
/// files with a coarse clock (a tick behind the one prpd reads, whole seconds on some).
const CLOCK_SLACK: Duration = Duration::from_secs(2);

/// Reports larger than this are refused rather than read into memory.
const MAX_REPORT_BYTES: u64 = 64 * 1024 * 1024;

/// Folders never searched below the glob's fixed part: they hold no report of this run.
const NOT_SEARCHED: [&str; 3] = [".git", "node_modules", ".prp-session"];

/// Why a run's figures could not be taken from its JUnit report.
#[derive(Debug, thiserror::Error)]
pub enum ReportProblem {
    #[error(
        "no JUnit report written by this run: `[qa] junit = \"{pattern}\"` matched no file the test command wrote{}",
        ignored_note(*ignored)
    )]
    NotWritten { pattern: String, ignored: usize },
    #[error("`[qa] junit = \"{pattern}\"` is not a glob prpd can use: {message}")]
    Pattern { pattern: String, message: String },
    #[error("the JUnit report {} could not be read", path.display())]
    Unreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the JUnit report {} is {bytes} bytes, more than prpd reads ({MAX_REPORT_BYTES})", path.display())]
    TooLarge { path: PathBuf, bytes: u64 },
    #[error("the JUnit report {} written by this run is malformed: {source}", path.display())]
    Malformed {
        path: PathBuf,
        #[source]
        source: JunitError,
    },
    #[error("failed to keep a copy of the JUnit report in {}", path.display())]
    Keep {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

fn ignored_note(ignored: usize) -> String {
    if ignored == 0 {
        String::new()
    } else {
        format!(
            " ({ignored} older file(s) it matches were left by an earlier run and are not read)"
        )
    }
}

/// The figures of a run, read from its reports.
#[derive(Debug)]
pub struct Reports {
    /// The test figures and names (the rest of a check's figures come from its console).
    pub metrics: Metrics,
    /// One line for a report: where the figures came from.
    pub note: String,
}

/// What a matching file looked like; any change means something wrote it. The content's hash
/// is there for a rewrite within one tick of the file system's clock, which leaves the times
/// as they were (a report holds its run's time, so its content changes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    bytes: u64,
    modified: (i64, i64),
    changed: (i64, i64),
    inode: u64,
    content: Option<u64>,
}

impl Stamp {
    fn of(path: &Path, metadata: &std::fs::Metadata) -> Stamp {
        let content = (metadata.len() <= MAX_REPORT_BYTES)
            .then(|| std::fs::read(path).ok())
            .flatten()
            .map(|bytes| {
                let mut hasher = std::hash::DefaultHasher::new();
                std::hash::Hash::hash(&bytes, &mut hasher);
                std::hash::Hasher::finish(&hasher)
            });
        Stamp {
            bytes: metadata.len(),
            modified: (metadata.mtime(), metadata.mtime_nsec()),
            changed: (metadata.ctime(), metadata.ctime_nsec()),
            inode: metadata.ino(),
            content,
        }
    }
}

/// The glob's matches before a run, to tell afterwards which files the run wrote.
#[derive(Debug)]
pub struct Watch {
    repo: PathBuf,
    pattern: String,
    matcher: Result<GlobMatcher, String>,
    before: BTreeMap<PathBuf, Stamp>,
    started: SystemTime,
}

impl Watch {
    /// Notes what `pattern` (relative to `repo`) matches now, just before the test command
    /// starts.
    pub fn start(repo: &Path, pattern: &str) -> Watch {
        let matcher = GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map(|glob| glob.compile_matcher())
            .map_err(|error| error.kind().to_string());
        let before = matcher
            .as_ref()
            .map(|matcher| matching(repo, pattern, matcher))
            .unwrap_or_default();
        Watch {
            repo: repo.to_path_buf(),
            pattern: pattern.to_owned(),
            matcher,
            before,
            started: SystemTime::now(),
        }
    }

    /// After the command ended (its full output in `log`): reads the reports it wrote and
    /// keeps a copy of each in `<log>.junit/`.
    pub fn finish(self, log: &Path) -> Result<Reports, ReportProblem> {
        let matcher = self.matcher.map_err(|message| ReportProblem::Pattern {
            pattern: self.pattern.clone(),
            message,
        })?;
        let kept = kept_folder(log);
        remove_folder(&kept)?;
        let after = matching(&self.repo, &self.pattern, &matcher);
        let earliest = self
            .started
            .checked_sub(CLOCK_SLACK)
            .unwrap_or(self.started);
        let (written, ignored): (Vec<_>, Vec<_>) = after.iter().partition(|(path, stamp)| {
            self.before.get(*path) != Some(*stamp)
                && std::fs::symlink_metadata(self.repo.join(path))
                    .and_then(|metadata| metadata.modified())
                    .is_ok_and(|modified| modified >= earliest)
        });
        if written.is_empty() {
            return Err(ReportProblem::NotWritten {
                pattern: self.pattern,
                ignored: ignored.len(),
            });
        }
        std::fs::create_dir_all(&kept).map_err(|source| ReportProblem::Keep {
            path: kept.clone(),
            source,
        })?;
        let mut tests = JunitTests::default();
        let mut names = Vec::new();
        for (index, (relative, _)) in written.into_iter().enumerate() {
            let text = read_report(&self.repo.join(relative))?;
            let copy = kept.join(format!("{index:03}-{}", flat_name(relative)));
            std::fs::write(&copy, &text).map_err(|source| ReportProblem::Keep {
                path: copy.clone(),
                source,
            })?;
            add(&mut tests, relative, &text)?;
            names.push(relative.display().to_string());
        }
        Ok(reports(tests, &names, &kept))
    }
}

impl Watch {
    /// When the run was not made again but an earlier run of the same command on the same tree
    /// was reused (its output in `log`): the reports that run wrote, from their kept copies.
    pub fn reused(self, log: &Path) -> Result<Reports, ReportProblem> {
        read_kept(&self.pattern, log)
    }
}

/// The reports an earlier run of the same command on the same tree wrote, from the copies
/// kept beside its `log`.
pub fn read_kept(pattern: &str, log: &Path) -> Result<Reports, ReportProblem> {
    let kept = kept_folder(log);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&kept)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    if files.is_empty() {
        return Err(ReportProblem::NotWritten {
            pattern: pattern.to_owned(),
            ignored: 0,
        });
    }
    let mut tests = JunitTests::default();
    for file in &files {
        add(&mut tests, file, &read_report(file)?)?;
    }
    let names: Vec<String> = files
        .iter()
        .map(|file| file.display().to_string())
        .collect();
    Ok(reports(tests, &names, &kept))
}

/// Where the reports read for the command logged in `log` are kept: `tests-1.log` →
/// `tests-1.junit/`.
pub fn kept_folder(log: &Path) -> PathBuf {
    log.with_extension("junit")
}

fn reports(tests: JunitTests, names: &[String], kept: &Path) -> Reports {
    const SHOWN: usize = 3;
    let mut shown = names
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        let more = names.len() - SHOWN;
        shown = format!("{shown} and {more} more");
    }
    Reports {
        note: format!(
            "test figures from the JUnit report(s) this run wrote: {shown} (copies in {})",
            kept.display()
        ),
        metrics: tests.into_metrics(),
    }
}

fn add(tests: &mut JunitTests, path: &Path, text: &[u8]) -> Result<(), ReportProblem> {
    tests
        .add_report(&String::from_utf8_lossy(text))
        .map_err(|source| ReportProblem::Malformed {
            path: path.to_path_buf(),
            source,
        })
}

fn read_report(path: &Path) -> Result<Vec<u8>, ReportProblem> {
    let unreadable = |source| ReportProblem::Unreadable {
        path: path.to_path_buf(),
        source,
    };
    let bytes = std::fs::metadata(path).map_err(unreadable)?.len();
    if bytes > MAX_REPORT_BYTES {
        return Err(ReportProblem::TooLarge {
            path: path.to_path_buf(),
            bytes,
        });
    }
    std::fs::read(path).map_err(unreadable)
}

fn remove_folder(folder: &Path) -> Result<(), ReportProblem> {
    match std::fs::remove_dir_all(folder) {
        Err(source) if source.kind() != std::io::ErrorKind::NotFound => Err(ReportProblem::Keep {
            path: folder.to_path_buf(),
            source,
        }),
        Ok(()) | Err(_) => Ok(()),
    }
}

/// A relative path as one file name: `build/test-results/TEST-a.xml` →
/// `build_test-results_TEST-a.xml`.
fn flat_name(relative: &Path) -> String {
    relative.to_string_lossy().replace('/', "_")
}

/// The regular files under `repo` that `matcher` matches, by path relative to `repo`. Only the
/// folder named by the glob's fixed part (`build/test-results` of
/// `build/test-results/**/*.xml`) is searched, without following symbolic links.
fn matching(repo: &Path, pattern: &str, matcher: &GlobMatcher) -> BTreeMap<PathBuf, Stamp> {
    let fixed: PathBuf = pattern
        .split('/')
        .take_while(|part| !part.contains(['*', '?', '[', '{', '\\']))
        .collect();
    let start = repo.join(&fixed);
    let mut found = BTreeMap::new();
    let walk = ignore::WalkBuilder::new(&start)
        .standard_filters(false)
        .follow_links(false)
        .filter_entry(|entry| {
            entry.depth() == 0
                || !NOT_SEARCHED
                    .iter()
                    .any(|name| entry.file_name() == std::ffi::OsStr::new(name))
        })
        .build();
    for entry in walk.filter_map(Result::ok) {
        if !entry.file_type().is_some_and(|kind| kind.is_file()) {
            continue;
        }
        let Ok(relative) = entry.path().strip_prefix(repo) else {
            continue;
        };
        if !matcher.is_match(relative) {
            continue;
        }
        if let Ok(metadata) = entry.path().symlink_metadata() {
            found.insert(relative.to_path_buf(), Stamp::of(entry.path(), &metadata));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Outcome;

    const PASSING: &str = r#"<testsuite><testcase classname="t" name="passes"/></testsuite>"#;
    const FAILING: &str =
        r#"<testsuite><testcase classname="t" name="fails"><failure/></testcase></testsuite>"#;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("test fixture");
        std::fs::write(path, text).expect("test fixture");
    }

    fn passed(reports: &Reports) -> Option<crate::metrics::MetricValue> {
        reports.metrics.get("tests_passed")
    }

    #[test]
    fn only_the_reports_the_run_wrote_are_read_and_kept() {
        let repo = tempfile::tempdir().expect("temporary directory");
        let log = repo.path().join(".prp-session/tests-1.log");
        write(&repo.path().join("build/results/old/TEST-old.xml"), FAILING);
        write(
            &repo.path().join("node_modules/x/build/results/a.xml"),
            FAILING,
        );
        let watch = Watch::start(repo.path(), "build/results/**/*.xml");
        write(&repo.path().join("build/results/new/TEST-new.xml"), PASSING);
        write(&repo.path().join("build/results/notes.txt"), "not a report");
        let reports = watch.finish(&log).expect("one report was written");
        assert_eq!(
            passed(&reports),
            Some(crate::metrics::MetricValue::Number(1.0))
        );
        assert_eq!(
            reports.metrics.get("tests_failed"),
            Some(crate::metrics::MetricValue::Number(0.0))
        );
        assert_eq!(
            reports.metrics.test_cases().get("t.passes"),
            Some(Outcome::Passed)
        );
        assert!(
            reports.note.contains("build/results/new/TEST-new.xml"),
            "{}",
            reports.note
        );
        let kept = read_kept("build/results/**/*.xml", &log).expect("the copy");
        assert_eq!(kept.metrics, reports.metrics);
        assert!(
            kept_folder(&log)
                .join("000-build_results_new_TEST-new.xml")
                .is_file()
        );
    }

    #[test]
    fn a_stale_report_is_no_report() {
        let repo = tempfile::tempdir().expect("temporary directory");
        let log = repo.path().join("tests-1.log");
        write(&repo.path().join("junit.xml"), PASSING);
        std::fs::create_dir_all(kept_folder(&log)).expect("test fixture");
        write(&kept_folder(&log).join("000-junit.xml"), PASSING);
        let watch = Watch::start(repo.path(), "junit.xml");
        let problem = watch.finish(&log).expect_err("nothing was written");
        assert!(
            matches!(problem, ReportProblem::NotWritten { ignored: 1, .. }),
            "{problem}"
        );
        assert!(problem.to_string().starts_with(
            "no JUnit report written by this run: `[qa] junit = \"junit.xml\"` matched no file"
        ));
        assert!(
            !kept_folder(&log).exists(),
            "an earlier run's copies are gone"
        );
        assert!(read_kept("junit.xml", &log).is_err());
    }

    #[test]
    fn a_rewritten_report_counts_and_a_malformed_one_is_named() {
        let repo = tempfile::tempdir().expect("temporary directory");
        let log = repo.path().join("tests-1.log");
        write(&repo.path().join("junit.xml"), PASSING);
        let watch = Watch::start(repo.path(), "junit.xml");
        write(&repo.path().join("junit.xml"), FAILING);
        let reports = watch.finish(&log).expect("rewritten");
        assert_eq!(
            reports.metrics.get("tests_failed"),
            Some(crate::metrics::MetricValue::Number(1.0))
        );
        let watch = Watch::start(repo.path(), "junit.xml");
        write(&repo.path().join("junit.xml"), "<testsuite><testcase");
        let problem = watch.finish(&log).expect_err("malformed");
        assert!(
            problem.to_string().starts_with("the JUnit report junit.xml written by this run is malformed: it is not well-formed XML"),
            "{problem}"
        );
    }

    #[test]
    fn a_report_copied_in_with_an_old_time_does_not_count() {
        let repo = tempfile::tempdir().expect("temporary directory");
        let watch = Watch::start(repo.path(), "junit.xml");
        let path = repo.path().join("junit.xml");
        write(&path, PASSING);
        let old = SystemTime::now() - Duration::from_secs(3600);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .and_then(|file| file.set_modified(old))
            .expect("test fixture");
        let problem = watch
            .finish(&repo.path().join("tests-1.log"))
            .expect_err("old");
        assert!(
            matches!(problem, ReportProblem::NotWritten { ignored: 1, .. }),
            "{problem}"
        );
    }
}
