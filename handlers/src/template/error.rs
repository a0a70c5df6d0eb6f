//! Why a prompt template cannot be made or rendered.

use adk::BoxError;

/// A [`PromptTemplate`](crate::PromptTemplate) that cannot be made, or that failed to
/// render.
///
/// # Example
///
/// ```
/// use tower_adk::handlers::{PromptTemplate, TemplateError};
///
/// let error = PromptTemplate::new("Hi")?.timezone("Mars/Olympus_Mons").unwrap_err();
/// assert!(matches!(error, TemplateError::InvalidTimezone { ref name, .. } if name == "Mars/Olympus_Mons"));
/// # Ok::<_, TemplateError>(())
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TemplateError {
    /// The template's syntax is wrong.
    #[error("the template does not compile: {source}")]
    Compile {
        /// The template engine's error, with the line.
        #[source]
        source: BoxError,
    },
    /// The name is not a time zone of the IANA database.
    #[error("`{name}` is not a known IANA time zone: {source}")]
    InvalidTimezone {
        /// The name given.
        name: String,
        /// Why the time zone database rejected it.
        #[source]
        source: BoxError,
    },
    /// Rendering failed, e.g. an unknown filter or a clock outside the supported range.
    #[error("the template failed to render: {source}")]
    Render {
        /// What failed.
        #[source]
        source: BoxError,
    },
}

impl TemplateError {
    pub(super) fn render(source: impl Into<BoxError>) -> Self {
        TemplateError::Render {
            source: source.into(),
        }
    }
}
