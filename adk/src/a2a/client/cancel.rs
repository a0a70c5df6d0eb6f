//! [`CancelOnDrop`]: a call's remote task canceled when the call is dropped before the
//! task ended, so the agent does not go on working for nobody.

use super::remote::RemoteAgent;

/// Sends `CancelTask` for the task it is armed with when dropped, from a task of its
/// own bounded by the agent's cancel timeout (a destructor cannot wait); disarmed once
/// the task ended or waits for input.
#[derive(Debug)]
pub(crate) struct CancelOnDrop {
    agent: RemoteAgent,
    task_id: Option<String>,
}

impl CancelOnDrop {
    pub(crate) fn new(agent: RemoteAgent) -> Self {
        CancelOnDrop {
            agent,
            task_id: None,
        }
    }

    /// The task to cancel if the call is dropped.
    pub(crate) fn arm(&mut self, task_id: &str) {
        if self.task_id.as_deref() != Some(task_id) {
            self.task_id = Some(task_id.to_owned());
        }
    }

    /// Nothing to cancel: the task ended, or waits.
    pub(crate) fn disarm(&mut self) {
        self.task_id = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(task_id) = self.task_id.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let agent = self.agent.clone();
        // `cancel_task` waits at most the agent's cancel timeout; what it answers (the
        // task canceled, or already over) changes nothing here.
        runtime.spawn(async move {
            let _ = agent.cancel_task(task_id).await;
        });
    }
}
