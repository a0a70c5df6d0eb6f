//! [`AppState`]: what every route of a server shares.

use std::collections::BTreeMap;
use std::ops::Deref;
use std::sync::Arc;

use super::ServedAgent;
use super::error::ApiError;
use super::identity::DynIdentify;
use super::limit::{Limits, PrincipalRate, RunSlots};
use super::log::RunLogs;
use super::served_run::ServedRun;
use super::shutdown::Shutdown;
use crate::agent::{Agent, AgentRequest};

/// What every handler of a server shares.
#[derive(Clone)]
pub(crate) struct AppState(Arc<Shared>);

pub(crate) struct Shared {
    pub(crate) agents: BTreeMap<String, ServedAgent>,
    pub(crate) identify: Arc<dyn DynIdentify>,
    pub(crate) logs: RunLogs,
    pub(crate) shutdown: Shutdown,
    /// When the router was made, in seconds since the Unix epoch (the models' `created`).
    pub(crate) created: u64,
    /// Whether `GET /` serves the chat page.
    pub(crate) page: bool,
    pub(crate) limits: Limits,
    /// The rate of each principal's requests, when it is limited.
    pub(crate) rate: Option<Arc<PrincipalRate>>,
    /// The runs of each principal in flight, when they are limited.
    pub(crate) runs: Option<Arc<RunSlots>>,
    /// What `GET /metrics` serves, when it is on.
    #[cfg(feature = "prometheus")]
    pub(crate) metrics: Option<super::PrometheusMetrics>,
    /// The A2A routes' configuration and tasks, when they are on.
    #[cfg(feature = "a2a")]
    pub(crate) a2a: Option<super::a2a::face::Face>,
}

impl AppState {
    pub(crate) fn new(shared: Shared) -> Self {
        AppState(Arc::new(shared))
    }

    /// The agent of this name, or 404 `unknown_agent`.
    pub(crate) fn served(&self, name: &str) -> Result<&ServedAgent, ApiError> {
        let served = self.agents.get(name);
        served.ok_or_else(|| ApiError::not_found("unknown_agent", format!("no agent `{name}`")))
    }

    /// The agent of this name itself, without its layers, or 404 `unknown_agent`.
    pub(crate) fn agent(&self, name: &str) -> Result<&Agent, ApiError> {
        Ok(&self.served(name)?.agent)
    }

    /// Starts a run of `served`, unless the server is shutting down (503
    /// `shutting_down`) or the caller has its most runs in flight (429 `too_many_runs`):
    /// counted in flight, and holding its caller's slot, until it is dropped.
    pub(crate) async fn start(
        &self,
        served: &ServedAgent,
        request: AgentRequest,
    ) -> Result<ServedRun, ApiError> {
        let admitted = self.shutdown.admit()?;
        let slots = self.runs.as_ref();
        let slot = slots.map(|s| s.take(request.principal())).transpose()?;
        let run = served.call(request).await?;
        Ok(ServedRun::new(run, admitted, slot))
    }
}

impl Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}
