//! An agent's output read while the agent runs, as `process::run` drains it: its usage
//! (`stream.rs`), priced like the receipt prices it, against the call's budget; and each line
//! for a CLI that waits for a model it cannot reach (`unreachable.rs`). The first budget it takes
//! past its limit, or that line, stops the agent's process group at once. It stands apart from
//! `invoke` because it is the only part of a call that runs beside the agent.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use super::Usage;
use super::stream::StreamedUsage;
use super::unreachable::Unreachable;
use crate::budget::{self, Allowance, Crossing};
use crate::config::Prices;
use crate::receipt;
use prpd_base::process::{OutputWatch, Spec};

/// What one call may spend: the budgets that apply with what was spent before it, and how to
/// price the tokens it streams.
#[derive(Debug, Clone)]
pub struct CallBudget {
    pub allowances: Vec<Allowance>,
    pub prices: Prices,
}

/// How long the watcher may take to read what is left in its channel once the agent ended.
const DRAIN_WAIT: Duration = Duration::from_secs(1);

/// What the watcher knows so far.
#[derive(Default)]
struct Seen {
    stream: StreamedUsage,
    crossing: Option<Crossing>,
    /// Whether the log said already that the model has no price.
    price_unknown: bool,
    unreachable: Unreachable,
    /// The line that said the CLI waits for a model it cannot reach.
    waiting_line: Option<String>,
    /// The line not yet ended, for the unreachable check.
    partial: Vec<u8>,
}

/// A running watcher of one call.
pub(super) struct Watching {
    seen: Arc<Mutex<Seen>>,
    task: JoinHandle<()>,
}

/// What the watcher saw of a call that ended.
pub(super) struct Watched {
    pub(super) usage: Option<Usage>,
    pub(super) model: Option<String>,
    pub(super) crossing: Option<Crossing>,
    /// Why the watcher stopped the agent, when it did.
    pub(super) stopped_because: Option<String>,
}

impl Watching {
    /// Starts watching the output `spec` will produce, against `budget` when there is one;
    /// `configured_model` prices the tokens until the output names its model.
    pub(super) fn start(
        budget: Option<CallBudget>,
        configured_model: Option<String>,
        spec: &mut Spec,
    ) -> Watching {
        let (chunks, mut received) = mpsc::unbounded_channel::<Vec<u8>>();
        let (stop, stop_asked) = watch::channel(false);
        spec.watch = Some(OutputWatch {
            chunks,
            stop: stop_asked,
        });
        let seen = Arc::new(Mutex::new(Seen::default()));
        let shared = Arc::clone(&seen);
        let task = tokio::spawn(async move {
            while let Some(chunk) = received.recv().await {
                let mut seen = shared.lock().unwrap_or_else(PoisonError::into_inner);
                seen.stream.push(&chunk);
                if seen.crossing.is_some() || seen.waiting_line.is_some() {
                    continue;
                }
                if let Some(line) = seen.unreachable_line(&chunk) {
                    tracing::warn!("the agent waits for a model it cannot reach; stopping it");
                    seen.waiting_line = Some(line);
                    let _ = stop.send(true);
                    continue;
                }
                let Some(budget) = budget
                    .as_ref()
                    .filter(|budget| !budget.allowances.is_empty())
                else {
                    continue;
                };
                let Some(usage) = seen.stream.usage() else {
                    continue;
                };
                let model = seen
                    .stream
                    .model()
                    .map(str::to_owned)
                    .or_else(|| configured_model.clone());
                let (cost, source) =
                    receipt::cost_of(Some(&usage), model.as_deref(), &budget.prices);
                let counts_cost = budget
                    .allowances
                    .iter()
                    .any(|allowance| allowance.budget.is_cost());
                if source == receipt::CostSource::UnknownPrice && counts_cost && !seen.price_unknown
                {
                    seen.price_unknown = true;
                    tracing::warn!(
                        model = model.as_deref().unwrap_or("(none named)"),
                        "no price for the agent's model in [prices]: its cost is unknown until its CLI reports it, so a cost budget cannot stop it mid-call"
                    );
                }
                if let Some(crossing) =
                    budget::crossed(&budget.allowances, cost, usage.billed_tokens(), true)
                {
                    tracing::warn!(%crossing, "the agent's streamed usage crossed a budget; stopping it");
                    seen.crossing = Some(crossing);
                    let _ = stop.send(true);
                }
            }
        });
        Watching { seen, task }
    }

    /// Waits (briefly) for the watcher to read the end of the output, then says what it saw.
    pub(super) async fn finish(self) -> Watched {
        let Watching { seen, mut task } = self;
        if tokio::time::timeout(DRAIN_WAIT, &mut task).await.is_err() {
            // A process that escaped the agent's group holds the output open; what was read
            // is enough.
            task.abort();
        }
        let seen = seen.lock().unwrap_or_else(PoisonError::into_inner);
        let stopped_because = match (&seen.crossing, &seen.waiting_line) {
            (Some(crossing), _) => Some(format!(
                "stopped by prpd: its streamed usage crossed {crossing}"
            )),
            (None, Some(line)) => Some(format!(
                "stopped by prpd: it cannot reach its model (`{line}`)"
            )),
            (None, None) => None,
        };
        Watched {
            usage: seen.stream.usage(),
            model: seen.stream.model().map(str::to_owned),
            crossing: seen.crossing,
            stopped_because,
        }
    }
}

impl Seen {
    /// Reads the lines `chunk` ends for the CLI waiting for a network it never reached in
    /// this call.
    fn unreachable_line(&mut self, chunk: &[u8]) -> Option<String> {
        self.partial.extend_from_slice(chunk);
        let mut found = None;
        while let Some(end) = self.partial.iter().position(|byte| *byte == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            found = found.or_else(|| self.unreachable.read(&String::from_utf8_lossy(&line)));
        }
        if self.partial.len() > LINE_CAP {
            self.partial.clear();
        }
        found
    }
}

/// The longest unfinished line kept for the unreachable check; the lines it looks for are far
/// shorter.
const LINE_CAP: usize = 64 * 1024;
