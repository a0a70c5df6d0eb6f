//! [`ModelError`]: the model service failed, as the wrappers around a model call see it.

use tower::BoxError;

/// The model service failed. Wrappers around a model call see the model's errors in this
/// type (and pass them on unchanged); the model's own error is its `source()`.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ModelError(#[source] BoxError);

impl ModelError {
    /// Wraps a model's error.
    pub fn new(error: impl Into<BoxError>) -> Self {
        ModelError(error.into())
    }

    /// The model's own error.
    pub fn into_inner(self) -> BoxError {
        self.0
    }

    /// The model's own error, by reference.
    pub fn get_ref(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        &*self.0
    }
}
