//! The Chrome DevTools Protocol over the browser's WebSocket: numbered commands, their answers,
//! and the events in between. prpd uses a dozen methods, so they are sent as JSON by name
//! (the callers in `page.rs` say which) rather than through a generated protocol crate.
//!
//! A page is a *session* (`Target.attachToTarget` with `flatten`), and each message names its
//! session. Commands are sent one at a time and the answer is read before the next is sent, so
//! there is no dispatcher task: whatever events arrive meanwhile are kept in a bounded queue
//! that [`Cdp::wait_event`] reads first. Tabs that work at the same time therefore each have a
//! connection of their own (`tab.rs`); the browser keeps one for itself.

use std::collections::VecDeque;
use std::time::Duration;

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// The most events kept unread; older ones are dropped (an event nobody waited for in time is
/// of no use, and a page that fires thousands must not grow prpd's memory).
const MAX_QUEUED_EVENTS: usize = 256;

/// The browser did not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum CdpError {
    #[error("cannot reach the browser's DevTools socket {url}: {message}")]
    Connect { url: String, message: String },
    #[error("the browser closed its DevTools connection")]
    Closed,
    #[error("the browser did not answer `{method}` within {}", humantime::format_duration(*.timeout))]
    Timeout { method: String, timeout: Duration },
    #[error("the browser refused `{method}`: {message}")]
    Refused { method: String, message: String },
    #[error("the DevTools connection failed: {0}")]
    Socket(String),
}

/// An event the browser sent: its method and session (prpd waits for events, it does not read
/// their parameters).
#[derive(Debug, Clone)]
pub struct Event {
    pub method: String,
    pub session: Option<String>,
}

/// A DevTools connection.
pub struct Cdp {
    socket: WebSocketStream<MaybeTlsStream<TcpStream>>,
    next_id: u64,
    events: VecDeque<Event>,
    /// How long one command may take.
    timeout: Duration,
}

impl std::fmt::Debug for Cdp {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Cdp")
            .field("next_id", &self.next_id)
            .field("queued_events", &self.events.len())
            .finish_non_exhaustive()
    }
}

impl Cdp {
    /// Connects to the browser's WebSocket at `url` (`ws://127.0.0.1:PORT/devtools/browser/…`).
    pub async fn connect(url: &str, timeout: Duration) -> Result<Cdp, CdpError> {
        let connect_error = |message: String| CdpError::Connect {
            url: url.to_owned(),
            message,
        };
        let (socket, _response) =
            tokio::time::timeout(timeout, tokio_tungstenite::connect_async(url))
                .await
                .map_err(|_| connect_error("timed out".to_owned()))?
                .map_err(|error| connect_error(error.to_string()))?;
        Ok(Cdp {
            socket,
            next_id: 1,
            events: VecDeque::new(),
            timeout,
        })
    }

    /// Sends `method` with `params` (to the page `session`, or the browser) and returns its
    /// result.
    pub async fn call(
        &mut self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, CdpError> {
        let id = self.next_id;
        self.next_id += 1;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        self.socket
            .send(Message::text(message.to_string()))
            .await
            .map_err(|error| CdpError::Socket(error.to_string()))?;
        let deadline = Instant::now() + self.timeout;
        loop {
            let Some(mut incoming) = self.read_until(deadline).await? else {
                return Err(CdpError::Timeout {
                    method: method.to_owned(),
                    timeout: self.timeout,
                });
            };
            if incoming.get("id").and_then(Value::as_u64) == Some(id) {
                if let Some(error) = incoming.get("error") {
                    let message = error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("unknown error");
                    return Err(CdpError::Refused {
                        method: method.to_owned(),
                        message: message.to_owned(),
                    });
                }
                return Ok(incoming.get_mut("result").map_or(Value::Null, Value::take));
            }
            self.queue(&incoming);
        }
    }

    /// Waits until `timeout` for the event `method` of `session`; a queued one counts. `None`
    /// when it did not come.
    pub async fn wait_event(
        &mut self,
        session: Option<&str>,
        method: &str,
        timeout: Duration,
    ) -> Result<Option<Event>, CdpError> {
        let matches = |event: &Event| event.method == method && event.session.as_deref() == session;
        if let Some(position) = self.events.iter().position(matches) {
            return Ok(self.events.remove(position));
        }
        let deadline = Instant::now() + timeout;
        while let Some(incoming) = self.read_until(deadline).await? {
            if let Some(event) = as_event(&incoming) {
                if matches(&event) {
                    return Ok(Some(event));
                }
                self.push_event(event);
            }
        }
        Ok(None)
    }

    /// Forgets the queued events of `session` (before an action whose events matter).
    pub fn clear_events(&mut self, session: Option<&str>) {
        self.events
            .retain(|event| event.session.as_deref() != session);
    }

    /// The next JSON message, or `None` at `deadline`.
    async fn read_until(&mut self, deadline: Instant) -> Result<Option<Value>, CdpError> {
        loop {
            let next = tokio::time::timeout_at(deadline, self.socket.next()).await;
            let Ok(next) = next else {
                return Ok(None);
            };
            match next {
                None | Some(Ok(Message::Close(_))) => return Err(CdpError::Closed),
                Some(Err(error)) => return Err(CdpError::Socket(error.to_string())),
                Some(Ok(Message::Text(text))) => {
                    if let Ok(value) = serde_json::from_str::<Value>(text.as_str()) {
                        return Ok(Some(value));
                    }
                }
                Some(Ok(_)) => {}
            }
        }
    }

    fn queue(&mut self, incoming: &Value) {
        if let Some(event) = as_event(incoming) {
            self.push_event(event);
        }
    }

    fn push_event(&mut self, event: Event) {
        if self.events.len() == MAX_QUEUED_EVENTS {
            self.events.pop_front();
        }
        self.events.push_back(event);
    }
}

fn as_event(incoming: &Value) -> Option<Event> {
    let method = incoming.get("method")?.as_str()?.to_owned();
    Some(Event {
        method,
        session: incoming
            .get("sessionId")
            .and_then(Value::as_str)
            .map(str::to_owned),
    })
}
