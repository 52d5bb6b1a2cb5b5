//! Following task-runner calls: what a recipe or script finally runs when it calls another
//! task runner (issue 9, "no discovered command can change the tree").
//!
//! Each command source judges what its own file says: a Makefile target with its variables
//! and prerequisites, a `package.json` script with its `pre`/`post` scripts, a justfile
//! recipe with its dependencies. But a Makefile `test: ; npm run check` hides the `check`
//! script, a script `"test": "make check"` hides the recipe, and so on down a chain. So every
//! command discovery would pick, and the text judged behind it, is searched here for calls of
//! `make`, `npm`, `pnpm`, `yarn`, `bun` and `just` (`follow/call.rs`), segment by segment as
//! [`crate::safety`] splits commands, with the folder each call runs in (`make -C sub`,
//! `npm --prefix sub`, `yarn --cwd sub`, `just -d sub`, `cd sub && …`, `(cd sub; …)`). Each
//! call is read through the readers of the sources themselves ([`make::load`],
//! [`package_json::read`], [`just::load`]), the text it runs is judged by the same rule
//! ([`is_safe`] and the tools' configuration of its folder), and that text is searched in turn.
//!
//! What prpd cannot read is refused, never assumed safe: a script, target, recipe, file or
//! folder that is not there, a folder it cannot tell (`cd $DIR`), workspace-wide runs (`pnpm
//! -r`, `npm --workspaces`). Two exceptions keep what prpd did before it followed calls: a
//! make goal that make builds by its built-in rules or that names a file
//! ([`make::is_implicit_goal`]), and `yarn x`, `pnpm x`, `bun x` or `yarn run x` when `x` is
//! no script, which run the program `x` whose words are judged where they stand. A stack
//! default that prpd guesses (`npm test` in a project with no `test` script) may name a
//! script that is missing: it fails when it runs, saying prpd guessed it.
//!
//! The walk does bounded work whatever the files say: a call met again along the same chain
//! is a cycle and refused ("calls itself"), a call already judged elsewhere is not judged
//! again, and the chain depth ([`MAX_DEPTH`]), the number of calls ([`MAX_CALLS`]) and the
//! text read ([`MAX_FOLLOWED`]) are capped; past a cap the command is refused by name. Each
//! file is read once per folder ([`Follower`] keeps them), so following costs discovery a few
//! reads at most.

mod call;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use call::{Call, Missing, Runs, calls};

use super::just::{self, Justfile};
use super::make::{self, Makefile, Override};
use super::package_json::{self, Package};
use super::tool_config::ToolConfig;
use super::{Directory, Origin};
use crate::safety::{Unsafe, is_safe};

/// How many task-runner calls deep a chain may go below the command (`make test` → `npm
/// test` → `make check` is two).
pub(super) const MAX_DEPTH: usize = 16;

/// How many calls one command may reach in all.
pub(super) const MAX_CALLS: usize = 256;

/// How many bytes of text the calls of one command may run in all.
pub(super) const MAX_FOLLOWED: usize = 256 * 1024;

/// What reading a call found.
enum Resolution {
    /// The call runs `text` from `folder`; `source` names where it is written.
    Runs {
        text: String,
        folder: PathBuf,
        source: String,
    },
    /// Nothing is followed: a program rather than a script, a goal make builds by its own
    /// rules, `--if-present` with no such script.
    NotACall,
    /// prpd cannot read what the call runs; why.
    Unreadable(String),
    /// The file is there, but what the call runs could not be read in full; why.
    Unjudgeable(String),
}

/// A file read once, shared by every call that reads it, or why it could not be read.
type Loaded<T> = Result<Option<Rc<T>>, String>;

