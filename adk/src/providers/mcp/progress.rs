//! The client side of a connection: routes the server's progress notifications to the
//! calls that wait for them.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::ClientHandler;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{NotificationContext, RoleClient};
use tokio::sync::mpsc;

use super::content::progress_chunk;

/// How many notifications a listening call may have waiting; more are dropped (progress
/// is advisory, and the next one says more).
const LISTENER_CAPACITY: usize = 64;

/// How long a call waits, after its answer, for progress the server announced but whose
/// notification has not arrived: rmcp hands each notification to a task of its own, so the
/// last ones can arrive just after the answer.
const LATE_PROGRESS_GRACE: Duration = Duration::from_millis(100);

/// How many notifications for calls that do not listen (yet) are kept. The client learns a
/// call's progress token only once the request is on its way, so a fast server's first
/// notification can arrive before the call listens; it waits here.
const UNCLAIMED_CAPACITY: usize = 64;

/// Progress notifications, routed by token. Shared by every connection to one server.
#[derive(Clone, Default)]
pub(crate) struct ProgressRouter {
    state: Arc<Mutex<State>>,
}

#[derive(Default)]
struct State {
    listeners: HashMap<ProgressToken, mpsc::Sender<ProgressNotificationParam>>,
    unclaimed: VecDeque<ProgressNotificationParam>,
}

impl ProgressRouter {
    /// Starts listening for `token`'s notifications, including any that came early. The
    /// listener stops when the receiver is dropped.
    pub(crate) fn listen(&self, token: &ProgressToken) -> Listener {
        let (sender, receiver) = mpsc::channel(LISTENER_CAPACITY);
        let mut state = self.lock();
        let early = std::mem::take(&mut state.unclaimed);
        for param in early {
            if &param.progress_token == token {
                let _ = sender.try_send(param);
            } else {
                state.unclaimed.push_back(param);
            }
        }
        state.listeners.insert(token.clone(), sender);
        Listener {
            token: token.clone(),
            receiver,
            router: self.clone(),
        }
    }

