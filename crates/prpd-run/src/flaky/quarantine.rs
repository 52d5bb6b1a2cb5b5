//! The quarantine list, `.prpd/flaky.toml`: the tests prpd (or a human) found flaky in this
//! repository, kept in the repository so that a human can read, edit and commit it, and so
//! that the next run knows them before they flip again.
//!
//! ```toml
//! [[test]]
//! name = "the clock settles"
//! first_seen = "2025-03-01"
//! expires = "2025-03-31"
//! passes = 2
//! ```
//!
//! `passes` counts the runs since the test last failed or flipped in which it passed (`0` when
//! left out); at `[run] flaky_passes` it leaves the list, and so does a test whose `expires`
//! day has passed. A run reads the list as it is when the run starts; it writes the updated list
//! to the user's checkout when it ends (`driver/flaky.rs`). Parse errors name the file, the line
//! and what was expected, like every configuration file of prpd's.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use prpd_base::config_file::{self, ConfigError};

/// Where the list lives, relative to the repository root.
pub const PATH: &str = ".prpd/flaky.toml";

/// The quarantine list.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Quarantine {
    /// One entry per test, in the file's order.
    pub tests: Vec<Entry>,
}

/// A quarantined test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The test's id as the runner names it (what the QA report and the proof print).
    pub name: String,
    /// The day it was first seen flaky.
    pub first_seen: Day,
    /// The day after which it is no longer quarantined.
    pub expires: Day,
    /// Runs in a row in which it passed since it last failed or flipped.
    pub passes: u32,
}

/// A calendar day, as days since 1970-01-01 (written `YYYY-MM-DD`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Day(pub i64);

impl Day {
    /// The day of `unix_seconds` (UTC).
    pub fn of(unix_seconds: u64) -> Day {
        Day(i64::try_from(unix_seconds / 86_400).unwrap_or(i64::MAX))
    }

    /// `YYYY-MM-DD` as a day, or `None` when it is not a real date.
    pub fn parse(text: &str) -> Option<Day> {
        let mut parts = text.split('-');
        let (Some(year), Some(month), Some(day), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return None;
        };
        if year.len() != 4 || month.len() != 2 || day.len() != 2 {
            return None;
        }
        let (year, month, day): (i64, u32, u32) =
            (year.parse().ok()?, month.parse().ok()?, day.parse().ok()?);
        let found = days_from_civil(year, month, day);
        (Day(found).civil() == (year, month, day)).then_some(Day(found))
    }

    /// The day `days` later.
    #[must_use]
    pub fn plus(self, days: u32) -> Day {
        Day(self.0 + i64::from(days))
    }

    /// Year, month (1–12) and day (1–31).
    fn civil(self) -> (i64, u32, u32) {
        // Howard Hinnant's `civil_from_days`.
        let z = self.0 + 719_468;
        let era = z.div_euclid(146_097);
        let day_of_era = z.rem_euclid(146_097);
        let year_of_era =
            (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
        let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
        let shifted_month = (5 * day_of_year + 2) / 153;
        let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
        let month = if shifted_month < 10 {
            shifted_month + 3
        } else {
            shifted_month - 9
        };
        let year = year_of_era + era * 400 + i64::from(month <= 2);
        (
            year,
            u32::try_from(month).unwrap_or(1),
            u32::try_from(day).unwrap_or(1),
        )
    }
}

impl std::fmt::Display for Day {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (year, month, day) = self.civil();
        write!(f, "{year:04}-{month:02}-{day:02}")
    }
}

/// Howard Hinnant's `days_from_civil`: days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year.rem_euclid(400);
    let month = i64::from(month);
    let day_of_year =
        (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The file as written: every field a string or a number, unknown keys refused.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    test: Vec<RawEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    name: String,
    first_seen: String,
    expires: String,
    passes: Option<u32>,
}

impl Quarantine {
    /// The list in `repo`, empty when the file does not exist.
    pub fn load(repo: &Path) -> Result<Quarantine, ConfigError> {
        let path = repo.join(PATH);
        if !path.exists() {
            return Ok(Quarantine::default());
        }
        Quarantine::parse(&path, &config_file::read(&path)?)
    }

    /// Parses the text of the file at `path` (named in errors).
    pub fn parse(path: &Path, text: &str) -> Result<Quarantine, ConfigError> {
        let raw: RawFile = config_file::parse_toml(path, text)?;
        let mut tests = Vec::with_capacity(raw.test.len());
        for raw in raw.test {
            let day = |field: &str, value: &str| {
                Day::parse(value).ok_or_else(|| {
                    ConfigError::at(
                        path,
                        text,
                        &format!("\"{value}\""),
                        format!(
                            "`{field} = \"{value}\"` of test `{}` is not a date; expected YYYY-MM-DD, such as 2025-03-01",
                            raw.name
                        ),
                    )
                })
            };
            if raw.name.trim().is_empty() {
                return Err(ConfigError::at(
                    path,
                    text,
                    "name",
                    "a [[test]] has an empty `name`; expected the test's id as the runner names it",
                ));
            }
            if tests.iter().any(|entry: &Entry| entry.name == raw.name) {
                return Err(ConfigError::at(
                    path,
                    text,
                    &format!("\"{}\"", raw.name),
                    format!(
                        "test `{}` is listed twice; expected one [[test]] per test",
                        raw.name
                    ),
                ));
            }
            tests.push(Entry {
                first_seen: day("first_seen", &raw.first_seen)?,
                expires: day("expires", &raw.expires)?,
                passes: raw.passes.unwrap_or(0),
                name: raw.name,
            });
        }
        Ok(Quarantine { tests })
    }

