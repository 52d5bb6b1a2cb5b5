//! What prpd adds to the environment of a test command's run so that the runner names every
//! test it ran. The gates compare runs test by test (GREEN passes at least as many tests as RED
//! counted, the fail-to-pass proof matches names, requirement ids are traced in test names),
//! and a runner that prints only one line per package hides its tests: plain `go test` prints
//! `ok  example.com/numkit` for a package whose two tests passed, but names each failing test,
//! so RED's run would count two tests and GREEN's one. `GOFLAGS=-v` makes every `go test` in
//! the command — written out, behind `make test` or a script — print a `--- PASS:` line per
//! test, without changing what runs or how it passes. Only test runs get it: `go build -v`
//! and `go list -v` print more than a linter expects to read.

/// The variables a test command's run is given on top of the measurement environment: `GOFLAGS`
/// with `-v` added to what prpd's own environment sets.
pub fn naming_env() -> Vec<(String, String)> {
    let inherited = std::env::var("GOFLAGS").unwrap_or_default();
    vec![("GOFLAGS".to_owned(), with_verbose(&inherited))]
}

/// `flags` (a `GOFLAGS` value) with `-v` added, unless it already asks for verbose output.
fn with_verbose(flags: &str) -> String {
    let verbose = flags
        .split_whitespace()
        .any(|flag| matches!(flag, "-v" | "--v" | "-v=true" | "--v=true"));
    match (verbose, flags.trim()) {
        (true, _) => flags.to_owned(),
        (false, "") => "-v".to_owned(),
        (false, flags) => format!("{flags} -v"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_flags_gain_verbose_once_and_keep_the_users_own() {
        let cases = [
            ("", "-v"),
            ("-mod=vendor", "-mod=vendor -v"),
            ("-v", "-v"),
            ("-count=1 -v=true", "-count=1 -v=true"),
            ("  -race  ", "-race -v"),
        ];
        for (flags, expected) in cases {
            assert_eq!(with_verbose(flags), expected, "{flags:?}");
        }
    }
}
