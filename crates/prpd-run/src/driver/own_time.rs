//! prpd's own time in a session of the loop, part by part: what the run costs beyond its agents
//! and the project's commands. A loop that waits minutes for an agent can afford little of its
//! own, and a loop that iterates in milliseconds (a fast agent, a fast test suite) is where
//! prpd's share shows; so the driver adds up what each of its own steps took, and says so at
//! the end of the session in the debug log (`-v`), next to the time the run's processes took
//! (`owner::ProcessClock`). `cargo bench --bench overhead` reads that line.

use std::time::{Duration, Instant};

use prpd_base::process::owner;

/// One of prpd's own steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Part {
    /// Recording the working tree as a snapshot (git's index and tree objects).
    Snapshot,
    /// Listing the snapshot's files and comparing them with the frozen ones.
    Freeze,
    /// Writing the run record and its seal.
    Record,
    /// The status blocks, the iteration's `measured.json` and the lines printed.
    Status,
    /// Asking and telling the run's memory.
    Memory,
    /// Looking for processes an agent or a measurement left running.
    Sweep,
    /// Rendering the prompt and writing the feedback file.
    Prompt,
}

impl Part {
    const ALL: [Part; 7] = [
        Part::Snapshot,
        Part::Freeze,
        Part::Record,
        Part::Status,
        Part::Memory,
        Part::Sweep,
        Part::Prompt,
    ];

    fn name(self) -> &'static str {
        match self {
            Part::Snapshot => "snapshot",
            Part::Freeze => "freeze",
            Part::Record => "record",
            Part::Status => "status",
            Part::Memory => "memory",
            Part::Sweep => "sweep",
            Part::Prompt => "prompt",
        }
    }
}

/// What the session's own steps took so far.
#[derive(Debug)]
pub(super) struct OwnTime {
    started: Instant,
    /// The run's process clock when the driver was made (before the session's scope, whose
    /// clock starts at zero, is entered: zero).
    processes_at_start: Duration,
    /// The run's iterations when the session started.
    iterations_at_start: u32,
    parts: [Duration; Part::ALL.len()],
}

impl OwnTime {
    /// Starts counting now, for a run that has had `iterations` iterations.
    pub(super) fn start(iterations: u32) -> OwnTime {
        OwnTime {
            started: Instant::now(),
            processes_at_start: processes(),
            iterations_at_start: iterations,
            parts: [Duration::ZERO; Part::ALL.len()],
        }
    }

    /// Counts the time from `since` until now to `part`.
    pub(super) fn add(&mut self, part: Part, since: Instant) {
        self.parts[part as usize] += since.elapsed();
    }

    /// Writes the debug line: the session's wall time, the processes' share, prpd's own time
    /// per iteration and per part (milliseconds), and what no part accounts for; the run has
    /// had `iterations` iterations by now.
    pub(super) fn log(&self, iterations: u32) {
        let iterations = iterations.saturating_sub(self.iterations_at_start);
        let wall = self.started.elapsed();
        let processes = processes().saturating_sub(self.processes_at_start);
        let own = wall.saturating_sub(processes);
        let counted: Duration = self.parts.iter().sum();
        let parts: Vec<String> = Part::ALL
            .iter()
            .map(|part| format!("{}={:.2}", part.name(), millis(self.parts[*part as usize])))
            .collect();
        let per_iteration = millis(own) / f64::from(iterations.max(1));
        tracing::debug!(
            iterations,
            wall_ms = format_args!("{:.1}", millis(wall)),
            processes_ms = format_args!("{:.1}", millis(processes)),
            own_ms = format_args!("{:.1}", millis(own)),
            own_ms_per_iteration = format_args!("{per_iteration:.2}"),
            parts_ms = %parts.join(","),
            other_ms = format_args!("{:.2}", millis(own.saturating_sub(counted))),
            "prpd's own time in this session"
        );
    }
}

/// The run's process clock as it stands; outside a run's scope, zero.
fn processes() -> Duration {
    owner::clock().map_or(Duration::ZERO, |clock| clock.elapsed())
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}
