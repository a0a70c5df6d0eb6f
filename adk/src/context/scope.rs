//! [`Scope`]: what the calls of a run carry from it (its extensions, and a link to the
//! run for its run-local values and its id), in every model and tool request.

use std::fmt;
use std::sync::{Arc, MutexGuard};

use super::locals::{Guarded, Locals, LocalsGuard};

/// What a call reaches of the run it belongs to: the run-local values the run lends to
/// the calls in flight, and the run's id. The loop's per-run cell implements it
/// (`agent::shared`), so a request points at its run without knowing the loop.
pub(crate) trait RunLink: Send + Sync + fmt::Debug {
    /// The lent run-local values, locked.
    fn locals(&self) -> MutexGuard<'_, Locals>;

    /// The run's id, made now if it has none yet.
    fn run_id(&self) -> Arc<str>;
}

/// What the calls of a run carry from it: its extensions, and its run-local values,
/// which the run lends to the calls in flight (the model call and its wrappers, or a
/// turn's tool calls and theirs) and takes back when they are done.
#[derive(Clone, Debug, Default)]
pub(crate) struct Scope {
    pub(crate) extensions: Arc<http::Extensions>,
    /// `None` for a request made outside a run.
    run: Option<Arc<dyn RunLink>>,
}

impl Scope {
    pub(crate) fn new(extensions: Arc<http::Extensions>, run: Arc<dyn RunLink>) -> Self {
        Scope {
            extensions,
            run: Some(run),
        }
    }

    pub(crate) fn extensions_mut(&mut self) -> &mut http::Extensions {
        Arc::make_mut(&mut self.extensions)
    }

    /// The id of the run, if the request comes from one.
    pub(crate) fn run_id(&self) -> Option<Arc<str>> {
        self.run.as_ref().map(|run| run.run_id())
    }

    pub(crate) fn locals(&self) -> LocalsGuard<'_> {
        LocalsGuard(match &self.run {
            Some(run) => Guarded::Run(run.locals()),
            None => Guarded::Alone(Locals::default()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn _obj_safe(_: Box<dyn RunLink>) {}
}