    fn deliver(&self, param: ProgressNotificationParam) {
        let mut state = self.lock();
        match state.listeners.get(&param.progress_token) {
            Some(sender) => {
                let _ = sender.try_send(param);
            }
            None => {
                if state.unclaimed.len() == UNCLAIMED_CAPACITY {
                    state.unclaimed.pop_front();
                }
                state.unclaimed.push_back(param);
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // The lock is never held across an await or user code; a panic under it cannot
        // leave the maps inconsistent, so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The notifications of one call, until dropped.
pub(crate) struct Listener {
    token: ProgressToken,
    receiver: mpsc::Receiver<ProgressNotificationParam>,
    router: ProgressRouter,
}

impl Listener {
    pub(crate) async fn recv(&mut self) -> Option<ProgressNotificationParam> {
        self.receiver.recv().await
    }

    /// A notification that has already arrived, without waiting.
    pub(crate) fn try_recv(&mut self) -> Option<ProgressNotificationParam> {
        self.receiver.try_recv().ok()
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        let removed = self.router.lock().listeners.remove(&self.token);
        drop(removed);
    }
}

/// One call's progress, as stream chunks.
///
/// Notifications are handled concurrently, so one may overtake another: only progress
/// that moves forward becomes a chunk.
pub(crate) struct CallProgress {
    listener: Listener,
    last: f64,
    total: Option<f64>,
    /// Until when [`late`](CallProgress::late) waits; set on its first call.
    late_until: Option<tokio::time::Instant>,
}

impl CallProgress {
    pub(crate) fn new(listener: Listener) -> Self {
        CallProgress {
            listener,
            last: f64::NEG_INFINITY,
            total: None,
            late_until: None,
        }
    }

    /// The next chunk; pending until a notification moves the progress forward.
    pub(crate) async fn next(&mut self) -> Option<String> {
        loop {
            let param = self.listener.recv().await?;
            if let Some(chunk) = self.chunk(&param) {
                return Some(chunk);
            }
        }
    }

    /// After the call's answer: the chunks of notifications that have arrived, and of
    /// those still expected (the progress is short of the total the server gave), waiting
    /// for them at most [`LATE_PROGRESS_GRACE`] in all.
    pub(crate) async fn late(&mut self) -> Option<String> {
        let deadline = *self
            .late_until
            .get_or_insert_with(|| tokio::time::Instant::now() + LATE_PROGRESS_GRACE);
        loop {
            let param = match self.listener.try_recv() {
                Some(param) => param,
                None if self.total.is_some_and(|total| self.last < total) => {
                    tokio::time::timeout_at(deadline, self.listener.recv())
                        .await
                        .ok()
                        .flatten()?
                }
                None => return None,
            };
            if let Some(chunk) = self.chunk(&param) {
                return Some(chunk);
            }
        }
    }

    fn chunk(&mut self, param: &ProgressNotificationParam) -> Option<String> {
        if param.progress > self.last {
            self.last = param.progress;
            self.total = param.total;
            Some(progress_chunk(param))
        } else {
            None
        }
    }
}

/// The MCP client's handler: identifies the client and takes progress notifications;
/// everything else keeps rmcp's defaults (sampling and elicitation are declined).
#[derive(Clone)]
pub(crate) struct Client {
    pub(crate) progress: ProgressRouter,
    config: ClientConfig,
}

impl Client {
    pub(crate) fn new(progress: ProgressRouter) -> Self {
        let config = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("tower-adk", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE);
        Client { progress, config }
    }
}

impl ClientHandler for Client {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.deliver(params);
    }

    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::NumberOrString;

    use super::*;

    fn param(token: i64, progress: f64) -> ProgressNotificationParam {
        ProgressNotificationParam::new(ProgressToken(NumberOrString::Number(token)), progress)
    }

    #[tokio::test]
    async fn a_listener_gets_its_early_notifications_and_later_ones() {
        let router = ProgressRouter::default();
        router.deliver(param(1, 1.0));
        router.deliver(param(2, 1.0));
        let mut listener = router.listen(&ProgressToken(NumberOrString::Number(1)));
        router.deliver(param(1, 2.0));
        assert_eq!(listener.recv().await.map(|p| p.progress), Some(1.0));
        assert_eq!(listener.recv().await.map(|p| p.progress), Some(2.0));
        assert!(listener.try_recv().is_none());
        // The other token's notification stays unclaimed.
        assert_eq!(router.lock().unclaimed.len(), 1);
    }

    #[tokio::test]
    async fn after_the_answer_announced_progress_is_awaited_briefly_and_backward_progress_dropped()
    {
        let router = ProgressRouter::default();
        let token = ProgressToken(NumberOrString::Number(7));
        let mut progress = CallProgress::new(router.listen(&token));
        router.deliver(param(7, 1.0).with_total(3.0));
        router.deliver(param(7, 1.0).with_total(3.0));
        assert_eq!(progress.next().await.as_deref(), Some("progress 1/3\n"));

        // 2 and 3 of 3 are still to come when the answer arrives; 2 is late, 3 never comes.
        let late = router.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            late.deliver(param(7, 2.0).with_total(3.0));
        });
        let started = std::time::Instant::now();
        assert_eq!(progress.late().await.as_deref(), Some("progress 2/3\n"));
        assert_eq!(progress.late().await, None);
        let waited = started.elapsed();
        assert!(
            waited >= LATE_PROGRESS_GRACE && waited < LATE_PROGRESS_GRACE * 3,
            "{waited:?}"
        );
    }

    #[tokio::test]
    async fn after_the_answer_complete_progress_is_not_awaited() {
        let router = ProgressRouter::default();
        let token = ProgressToken(NumberOrString::Number(8));
        let mut progress = CallProgress::new(router.listen(&token));
        router.deliver(param(8, 2.0).with_total(2.0));
        assert_eq!(progress.late().await.as_deref(), Some("progress 2/2\n"));
        let started = std::time::Instant::now();
        assert_eq!(progress.late().await, None);
        assert!(started.elapsed() < LATE_PROGRESS_GRACE / 2);
    }

    #[test]
    fn unclaimed_notifications_are_bounded_and_dropped_listeners_unregister() {
        let router = ProgressRouter::default();
        for i in 0..(UNCLAIMED_CAPACITY as i64 * 2) {
            router.deliver(param(i, 1.0));
        }
        assert_eq!(router.lock().unclaimed.len(), UNCLAIMED_CAPACITY);
        let listener = router.listen(&ProgressToken(NumberOrString::Number(-1)));
        assert_eq!(router.lock().listeners.len(), 1);
        drop(listener);
        assert!(router.lock().listeners.is_empty());
    }
}
