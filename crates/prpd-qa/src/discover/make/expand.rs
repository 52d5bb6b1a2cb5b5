//! Makefile variable expansion with bounded work: what `$(VAR)` stands for, judged by text.
//!
//! A Makefile can make naive expansion exponential: a variable that names another ten times,
//! which names another ten times, … is 10^n bytes n levels down, and a variable that names
//! itself (`X = $(X) $(X)`) never ends. So each variable is expanded once and remembered
//! ([`Expander`]), a variable met again while it is being expanded stays as written (`make`
//! itself refuses such a variable), and the work is capped: a text that grows past
//! [`MAX_EXPANDED`] bytes or references nested past [`MAX_DEPTH`] levels is
//! [`Unexpandable`]. Discovery then refuses the target by name rather than judging half of
//! it: a recipe prpd could not read in full is not a recipe prpd may run.
//!
//! Function calls (`$(strip $(DOCKER_RUN))`, `$(subst a,b,$(X))`) stay as written, but the
//! references inside them are expanded, so a wrapper function does not hide what it runs.

use std::collections::HashMap;
use std::fmt;

use super::Makefile;

/// The most bytes one expanded text (a variable's value, a recipe line, a target's whole
/// recipe) may have: far above any real recipe, far below what would slow discovery.
pub(in crate::discover) const MAX_EXPANDED: usize = 64 * 1024;

/// How deep variable references may nest inside one another (real Makefiles nest a few).
const MAX_DEPTH: usize = 32;

/// Why a text could not be expanded in full; reads after "its variables".
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::discover) enum Unexpandable {
    /// The expansion passed [`MAX_EXPANDED`] bytes.
    Size,
    /// References nested past [`MAX_DEPTH`] levels.
    Nesting,
    /// The `include`s went on past the number of files or rounds prpd reads.
    Includes,
}

impl fmt::Display for Unexpandable {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unexpandable::Size => {
                write!(formatter, "expand to more than {} KiB", MAX_EXPANDED / 1024)
            }
            Unexpandable::Nesting => {
                write!(formatter, "nest more than {MAX_DEPTH} references deep")
            }
            Unexpandable::Includes => write!(
                formatter,
                "come from more included files than prpd reads ({} files, {} levels)",
                super::MAX_INCLUDES,
                super::MAX_NESTING
            ),
        }
    }
}

/// Expands texts of one [`Makefile`], each variable once.
pub(in crate::discover) struct Expander<'a> {
    makefile: &'a Makefile,
    /// Each variable expanded so far: every value's expansion, one per line.
    known: HashMap<&'a str, Result<String, Unexpandable>>,
    /// The variables being expanded right now, outermost first.
    active: Vec<&'a str>,
}