/// The files of one folder, each read at most once.
#[derive(Default)]
struct Folder {
    /// By the name given with `-f` (`None`: the Makefile make finds itself), with its name.
    makefiles: HashMap<Option<String>, Loaded<(String, Makefile)>>,
    package: Option<Loaded<Package>>,
    /// By the name given with `-f` (`None`: the justfile of the folder), with its name.
    justfiles: HashMap<Option<String>, Loaded<(String, Justfile)>>,
    tools: Option<Result<Rc<ToolConfig>, String>>,
}

/// Follows task-runner calls through the files of one repository, reading each file once.
pub(super) struct Follower<'repo> {
    repo: &'repo Path,
    folders: HashMap<PathBuf, Folder>,
}

/// One call of the chain being walked.
struct Step {
    key: String,
    written: String,
    /// Where it is written; `None` for the command's own call, which the source read.
    source: Option<String>,
}

/// The state of one command's walk.
struct Walk {
    origin: Origin,
    /// The calls from the command down to the one being read.
    chain: Vec<Step>,
    /// The calls judged already, found safe.
    judged: HashSet<String>,
    calls: usize,
    /// Every text the calls run, joined: what a format check must show.
    reached: String,
}

impl<'repo> Follower<'repo> {
    pub(super) fn new(repo: &'repo Path) -> Follower<'repo> {
        Follower {
            repo,
            folders: HashMap::new(),
        }
    }

    /// Judges the task-runner calls of a command run from `folder` (relative to the
    /// repository root): the command's own call (`make test`, whose text its source read
    /// as `judged`) and every call in `judged`, down every chain. `Ok` holds the text the
    /// calls run, joined; `Err` the reason the command may not run, naming the chain.
    pub(super) fn follow(
        &mut self,
        folder: &Path,
        command: &str,
        judged: &str,
        origin: Origin,
    ) -> Result<String, Unsafe> {
        let folder = call::join(Path::new("."), &folder.display().to_string())
            .map_err(|reason| Unsafe(format!("could not be judged: {reason}")))?;
        let mut walk = Walk {
            origin,
            chain: Vec::new(),
            judged: HashSet::new(),
            calls: 0,
            reached: String::new(),
        };
        if command != judged {
            for call in calls(&folder, command) {
                walk.chain.push(Step {
                    key: call.key(),
                    written: call.written,
                    source: None,
                });
            }
        }
        self.visit_text(&folder, judged, &mut walk)?;
        Ok(walk.reached)
    }

    fn visit_text(&mut self, folder: &Path, text: &str, walk: &mut Walk) -> Result<(), Unsafe> {
        for call in calls(folder, text) {
            self.visit(&call, walk)?;
        }
        Ok(())
    }

    /// Reads `call`, judges what it runs and follows the calls in it.
    fn visit(&mut self, call: &Call, walk: &mut Walk) -> Result<(), Unsafe> {
        let key = call.key();
        if walk.judged.contains(&key) {
            return Ok(());
        }
        walk.refuse_cycle(&key, &call.written)?;
        walk.refuse_past_caps(&call.written)?;
        let (text, folder, source) = match self.resolve(call) {
            Resolution::Runs {
                text,
                folder,
                source,
            } => (text, folder, source),
            Resolution::NotACall => return Ok(()),
            Resolution::Unreadable(_) if walk.may_miss_first() => return Ok(()),
            Resolution::Unreadable(reason) => {
                return Err(Unsafe(format!(
                    "runs {}, which prpd cannot read: {reason}",
                    walk.shown(&call.written, None)
                )));
            }
            Resolution::Unjudgeable(reason) => {
                return Err(Unsafe(format!(
                    "runs {}, which could not be judged: {reason}",
                    walk.shown(&call.written, None)
                )));
            }
        };
        if walk.reached.len() + text.len() > MAX_FOLLOWED {
            return Err(Unsafe(format!(
                "could not be judged: what its task-runner calls run comes to more than {} KiB",
                MAX_FOLLOWED / 1024
            )));
        }
        let verdict = match self.tools(&folder) {
            Ok(tools) => is_safe(&text).and_then(|()| tools.judge(&text)),
            Err(reason) => Err(Unsafe(format!("could not be judged: {reason}"))),
        };
        if let Err(reason) = verdict {
            return Err(Unsafe(format!(
                "runs {}, which {reason}",
                walk.shown(&call.written, Some(&source))
            )));
        }
        walk.reached.push_str(&text);
        walk.reached.push('\n');
        walk.chain.push(Step {
            key,
            written: call.written.clone(),
            source: Some(source),
        });
        self.visit_text(&folder, &text, walk)?;
        if let Some(step) = walk.chain.pop() {
            walk.judged.insert(step.key);
        }
        Ok(())
    }

    /// What `call` runs, read from the files of its folder.
    fn resolve(&mut self, call: &Call) -> Resolution {
        let folder = match &call.folder {
            Ok(folder) => folder.clone(),
            Err(reason) => return Resolution::Unreadable(reason.clone()),
        };
        if !self.repo.join(&folder).is_dir() {
            return Resolution::Unreadable(format!("the folder {} is not there", shown(&folder)));
        }
        match &call.runs {
            Runs::Unreadable(reason) => Resolution::Unreadable(reason.clone()),
            Runs::Make {
                file,
                goal,
                overrides,
            } => self.resolve_make(&folder, file.as_deref(), goal, overrides),
            Runs::Script {
                name,
                arguments,
                missing,
            } => self.resolve_script(&folder, name, arguments, *missing),
            Runs::Just {
                file,
                recipe,
                overrides,
            } => self.resolve_just(&folder, file.as_deref(), recipe.as_deref(), overrides),
        }
    }

    fn resolve_make(
        &mut self,
        folder: &Path,
        file: Option<&str>,
        goal: &str,
        overrides: &[Override],
    ) -> Resolution {
        let loaded = match self.makefile(folder, file) {
            Ok(Some(loaded)) => loaded,
            Ok(None) => {
                return Resolution::Unreadable(match file {
                    Some(file) => format!("{} is not there", in_folder(folder, file)),
                    None => format!("{} has no Makefile", shown(folder)),
                });
            }
            Err(reason) => return Resolution::Unreadable(reason),
        };
        let (name, makefile) = &*loaded;
        let file = in_folder(folder, name);
        match makefile.goal_text(goal, overrides) {
            Some(Ok(text)) => Resolution::Runs {
                text,
                folder: folder.to_path_buf(),
                source: if goal.is_empty() {
                    format!("{file} default goal")
                } else {
                    format!("{file} target {goal}")
                },
            },
            Some(Err(reason)) => Resolution::Unjudgeable(format!("its variables {reason}")),
            None if goal.is_empty() => Resolution::NotACall,
            None if make::is_implicit_goal(&Directory::new(self.repo, folder), goal) => {
                Resolution::NotACall
            }
            None => Resolution::Unreadable(format!("{file} has no target `{goal}`")),
        }
    }

    fn resolve_script(
        &mut self,
        folder: &Path,
        name: &str,
        arguments: &[String],
        missing: Missing,
    ) -> Resolution {
        let unreadable = |reason: String| match missing {
            Missing::Unreadable => Resolution::Unreadable(reason),
            Missing::RunsAProgram | Missing::RunsNothing => Resolution::NotACall,
        };
        let package = match self.package(folder) {
            Ok(Some(package)) => package,
            Ok(None) => return unreadable(format!("{} has no package.json", shown(folder))),
            Err(reason) => return Resolution::Unreadable(reason),
        };
        let file = in_folder(folder, "package.json");
        let Some(own) = package.scripts.get(name) else {
            return unreadable(format!("{file} has no script `{name}`"));
        };
        let mut text = package_json::script_text(&package.scripts, name);
        if !arguments.is_empty() {
            text.push('\n');
            text.push_str(own);
            text.push(' ');
            text.push_str(&arguments.join(" "));
        }
        Resolution::Runs {
            text,
            folder: folder.to_path_buf(),
            source: format!("{file} scripts.{name}"),
        }
    }

    fn resolve_just(
        &mut self,
        folder: &Path,
        file: Option<&str>,
        recipe: Option<&str>,
        overrides: &[(String, String)],
    ) -> Resolution {
        let found = match file {
            Some(file) => self
                .justfile(folder, Some(file))
                .map(|loaded| loaded.map(|loaded| (folder.to_path_buf(), loaded))),
            None => self.nearest_justfile(folder),
        };
        let (home, loaded) = match found {
            Ok(Some(found)) => found,
            Ok(None) => {
                return Resolution::Unreadable(match file {
                    Some(file) => format!("{} is not there", in_folder(folder, file)),
                    None => format!("there is no justfile in {} or above it", shown(folder)),
                });
            }
            Err(reason) => return Resolution::Unreadable(reason),
        };
        let (name, justfile) = &*loaded;
        let file = in_folder(&home, name);
        let found = match recipe {
            Some(recipe) => justfile.recipe(recipe),
            None => justfile.default_recipe(),
        };
        let Some(found) = found else {
            return match recipe {
                Some(recipe) => Resolution::Unreadable(format!("{file} has no recipe `{recipe}`")),
                None => Resolution::NotACall,
            };
        };
        match justfile.body_text(&found.name, overrides) {
            Ok(text) => Resolution::Runs {
                text,
                folder: home,
                source: format!("{file} recipe {}", found.name),
            },
            Err(reason) => Resolution::Unjudgeable(format!("its variables {reason}")),
        }
    }

    /// The justfile just finds from `folder`: its own, else the nearest one above it inside
    /// the repository, with the folder it is in (where just runs its recipes).
    #[expect(
        clippy::type_complexity,
        reason = "the folder and the shared justfile, or why it cannot be read"
    )]
    fn nearest_justfile(
        &mut self,
        folder: &Path,
    ) -> Result<Option<(PathBuf, Rc<(String, Justfile)>)>, String> {
        let mut current = folder.to_path_buf();
        loop {
            if let Some(loaded) = self.justfile(&current, None)? {
                return Ok(Some((current, loaded)));
            }
            if current == Path::new(".") {
                return Ok(None);
            }
            current = match current.parent() {
                Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
                Some(_) | None => PathBuf::from("."),
            };
        }
    }

    fn folder(&mut self, folder: &Path) -> &mut Folder {
        self.folders.entry(folder.to_path_buf()).or_default()
    }

    fn makefile(&mut self, folder: &Path, file: Option<&str>) -> Loaded<(String, Makefile)> {
        let key = file.map(str::to_owned);
        if let Some(known) = self.folder(folder).makefiles.get(&key) {
            return known.clone();
        }
        let directory = Directory::new(self.repo, folder);
        let loaded = match file {
            Some(file) => make::load_named(&directory, file)
                .map(|makefile| makefile.map(|makefile| Rc::new((file.to_owned(), makefile)))),
            None => make::load(&directory)
                .map(|loaded| loaded.map(|(name, makefile)| Rc::new((name.to_owned(), makefile)))),
        }
        .map_err(|error| error.to_string());
        self.folder(folder).makefiles.insert(key, loaded.clone());
        loaded
    }

    fn package(&mut self, folder: &Path) -> Loaded<Package> {
        if let Some(known) = &self.folder(folder).package {
            return known.clone();
        }
        let loaded = package_json::read(&Directory::new(self.repo, folder))
            .map(|package| package.map(Rc::new))
            .map_err(|error| error.to_string());
        self.folder(folder).package = Some(loaded.clone());
        loaded
    }

    fn justfile(&mut self, folder: &Path, file: Option<&str>) -> Loaded<(String, Justfile)> {
        let key = file.map(str::to_owned);
        if let Some(known) = self.folder(folder).justfiles.get(&key) {
            return known.clone();
        }
        let directory = Directory::new(self.repo, folder);
        let loaded = match file {
            Some(file) => just::load_named(&directory, file)
                .map(|justfile| justfile.map(|justfile| Rc::new((file.to_owned(), justfile)))),
            None => just::load(&directory)
                .map(|loaded| loaded.map(|(name, justfile)| Rc::new((name.to_owned(), justfile)))),
        }
        .map_err(|error| error.to_string());
        self.folder(folder).justfiles.insert(key, loaded.clone());
        loaded
    }

    fn tools(&mut self, folder: &Path) -> Result<Rc<ToolConfig>, String> {
        if let Some(known) = &self.folder(folder).tools {
            return known.clone();
        }
        let loaded = ToolConfig::read(&Directory::new(self.repo, folder))
            .map(Rc::new)
            .map_err(|error| error.to_string());
        self.folder(folder).tools = Some(loaded.clone());
        loaded
    }
}