    /// The names quarantined on `today` (not expired).
    pub fn active(&self, today: Day) -> impl Iterator<Item = &str> {
        self.tests
            .iter()
            .filter(move |entry| entry.expires >= today)
            .map(|entry| entry.name.as_str())
    }

    /// The file's text: a header that says what the list is, then one `[[test]]` per entry.
    pub fn render(&self) -> String {
        let mut text = String::from(
            "# Flaky tests prpd quarantined: each failed and passed on the same tree. A quarantined\n\
             # test that fails is a warning in QA, not a blocker; it never counts as a repeated error\n\
             # nor as proof that the tests test a feature. `passes` counts the runs in a row it\n\
             # passed; at [run] flaky_passes (5) it leaves the list, and so it does after `expires`.\n\
             # Edit freely: remove an entry to hold the test to every run again.\n",
        );
        for entry in &self.tests {
            let _ = write!(
                text,
                "\n[[test]]\nname = {}\nfirst_seen = \"{}\"\nexpires = \"{}\"\npasses = {}\n",
                toml_string(&entry.name),
                entry.first_seen,
                entry.expires,
                entry.passes
            );
        }
        text
    }

    /// Writes the list into `repo` atomically.
    pub fn write(&self, repo: &Path) -> std::io::Result<PathBuf> {
        let path = repo.join(PATH);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        prpd_base::files::write_atomically(&path, self.render().as_bytes())?;
        Ok(path)
    }
}

/// `text` as a TOML basic string.
fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_owned()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_read_and_print_as_calendar_dates() {
        for text in ["1970-01-01", "2000-02-29", "2024-12-31", "2025-03-01"] {
            let day = Day::parse(text).expect(text);
            assert_eq!(day.to_string(), text);
        }
        assert_eq!(Day::parse("1970-01-02"), Some(Day(1)));
        assert_eq!(Day::of(86_400 * 20_000 + 5), Day(20_000));
        assert_eq!(
            Day::parse("2025-02-28").map(|day| day.plus(1).to_string()),
            Some("2025-03-01".to_owned())
        );
        for wrong in [
            "2025-02-30",
            "2025-13-01",
            "25-01-01",
            "2025/01/01",
            "soon",
            "",
        ] {
            assert_eq!(Day::parse(wrong), None, "{wrong}");
        }
    }

    #[test]
    fn the_list_round_trips_through_its_file() {
        let list = Quarantine {
            tests: vec![Entry {
                name: "the \"clock\" settles".to_owned(),
                first_seen: Day::parse("2025-03-01").expect("date"),
                expires: Day::parse("2025-03-31").expect("date"),
                passes: 2,
            }],
        };
        let text = list.render();
        assert_eq!(
            Quarantine::parse(Path::new(PATH), &text).expect("parses"),
            list
        );
        let hand_written =
            "[[test]]\nname = \"a\"\nfirst_seen = \"2025-03-01\"\nexpires = \"2025-04-01\"\n";
        assert_eq!(
            Quarantine::parse(Path::new(PATH), hand_written)
                .expect("passes may be left out")
                .tests[0]
                .passes,
            0
        );
    }

    #[test]
    fn a_wrong_list_names_its_file_line_and_what_was_expected() {
        let cases = [
            (
                "[[test]]\nname = \"a\"\nfirst_seen = \"2025-03-01\"\nexpires = \"next week\"\n",
                ".prpd/flaky.toml:4:11: `expires = \"next week\"` of test `a` is not a date; expected YYYY-MM-DD",
            ),
            (
                "[[test]]\nname = \"a\"\nfirst_seen = \"2025-03-01\"\nexpires = \"2025-04-01\"\nreason = \"x\"\n",
                ".prpd/flaky.toml:5:1: unknown field `reason`, expected one of `name`, `first_seen`, `expires`, `passes`",
            ),
            (
                "[[test]]\nname = \"a\"\nexpires = \"2025-04-01\"\n",
                ".prpd/flaky.toml:1:1: missing field `first_seen`",
            ),
            (
                "[[test]]\nname = \"a\"\nfirst_seen = \"2025-03-01\"\nexpires = \"2025-04-01\"\n\n\
                 [[test]]\nname = \"a\"\nfirst_seen = \"2025-03-02\"\nexpires = \"2025-04-01\"\n",
                ".prpd/flaky.toml:2:8: test `a` is listed twice",
            ),
        ];
        for (text, expected) in cases {
            let error = Quarantine::parse(Path::new(PATH), text)
                .expect_err(expected)
                .to_string();
            assert!(error.starts_with(expected), "{error}");
        }
    }

    #[test]
    fn an_expired_entry_is_no_longer_quarantined() {
        let list = Quarantine::parse(
            Path::new(PATH),
            "[[test]]\nname = \"old\"\nfirst_seen = \"2025-01-01\"\nexpires = \"2025-01-31\"\n\n\
             [[test]]\nname = \"new\"\nfirst_seen = \"2025-03-01\"\nexpires = \"2025-03-31\"\n",
        )
        .expect("parses");
        let today = Day::parse("2025-03-10").expect("date");
        assert_eq!(list.active(today).collect::<Vec<_>>(), ["new"]);
    }
}
