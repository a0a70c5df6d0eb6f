//! The variables a prompt template is rendered with.

use std::time::SystemTime;

use adk::RunContext;
use jiff::Timestamp;
use jiff::tz::TimeZone;
use minijinja::Value;
use minijinja::value::Serde;

use super::{Resumed, TemplateError};
use crate::slots::SlotValues;

/// Where and when the template is rendered.
pub(super) struct Now<'a> {
    pub(super) at: SystemTime,
    pub(super) timezone: &'a TimeZone,
    pub(super) timezone_name: &'a str,
}

/// The context of one rendering: see the table in the [`PromptTemplate`](super::PromptTemplate) docs.
pub(super) fn context(
    cx: &RunContext,
    description: &str,
    now: Now<'_>,
) -> Result<Value, TemplateError> {
    let zoned = Timestamp::try_from(now.at)
        .map_err(TemplateError::render)?
        .to_zoned(now.timezone.clone());
    let format = |format: &str| zoned.strftime(format).to_string();
    Ok(minijinja::context! {
        description => description,
        slots => slot_values(cx),
        now => format("%Y-%m-%dT%H:%M:%S%:z"),
        date => format("%Y-%m-%d"),
        time => format("%H:%M"),
        weekday => format("%A"),
        timezone => now.timezone_name,
        timezone_abbreviation => format("%Z"),
        utc_offset => format("%:z"),
        resumed => cx.extensions().get::<Resumed>().is_some(),
    })
}

/// The slots of the run as they are now, in its run-local values.
fn slot_values(cx: &RunContext) -> Value {
    match cx.locals().get_value(SlotValues::LOCALS_KEY) {
        Some(values) => Value::from(Serde(values)),
        None => Value::from(Serde(SlotValues::new())),
    }
}