impl<'a> Expander<'a> {
    pub(in crate::discover) fn new(makefile: &'a Makefile) -> Expander<'a> {
        Expander {
            makefile,
            known: HashMap::new(),
            active: Vec::new(),
        }
    }

    /// `text` with `$(VAR)` and `${VAR}` replaced by the variable's values (every branch's,
    /// one per line), `$(MAKE)` by `make`, and `$$` by `$`. Unknown variables (the
    /// environment's) and functions stay as written, the references in a function's
    /// arguments expanded.
    pub(in crate::discover) fn expand(&mut self, text: &str) -> Result<String, Unexpandable> {
        self.expand_at(text, 0)
    }

    fn expand_at(&mut self, text: &str, depth: usize) -> Result<String, Unexpandable> {
        if depth > MAX_DEPTH {
            return Err(Unexpandable::Nesting);
        }
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(dollar) = rest.find('$') {
            out.push_str(&rest[..dollar]);
            let after = &rest[dollar + 1..];
            if let Some(stripped) = after.strip_prefix('$') {
                out.push('$');
                rest = stripped;
                continue;
            }
            let (open, close) = match after.chars().next() {
                Some('(') => ('(', ')'),
                Some('{') => ('{', '}'),
                Some(_) | None => {
                    out.push('$');
                    rest = after;
                    continue;
                }
            };
            let Some(end) = matching_close(after, open, close) else {
                out.push('$');
                rest = after;
                continue;
            };
            let inner = &after[1..end];
            if is_name(inner) {
                self.reference(inner, open, close, depth, &mut out)?;
            } else {
                let arguments = self.expand_at(inner, depth + 1)?;
                out.push('$');
                out.push(open);
                out.push_str(&arguments);
                out.push(close);
            }
            if out.len() > MAX_EXPANDED {
                return Err(Unexpandable::Size);
            }
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        if out.len() > MAX_EXPANDED {
            return Err(Unexpandable::Size);
        }
        Ok(out)
    }

    /// Writes what the reference to variable `name` stands for to `out`.
    fn reference(
        &mut self,
        name: &str,
        open: char,
        close: char,
        depth: usize,
        out: &mut String,
    ) -> Result<(), Unexpandable> {
        let makefile = self.makefile;
        let Some((known_name, values)) = makefile.variable(name) else {
            if name == "MAKE" {
                out.push_str("make");
            } else {
                out.push('$');
                out.push(open);
                out.push_str(name);
                out.push(close);
            }
            return Ok(());
        };
        if self.active.contains(&known_name) {
            out.push('$');
            out.push(open);
            out.push_str(name);
            out.push(close);
            return Ok(());
        }
        if !self.known.contains_key(known_name) {
            self.active.push(known_name);
            let expanded = values
                .iter()
                .map(|value| self.expand_at(value, depth + 1))
                .collect::<Result<Vec<String>, Unexpandable>>()
                .map(|values| values.join("\n"))
                .and_then(|joined| {
                    if joined.len() > MAX_EXPANDED {
                        Err(Unexpandable::Size)
                    } else {
                        Ok(joined)
                    }
                });
            self.active.pop();
            self.known.insert(known_name, expanded);
        }
        match &self.known[known_name] {
            Ok(expanded) => {
                out.push_str(expanded);
                Ok(())
            }
            Err(reason) => Err(reason.clone()),
        }
    }
}

/// Whether `text` (what stands between the parentheses) names a variable rather than calling
/// a function or substituting (`$(SRC:.c=.o)`).
fn is_name(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// The byte index in `after` (which starts with `open`) of the `close` that matches it.
fn matching_close(after: &str, open: char, close: char) -> Option<usize> {
    let mut depth = 0usize;
    for (index, c) in after.char_indices() {
        if c == open {
            depth += 1;
        } else if c == close {
            depth -= 1;
            if depth == 0 {
                return Some(index);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::discover::make::parse;

    fn expand(makefile: &str, text: &str) -> Result<String, Unexpandable> {
        Expander::new(&parse(makefile)).expand(text)
    }

    #[test]
    fn function_arguments_are_expanded_and_the_function_kept() {
        assert_eq!(
            expand(
                "RUN = docker run img\n",
                "$(strip $(RUN)) go build ${subst a,b,${RUN}} $(SRC:.c=.o)"
            ),
            Ok(
                "$(strip docker run img) go build ${subst a,b,docker run img} $(SRC:.c=.o)"
                    .to_owned()
            )
        );
    }

    #[test]
    fn a_variable_that_names_itself_stays_as_written_inside_its_value() {
        assert_eq!(
            expand("X = $(X) -v\nY = $(Z) y\nZ = $(Y) z\n", "$(X) | $(Y)"),
            Ok("$(X) -v | $(Y) z y".to_owned())
        );
    }

    #[test]
    fn exponential_nesting_is_refused_fast() {
        let mut lines: Vec<String> = (0..12)
            .map(|level| {
                let next = format!("$(V{})", level + 1);
                format!("V{level} = {}", [next.as_str(); 10].join(" "))
            })
            .collect();
        lines.push("V12 = go".to_owned());
        let makefile = lines.join("\n");
        let started = Instant::now();
        assert_eq!(expand(&makefile, "$(V0) test"), Err(Unexpandable::Size));
        assert_eq!(
            expand(&makefile, "$(V11) test"),
            Ok(format!("{} test", ["go"; 10].join(" ")))
        );
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn a_chain_deeper_than_the_cap_is_refused() {
        let lines: Vec<String> = (0..=MAX_DEPTH)
            .map(|level| format!("V{level} = $(V{})", level + 1))
            .collect();
        let makefile = lines.join("\n");
        assert_eq!(expand(&makefile, "$(V0)"), Err(Unexpandable::Nesting));
        assert_eq!(
            expand(&makefile, "$(V5)"),
            Ok(format!("$(V{})", MAX_DEPTH + 1))
        );
    }
}
