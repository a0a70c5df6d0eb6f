//! [`Role`]: the caller's role, which the file's `role_filter` reads.

use std::sync::Arc;

/// The caller's role, in a request's extensions, for the file's `role_filter`.
///
/// # Example
///
/// ```
/// use tower_adk::AgentRequest;
/// use tower_adk::file::Role;
///
/// let request = AgentRequest::user("refund order 7").with_extension(Role::new("admin"));
/// # let _ = request;
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Role(Arc<str>);

impl Role {
    /// The role named `name`.
    pub fn new(name: impl AsRef<str>) -> Self {
        Role(Arc::from(name.as_ref()))
    }

    /// The role's name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}
