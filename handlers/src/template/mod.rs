//! Prompt templates: the instruction rendered from a template with the run's variables.

mod error;
mod variables;

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::time::SystemTime;

use adk::{AgentConfig, BoxError, Handler, History, Message, RunContext};
use jiff::tz::TimeZone;
use minijinja::Environment;

pub use self::error::TemplateError;
use self::variables::Now;

/// The name of the one template of a [`PromptTemplate`]'s environment.
const TEMPLATE: &str = "instruction";

/// An instruction handler that renders a [minijinja](https://docs.rs/minijinja) (Jinja2)
/// template with variables from the run, and makes the result the run's instruction.
///
/// | variable | what | e.g. |
/// |----------|------|------|
/// | `description` | the text given to [`description`](PromptTemplate::description) | `You book hotel rooms.` |
/// | `slots` | the slots set so far, by name, when a [`SlotFilling`](crate::SlotFilling) handler runs (or the run's locals hold them); else empty | `{"city": "Paris"}` |
/// | `now` | the current date and time in the [time zone](PromptTemplate::timezone), RFC 3339 | `2026-03-29T03:30:00+02:00` |
/// | `date` | the current date there | `2026-03-29` |
/// | `time` | the current time there, to the minute | `03:30` |
/// | `weekday` | the current day of the week there | `Sunday` |
/// | `timezone` | the time zone's IANA name (default `UTC`) | `Europe/Berlin` |
/// | `timezone_abbreviation` | its abbreviation now | `CEST` |
/// | `utc_offset` | its offset from UTC now | `+02:00` |
/// | `resumed` | whether the run resumes an interrupted one: its extensions hold [`Resumed`] | `false` |
///
/// A template that does not compile and an unknown time zone are errors when the handler
/// is made, before any run. An undefined variable renders as nothing (minijinja's lenient
/// default); a template that fails to render (e.g. an unknown filter) fails the run with
/// a handler error from `before_agent` or `before_model`.
///
/// # Refreshing
///
/// The template is rendered in `before_agent`, and again before each model call, so that
/// the time and the slots are current: when the text changes, the system message it
/// rendered is replaced in the history (later calls see the new one). A system message
/// that a later handler rewrote is left alone. [`refresh(false)`](PromptTemplate::refresh)
/// renders once per run, e.g. to keep a provider's prompt cache warm.
///
/// # Example
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use tower_adk::{Agent, AgentRequest};
/// use tower_adk::testing::{ScriptedModel, Turn};
/// use tower_adk::handlers::PromptTemplate;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let model = ScriptedModel::new([Turn::text("Hello!")]);
/// let agent = Agent::builder(model.clone()).build()?;
/// let prompt = PromptTemplate::new("{{ description }} It is {{ weekday }} {{ date }}, {{ time }} {{ timezone_abbreviation }}.")?
///     .description("You book hotel rooms.")
///     .timezone("Europe/Berlin")?
///     // A fixed clock for the example: 2026-03-29 01:30 UTC, the night Berlin moves to summer time.
///     .clock(|| SystemTime::UNIX_EPOCH + Duration::from_secs(1_774_747_800));
///
/// agent.run(AgentRequest::user("hi").with_handler(prompt)).await?;
///
/// assert_eq!(
///     model.requests()[0].messages[0].content(),
///     "You book hotel rooms. It is Sunday 2026-03-29, 03:30 CEST."
/// );
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct PromptTemplate {
    environment: Arc<Environment<'static>>,
    timezone: TimeZone,
    timezone_name: Arc<str>,
    description: Arc<str>,
    clock: Arc<dyn Fn() -> SystemTime + Send + Sync>,
    refresh: bool,
}

/// Marks a run that resumes an interrupted one: the core's
/// [`Resumed`](adk::interrupt::Resumed), which a resume inserts; a [`PromptTemplate`]
/// renders `resumed` as `true` when the run's extensions hold it. (A caller that
/// continues a conversation some other way may insert it itself.)
pub use adk::interrupt::Resumed;

/// The text a [`PromptTemplate`] last rendered into a run's system message, so that it
/// refreshes only its own.
#[derive(Clone)]
struct Rendered {
    by: usize,
    text: Arc<str>,
}

impl PromptTemplate {
    /// A handler that renders `source`, in UTC, with an empty description.
    ///
    /// # Errors
    ///
    /// [`TemplateError::Compile`] when `source` is not a valid template.
    ///
    /// # Example
    ///
    /// ```
    /// use tower_adk::handlers::{PromptTemplate, TemplateError};
    ///
    /// let error = PromptTemplate::new("{% if resumed %}Welcome back.").unwrap_err();
    /// assert!(matches!(error, TemplateError::Compile { .. }));
    /// ```
    pub fn new(source: impl Into<String>) -> Result<Self, TemplateError> {
        let mut environment = Environment::new();
        environment
            .add_template_owned(TEMPLATE, source.into())
            .map_err(|e| TemplateError::Compile { source: e.into() })?;
        Ok(PromptTemplate {
            environment: Arc::new(environment),
            timezone: TimeZone::UTC,
            timezone_name: Arc::from("UTC"),
            description: Arc::from(""),
            clock: Arc::new(SystemTime::now),
            refresh: true,
        })
    }

