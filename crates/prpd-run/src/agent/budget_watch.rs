//! The budget of one agent call, watched while the agent runs: every chunk of its output is read
//! for usage (`stream.rs`), priced like the receipt prices it, and the first budget it takes past
//! its limit stops the agent's process group. It stands apart from `invoke` because it is the
//! only part of a call that runs beside the agent.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use super::Usage;
use super::stream::StreamedUsage;
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
}

impl Watching {
    /// Starts watching the output `spec` will produce, against `budget`; `configured_model`
    /// prices the tokens until the output names its model.
    pub(super) fn start(
        budget: CallBudget,
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
                if seen.crossing.is_some() {
                    continue;
                }
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
                if source == receipt::CostSource::UnknownPrice && !seen.price_unknown {
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
        Watched {
            usage: seen.stream.usage(),
            model: seen.stream.model().map(str::to_owned),
            crossing: seen.crossing,
        }
    }
}
