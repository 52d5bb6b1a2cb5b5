//! The browser's half of a visit: what one tab reads of the page it shows — the elements
//! (`observe.js`), and for a page in scope its screenshot and accessibility outline. It needs
//! the tab and the scope only, not the exploration, so the walk's tabs read pages at the same
//! time; [`crate::Exploration::record`] then keeps them, one by one, in the walk's order.

use url::Url;

use crate::browser::{PageObservation, Tab};

use super::exploration::ExploreError;
use super::scope::{OutOfScope, Scope};

/// One page as a tab read it.
#[derive(Debug)]
pub struct PageRead {
    pub observation: PageObservation,
    pub seen: Seen,
}

/// Where the page turned out to be.
#[derive(Debug)]
pub enum Seen {
    /// In scope, at its normalised address: the screenshot and outline were taken.
    InScope {
        url: Url,
        jpeg: Vec<u8>,
        outline: String,
    },
    /// Out of scope (a redirect away): only its address is kept, with why.
    OutOfScope { url: String, reason: OutOfScope },
}

impl PageRead {
    /// Reads the page `tab` shows.
    pub async fn of(tab: &mut Tab, scope: &Scope) -> Result<PageRead, ExploreError> {
        let observation = tab.observe().await?;
        let here = Url::parse(&observation.url).map_err(|error| ExploreError::BadUrl {
            url: observation.url.clone(),
            message: error.to_string(),
        })?;
        let seen = match scope.judge(&here, here.as_str()) {
            Ok(url) => Seen::InScope {
                url,
                jpeg: tab.screenshot_jpeg().await?,
                outline: tab.accessibility_outline().await?,
            },
            Err((url, reason)) => Seen::OutOfScope { url, reason },
        };
        Ok(PageRead { observation, seen })
    }
}