    /// Renders the time variables in the IANA time zone `name`, e.g. `Europe/Berlin`.
    /// Jiff's bundled copy of the time zone database is used when the system has none.
    ///
    /// # Errors
    ///
    /// [`TemplateError::InvalidTimezone`] when the database does not know `name`.
    ///
    /// # Example
    ///
    /// ```
    /// use std::time::{Duration, SystemTime};
    /// use tower_adk::RunContext;
    /// use tower_adk::handlers::PromptTemplate;
    ///
    /// let noon_utc = SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_268_800); // 2026-01-01 12:00 UTC
    /// let prompt = PromptTemplate::new("{{ time }} in {{ timezone }}")?
    ///     .timezone("Asia/Tokyo")?
    ///     .clock(move || noon_utc);
    /// assert_eq!(prompt.render(&RunContext::default())?, "21:00 in Asia/Tokyo");
    /// assert!(PromptTemplate::new("{{ time }}")?.timezone("Asia/Nowhere").is_err());
    /// # Ok::<_, tower_adk::handlers::TemplateError>(())
    /// ```
    pub fn timezone(mut self, name: &str) -> Result<Self, TemplateError> {
        self.timezone = TimeZone::get(name).map_err(|e| TemplateError::InvalidTimezone {
            name: name.to_owned(),
            source: e.into(),
        })?;
        self.timezone_name = Arc::from(name);
        Ok(self)
    }

    /// The text of the `description` variable.
    pub fn description(mut self, description: impl Into<Arc<str>>) -> Self {
        self.description = description.into();
        self
    }

    /// Reads the current time from `now` instead of the system clock, e.g. a fixed
    /// instant in tests.
    pub fn clock<F>(mut self, now: F) -> Self
    where
        F: Fn() -> SystemTime + Send + Sync + 'static,
    {
        self.clock = Arc::new(now);
        self
    }

    /// Renders again before each model call (the default), or once per run; see
    /// [Refreshing](PromptTemplate#refreshing).
    pub fn refresh(mut self, on: bool) -> Self {
        self.refresh = on;
        self
    }

    /// Renders the template for the run of `cx`, as the handler does.
    ///
    /// # Errors
    ///
    /// [`TemplateError::Render`] when rendering fails.
    ///
    /// # Example
    ///
    /// ```
    /// use tower_adk::RunContext;
    /// use tower_adk::handlers::{PromptTemplate, Resumed};
    ///
    /// let prompt = PromptTemplate::new("{% if resumed %}Welcome back.{% else %}Hello.{% endif %}")?;
    /// let mut extensions = http::Extensions::new();
    /// extensions.insert(Resumed);
    /// assert_eq!(prompt.render(&RunContext::new(extensions))?, "Welcome back.");
    /// assert_eq!(prompt.render(&RunContext::default())?, "Hello.");
    /// # Ok::<_, tower_adk::handlers::TemplateError>(())
    /// ```
    pub fn render(&self, cx: &RunContext) -> Result<String, TemplateError> {
        let now = Now {
            at: (self.clock)(),
            timezone: &self.timezone,
            timezone_name: &self.timezone_name,
        };
        let context = variables::context(cx, &self.description, now)?;
        self.environment
            .get_template(TEMPLATE)
            .and_then(|template| template.render(context))
            .map_err(TemplateError::render)
    }

    /// Tells this handler's renderings apart from another's in the same run.
    fn id(&self) -> usize {
        Arc::as_ptr(&self.environment).cast::<()>() as usize
    }
}

impl Handler for PromptTemplate {
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed("prompt_template")
    }

    async fn before_agent(
        &self,
        cx: &mut RunContext,
        mut config: AgentConfig,
    ) -> Result<AgentConfig, BoxError> {
        let text: Arc<str> = Arc::from(self.render(cx)?);
        config.set_instruction(Arc::clone(&text));
        if self.refresh {
            cx.extensions_mut().insert(Rendered {
                by: self.id(),
                text,
            });
        }
        Ok(config)
    }

    async fn before_model(
        &self,
        cx: &mut RunContext,
        history: &mut History,
    ) -> Result<(), BoxError> {
        let Some(last) = cx
            .extensions()
            .get::<Rendered>()
            .filter(|r| r.by == self.id())
        else {
            return Ok(());
        };
        let ours = matches!(
            history.messages.first(),
            Some(message @ Message::System { .. }) if message.content() == &*last.text
        );
        if !ours {
            return Ok(());
        }
        let text = self.render(cx)?;
        if text == *last.text {
            return Ok(());
        }
        let text: Arc<str> = Arc::from(text);
        if let Some(first) = history.messages.to_mut().first_mut() {
            *first = Message::system(&*text);
        }
        cx.extensions_mut().insert(Rendered {
            by: self.id(),
            text,
        });
        Ok(())
    }
}

impl fmt::Debug for PromptTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PromptTemplate")
            .field("timezone", &self.timezone_name)
            .field("description", &self.description)
            .field("refresh", &self.refresh)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for Rendered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rendered")
            .field("text", &self.text)
            .finish_non_exhaustive()
    }
}
