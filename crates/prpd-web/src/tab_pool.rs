//! The tabs of one walk, so pages load at the same time: each page given to [`TabPool::start`]
//! is opened and read ([`PageRead`]) by a free tab in a task of its own, which goes on while
//! the walk records other pages, and its read waits, by address, until the walk takes it. The
//! first tab is there at once; the others open in tasks too, while the start page loads (one
//! that fails to open leaves the walk fewer tabs, and the same pages). The pool only loads what
//! it is given: which pages, and in what order they are recorded, is the walk's (`walk.rs`), so
//! the tabs change how fast a walk goes, never what it finds.

use std::collections::{HashMap, HashSet};
use std::num::NonZeroUsize;
use std::sync::Arc;

use tokio::task::{JoinError, JoinSet};
use url::Url;

use crate::browser::{BrowserError, Tab};

use super::budget::GuardrailHit;
use super::exploration::{Exploration, ExploreError};
use super::page_read::PageRead;
use super::scope::Scope;

/// The read of one page, or why there is none.
type Read = Result<PageRead, ExploreError>;

/// What a task of the pool did.
#[derive(Debug)]
enum Done {
    /// A tab opened (or not).
    Opened(Result<Tab, BrowserError>),
    /// A tab read the page at an address.
    Read(Tab, String, Box<Read>),
}

/// A walk's tabs and the pages they load.
#[derive(Debug)]
pub struct TabPool {
    idle: Vec<Tab>,
    /// A task per tab opening and per page loading, which hands the tab over when done.
    tasks: JoinSet<Done>,
    /// The reads done and not yet taken, by address.
    ready: HashMap<String, Read>,
    /// The addresses given and not yet taken.
    ahead: HashSet<String>,
    scope: Arc<Scope>,
}

impl TabPool {
    /// `count` tabs of the exploration's browser: the exploration's own tab, and the others
    /// opening.
    pub async fn open(
        exploration: &mut Exploration,
        count: NonZeroUsize,
    ) -> Result<TabPool, ExploreError> {
        let idle = vec![exploration.take_tab().await?];
        let mut tasks = JoinSet::new();
        for _ in 1..count.get() {
            let opening = exploration.tab_to_open().await?;
            tasks.spawn(async move { Done::Opened(opening.await) });
        }
        Ok(TabPool {
            idle,
            tasks,
            ready: HashMap::new(),
            ahead: HashSet::new(),
            scope: Arc::new(exploration.scope.clone()),
        })
    }

    /// Whether a tab is free for [`TabPool::start`].
    pub fn has_idle(&self) -> bool {
        !self.idle.is_empty()
    }

    /// How many pages were given and not yet taken.
    pub fn ahead(&self) -> usize {
        self.ahead.len()
    }

    /// Whether `url` was given and not yet taken.
    pub fn is_ahead(&self, url: &str) -> bool {
        self.ahead.contains(url)
    }

    /// Whether `url` was given and is still loading.
    pub fn is_loading(&self, url: &str) -> bool {
        self.is_ahead(url) && !self.ready.contains_key(url)
    }

    /// Opens and reads `url` in a free tab (with none free, nothing starts: the caller asks
    /// [`TabPool::has_idle`] first).
    pub fn start(&mut self, url: &Url) {
        let Some(mut tab) = self.idle.pop() else {
            return;
        };
        let scope = Arc::clone(&self.scope);
        let url = url.clone();
        self.ahead.insert(url.to_string());
        self.tasks.spawn(async move {
            let read = match tab.open(url.as_str()).await {
                Ok(()) => PageRead::of(&mut tab, &scope).await,
                Err(error) => Err(error.into()),
            };
            Done::Read(tab, url.to_string(), Box::new(read))
        });
    }

    /// Keeps the guardrail's refusal of `url` as its read, loading nothing.
    pub fn refuse(&mut self, url: &Url, hit: GuardrailHit) {
        self.ahead.insert(url.to_string());
        self.ready.insert(url.to_string(), Err(hit.into()));
    }

    /// The read of `url` once it is done; `None` while it loads, or when it was never given.
    pub fn take(&mut self, url: &str) -> Option<Read> {
        let read = self.ready.remove(url)?;
        self.ahead.remove(url);
        Some(read)
    }

    /// Waits until one more tab opens or page is read (at once when nothing is under way).
    pub async fn next(&mut self) {
        if let Some(joined) = self.tasks.join_next().await {
            self.keep(joined);
        }
    }

    /// Takes in the tabs that opened and the pages read meanwhile, without waiting: a tab that
    /// finished while the walk was recording a page is free again.
    pub fn collect(&mut self) {
        while let Some(joined) = self.tasks.try_join_next() {
            self.keep(joined);
        }
    }

    /// Keeps what a task did. A task that panicked panics the walk, as the same code would
    /// have in one tab.
    fn keep(&mut self, joined: Result<Done, JoinError>) {
        match joined.unwrap_or_else(|error| std::panic::resume_unwind(error.into_panic())) {
            Done::Opened(Ok(tab)) => self.idle.push(tab),
            Done::Opened(Err(error)) => {
                tracing::warn!(%error, "a tab did not open; the walk goes on in the others");
            }
            Done::Read(tab, url, read) => {
                self.idle.push(tab);
                self.ready.insert(url, *read);
            }
        }
    }
}