impl Walk {
    /// Whether an unreadable call may pass: the very first call of a command prpd guessed
    /// (`npm test` as a stack default, with no `test` script to read), which fails when it
    /// runs and says prpd guessed it.
    fn may_miss_first(&self) -> bool {
        self.origin == Origin::Fallback && self.chain.is_empty()
    }

    /// Refuses a call already on the chain: it would run itself without end.
    fn refuse_cycle(&self, key: &str, written: &str) -> Result<(), Unsafe> {
        let Some(position) = self.chain.iter().position(|step| step.key == key) else {
            return Ok(());
        };
        let cycle: Vec<String> = self.chain[position..]
            .iter()
            .map(|step| format!("`{}`", step.written))
            .chain(std::iter::once(format!("`{written}`")))
            .collect();
        Err(Unsafe(format!(
            "could not be judged: `{written}` calls itself ({})",
            cycle.join(" → ")
        )))
    }

    /// Refuses a call past [`MAX_DEPTH`] or [`MAX_CALLS`].
    fn refuse_past_caps(&mut self, written: &str) -> Result<(), Unsafe> {
        let depth = self
            .chain
            .iter()
            .filter(|step| step.source.is_some())
            .count();
        if depth >= MAX_DEPTH {
            let first = self
                .chain
                .iter()
                .find(|step| step.source.is_some())
                .map_or(written, |step| step.written.as_str());
            return Err(Unsafe(format!(
                "could not be judged: its task-runner calls go more than {MAX_DEPTH} deep (`{first}` → … → `{written}`)"
            )));
        }
        self.calls += 1;
        if self.calls > MAX_CALLS {
            return Err(Unsafe(format!(
                "could not be judged: it reaches more than {MAX_CALLS} task-runner calls"
            )));
        }
        Ok(())
    }

    /// The chain below the command down to `written` (found at `source`): "`npm run check`
    /// (package.json scripts.check) → `make fmt` (Makefile target fmt)". The command's own
    /// call is the subject ("it"), not part of it.
    fn shown(&self, written: &str, source: Option<&str>) -> String {
        let mut steps: Vec<String> = self
            .chain
            .iter()
            .filter_map(|step| {
                let source = step.source.as_ref()?;
                Some(format!("`{}` ({source})", step.written))
            })
            .collect();
        steps.push(match source {
            Some(source) => format!("`{written}` ({source})"),
            None => format!("`{written}`"),
        });
        steps.join(" → ")
    }
}

/// How a message names a folder: `the repository root`, or `web/`.
fn shown(folder: &Path) -> String {
    if folder == Path::new(".") {
        "the repository root".to_owned()
    } else {
        format!("{}/", folder.display())
    }
}

/// How a message names file `name` of `folder`: `Makefile`, `web/package.json`.
fn in_folder(folder: &Path, name: &str) -> String {
    if folder == Path::new(".") {
        name.to_owned()
    } else {
        format!("{}/{name}", folder.display())
    }
}

#[cfg(test)]
mod tests;
