//! What a run shares across tasks: [`RunShared`], one cell per run that its caller, its
//! loop and its calls (which may be polled on other tasks) all point at. Not public: the
//! calls reach it through the seams' own traits, [`RunLink`] (a request's run-local
//! values and run id) and [`CallModel`] (the end of the model seam).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use crate::checkpoint::CheckpointId;
use crate::context::{Locals, RunLink};
use crate::model::{CallModel, ModelFuture, ModelRequest, SharedModel};

/// What a run shares with whoever reads it and with its calls, which may be polled on
/// other tasks: whether its events are read, the model and how many times it was called,
/// and the run-local values while a call is in flight. One allocation per run, and a
/// pointer in every call's request.
#[derive(Debug, Clone)]
pub(crate) struct RunShared(Arc<Shared>);

#[derive(Debug)]
struct Shared {
    unread: AtomicBool,
    model: SharedModel,
    model_calls: AtomicUsize,
    /// The run-local values, while they are lent to the calls in flight.
    locals: Mutex<Locals>,
    /// The run's id: made when first needed (a checkpoint, an idempotency key), or set
    /// from the checkpoint a resumed run comes from.
    run_id: OnceLock<Arc<str>>,
    /// The write that frees the thread of a run dropped while it held it, and the
    /// checkpoint it leaves (see [`AgentRun::cancel`](crate::AgentRun::cancel)).
    released: Mutex<Option<Released>>,
}

/// The task writing a dropped run's last checkpoint.
pub(crate) type Released = tokio::task::JoinHandle<Option<CheckpointId>>;

impl RunShared {
    /// A run of this model.
    pub(crate) fn new(model: SharedModel) -> Self {
        RunShared(Arc::new(Shared {
            unread: AtomicBool::new(false),
            model,
            model_calls: AtomicUsize::new(0),
            locals: Mutex::default(),
            run_id: OnceLock::new(),
            released: Mutex::default(),
        }))
    }

    /// The run as its calls reach it: their run-local values and its id.
    pub(crate) fn link(&self) -> Arc<dyn RunLink> {
        Arc::clone(&self.0) as Arc<dyn RunLink>
    }

    /// The end of the run's model seam: the model, counting its calls.
    pub(crate) fn model(&self) -> Arc<dyn CallModel> {
        Arc::clone(&self.0) as Arc<dyn CallModel>
    }

    /// Whether the events are read. Awaiting a run for its result says no one does from
    /// then on, and the run stops building them (only `Completed` is still sent): text
    /// deltas, messages, call and chunk events cost copies of their text.
    pub(crate) fn listening(&self) -> bool {
        !self.0.unread.load(Ordering::Relaxed)
    }

    /// No one reads the events from now on.
    pub(crate) fn leave(&self) {
        self.0.unread.store(true, Ordering::Relaxed);
    }

    /// Lends the run-local values to the calls about to run, or takes them back when
    /// they are done: the run's and the lent values change places. (A swap, not a move:
    /// neither side drops an empty map, which costs more than the swap.)
    pub(crate) fn swap_locals(&self, run: &mut Locals) {
        std::mem::swap(run, &mut *self.locals());
    }

    /// The lent run-local values.
    fn locals(&self) -> MutexGuard<'_, Locals> {
        self.0.locals()
    }

    /// The run's id, made now if it has none yet.
    pub(crate) fn run_id(&self) -> Arc<str> {
        self.0.run_id()
    }

    /// Gives the run the id of the run it takes up; says whether it had none yet.
    pub(crate) fn set_run_id(&self, id: Arc<str>) -> bool {
        self.0.run_id.set(id).is_ok()
    }

    /// Keeps the write that frees a dropped run's thread, for whoever cancelled it.
    pub(crate) fn set_released(&self, write: Released) {
        *self
            .0
            .released
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(write);
    }

    /// The write that frees a dropped run's thread, if the run held one.
    pub(crate) fn take_released(&self) -> Option<Released> {
        let mut released = self
            .0
            .released
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        released.take()
    }

    /// How many times the model service was called.
    pub(crate) fn model_calls(&self) -> usize {
        self.0.model_calls.load(Ordering::Relaxed)
    }
}

impl RunLink for Shared {
    /// The lent run-local values. (A call that panicked holding them poisons nothing:
    /// the values are plain data, valid whatever the panic interrupted.)
    fn locals(&self) -> MutexGuard<'_, Locals> {
        self.locals.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn run_id(&self) -> Arc<str> {
        let id = self
            .run_id
            .get_or_init(|| uuid::Uuid::new_v4().simple().to_string().into());
        Arc::clone(id)
    }
}

impl CallModel for Shared {
    fn call_model(&self, request: ModelRequest) -> ModelFuture {
        self.model_calls.fetch_add(1, Ordering::Relaxed);
        self.model.call(request)
    }
}
