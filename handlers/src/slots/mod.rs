//! Slot filling: the model collects named values, and the run ends once enough are set.

mod error;
mod slot;
mod values;

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use adk::{AgentConfig, BoxError, Finish, Handler, History, Message, RunContext};
use adk::{Tool, ToolError, ToolErrorKind, ToolInfo, ToolOutput, ToolRequest};
use serde_json::Value;

pub use self::error::SlotError;
pub use self::slot::{Slot, SlotKind};
pub use self::values::{SlotValue, SlotValues};

type ExitFn = Arc<dyn Fn(&SlotValues) -> bool + Send + Sync>;
type FinishFn = Arc<dyn Fn(&SlotValues) -> Message + Send + Sync>;

/// A handler that has the model fill slots, and ends the run once they are filled.
///
/// For each [`Slot`] the run gets a tool `set_slot_<name>` (added in `before_agent`) whose
/// parameter schema fits the slot: a string, a boolean, a number, or a string `enum` of
/// the allowed values. The loop checks each call's arguments against it, so a value
/// outside a categorical slot's allowed set is a model-visible
/// [`InvalidArguments`](adk::ToolErrorKind::InvalidArguments) error naming every allowed
/// value, and the model can try again (the tool checks the value too, for agents that
/// turn the loop's check off).
///
/// Each accepted call stores the value in the run's state, then checks the *exit
/// condition*: by default, that every slot is set; or the predicate given to
/// [`exit_when`](SlotFilling::exit_when). When it holds, the run completes once the turn's
/// other calls are done, without another model call. Its final message is made by
/// [`finish_with`](SlotFilling::finish_with); by default it lists the slots that are set.
///
/// # The values in the result
///
/// The values are the run's own data: they are kept in its run-local values under
/// [`SlotValues::LOCALS_KEY`] (`"slots"`), which the slot tools update as they are
/// called, so a checkpoint of the run keeps them and the run's result has them: read them with [`SlotValues::from_locals`] on
/// [`AgentResult::locals`](adk::AgentResult::locals). The
/// [`PromptTemplate`](crate::PromptTemplate) handler shows the current values to its
/// template as `slots`.
///
/// # Across runs
///
/// In a conversation on a thread ([`AgentRequest::on_thread`](adk::AgentRequest::on_thread)),
/// where each user message is a run, a run starts from the slots its thread's last
/// completed run left: a run that completes keeps its values in the thread's values
/// ([`RunContext::thread_values`]), under [`SlotValues::LOCALS_KEY`]. A run on no
/// thread starts with no slot set. Either way, a request that carries [`SlotValues`] in
/// its extensions starts from those instead, as in the example below (where the
/// program keeps the conversation itself). A run whose locals already hold slot values,
/// such as a resumed one, starts from those. A run that fails leaves the thread's
/// values as they were.
///
/// # Parallel calls
///
/// Several slots set in one turn are all stored. When the condition first holds after
/// one of them, the final message is made then: with a custom condition, a slot set by a
/// call of the same turn that finishes later is in the result's values but may be missing
/// from that message. Give one handler all the slots of a run: a second one would share
/// its values but replace its rules.
///
/// # Example
///
/// ```
/// use tower_adk::{Agent, AgentRequest, Message};
/// use tower_adk::testing::{ScriptedModel, Turn};
/// use tower_adk::handlers::{Slot, SlotFilling, SlotValue, SlotValues};
/// use serde_json::json;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let model = ScriptedModel::new([
///     // First user message: the model sets the city, then asks.
///     Turn::call("c1", "set_slot_city", json!({"value": "Paris"})),
///     Turn::text("Which room type would you like?"),
///     // Second user message: the last slot is set, and the run ends at once.
///     Turn::call("c2", "set_slot_room", json!({"value": "double"})),
/// ]);
/// let agent = Agent::builder(model.clone()).build()?;
/// let booking = SlotFilling::new([
///     Slot::text("city", "The destination city"),
///     Slot::categorical("room", "The room type", ["single", "double"]),
/// ])?;
///
/// let first = agent.run(AgentRequest::user("A room in Paris").with_handler(booking.clone())).await?;
///
/// let mut history = first.messages.to_vec();
/// history.push(Message::user("A double, please"));
/// let request = AgentRequest::new(history)
///     .with_extension(SlotValues::from_locals(&first.locals)?)
///     .with_handler(booking);
/// let second = agent.run(request).await?;
///
/// assert_eq!(model.requests().len(), 3); // no model call after the last slot was set
/// assert_eq!(second.final_message.content(), "I have everything I need:\n- city: Paris\n- room: double");
/// let slots = SlotValues::from_locals(&second.locals)?;
/// assert_eq!(slots.get("room").and_then(SlotValue::as_str), Some("double"));
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct SlotFilling {
    rules: Arc<Rules>,
    tools: Arc<[Tool]>,
}

/// What the run's store needs to decide when the run ends, and how.
#[derive(Clone)]
struct Rules {
    slots: Arc<[Slot]>,
    exit: Option<ExitFn>,
    finish: Option<FinishFn>,
}

impl SlotFilling {
    /// A handler for these slots, ending the run when all are set.
    ///
    /// # Errors
    ///
    /// A [`SlotError`] when there is no slot, two share a name, a name cannot be part of
    /// a tool name, or a categorical slot has no allowed values.
    pub fn new(slots: impl IntoIterator<Item = Slot>) -> Result<Self, SlotError> {
        let slots: Arc<[Slot]> = slots.into_iter().collect();
        check(&slots)?;
        let tools = slots.iter().cloned().map(slot_tool).collect();
        Ok(SlotFilling {
            rules: Arc::new(Rules {
                slots,
                exit: None,
                finish: None,
            }),
            tools,
        })
    }

    /// Ends the run when `exit` holds for the values set so far (instead of when every
    /// slot is set). It is checked after each slot is set.
    ///
    /// # Example
    ///
    /// ```
    /// use tower_adk::handlers::{Slot, SlotFilling};
    ///
    /// // Enough to book: a city and either breakfast or not; the note is optional.
    /// let booking = SlotFilling::new([
    ///     Slot::text("city", "The destination city"),
    ///     Slot::bool("breakfast", "Whether breakfast is included"),
    ///     Slot::text("note", "Anything else the guest asks for"),
    /// ])?
    /// .exit_when(|slots| slots.is_set("city") && slots.is_set("breakfast"));
    /// # Ok::<_, tower_adk::handlers::SlotError>(())
    /// ```
    pub fn exit_when<F>(mut self, exit: F) -> Self
    where
        F: Fn(&SlotValues) -> bool + Send + Sync + 'static,
    {
        Arc::make_mut(&mut self.rules).exit = Some(Arc::new(exit));
        self
    }

    /// Makes the final message of a run that the exit condition ends from the values set.
    ///
    /// # Example
    ///
    /// ```
    /// use tower_adk::Message;
    /// use tower_adk::handlers::{Slot, SlotFilling};
    ///
    /// let booking = SlotFilling::new([Slot::text("city", "The destination city")])?
    ///     .finish_with(|slots| {
    ///         let city = slots.get("city").map(ToString::to_string).unwrap_or_default();
    ///         Message::assistant(format!("Booking a room in {city}."))
    ///     });
    /// # Ok::<_, tower_adk::handlers::SlotError>(())
    /// ```
    pub fn finish_with<F>(mut self, finish: F) -> Self
    where
        F: Fn(&SlotValues) -> Message + Send + Sync + 'static,
    {
        Arc::make_mut(&mut self.rules).finish = Some(Arc::new(finish));
        self
    }

    /// The slots, in the order they were defined.
    pub fn slots(&self) -> &[Slot] {
        &self.rules.slots
    }
}

impl Rules {
    fn exit_holds(&self, values: &SlotValues) -> bool {
        match &self.exit {
            Some(exit) => exit(values),
            None => self.slots.iter().all(|slot| values.is_set(slot.name())),
        }
    }

    fn final_message(&self, values: &SlotValues) -> Message {
        if let Some(finish) = &self.finish {
            return finish(values);
        }
        let mut text = String::from("I have everything I need:");
        for slot in self.slots.iter() {
            if let Some(value) = values.get(slot.name()) {
                text.push_str(&format!("\n- {}: {value}", slot.name()));
            }
        }
        Message::assistant(text)
    }
}

fn check(slots: &[Slot]) -> Result<(), SlotError> {
    if slots.is_empty() {
        return Err(SlotError::NoSlots);
    }
    let mut names = HashSet::new();
    for slot in slots {
        let name = slot.name();
        let valid = (1..=55).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !valid {
            return Err(SlotError::InvalidName { name: name.into() });
        }
        if !names.insert(name) {
            return Err(SlotError::DuplicateName { name: name.into() });
        }
        if matches!(slot.kind(), SlotKind::Categorical(allowed) if allowed.is_empty()) {
            return Err(SlotError::NoAllowedValues { name: name.into() });
        }
    }
    Ok(())
}

/// The tool that sets `slot`, in whichever run calls it: the run's rules come with the
/// call, in its extensions, and its values are the run's own, in its run-local values.
fn slot_tool(slot: Slot) -> Tool {
    let info =
        ToolInfo::new(slot.tool_name(), slot.tool_description()).parameters(slot.parameters());
    let slot = Arc::new(slot);
    Tool::from_fn(info, move |request: ToolRequest| {
        let slot = Arc::clone(&slot);
        async move {
            let rules = request.extensions().get::<RunRules>().ok_or_else(|| {
                ToolError::new(
                    ToolErrorKind::Failed,
                    "slot filling is not set up in this run",
                )
            })?;
            let value = slot.parse(&request.arguments)?;
            let unreadable = |e: serde_json::Error| {
                ToolError::new(ToolErrorKind::Failed, format!("the slot values: {e}"))
            };
            // The turn's other slot calls share the values: each sees those set before it.
            let mut locals = request.locals();
            let mut values = SlotValues::from_locals(&locals).map_err(unreadable)?;
            let output = rules.0.set(&slot, value, &mut values);
            locals
                .insert(SlotValues::LOCALS_KEY, &values)
                .map_err(unreadable)?;
            Ok::<_, ToolError>(output)
        }
    })
}

/// The rules of the slot-filling handler of a run, for its slot tools. (Configuration,
/// not state: the values are in the run-local values.)
#[derive(Clone)]
struct RunRules(Arc<Rules>);

impl Rules {
    /// Stores one value and tells the model what is left; the output ends the run when
    /// the exit condition holds.
    fn set(&self, slot: &Slot, value: SlotValue, values: &mut SlotValues) -> ToolOutput {
        let shown = match &value {
            SlotValue::Text(text) => Value::from(text.as_str()).to_string(),
            other => other.to_string(),
        };
        let mut text = format!("The slot `{}` is set to {shown}.", slot.name());
        values.insert(slot.name(), value);
        if self.exit_holds(values) {
            let message = self.final_message(values);
            return ToolOutput::new(text).finishing(Finish::With(message));
        }
        let unset: Vec<&str> = self
            .slots
            .iter()
            .map(Slot::name)
            .filter(|name| !values.is_set(name))
            .collect();
        if !unset.is_empty() {
            text.push_str(&format!(" Not set yet: {}.", unset.join(", ")));
        }
        ToolOutput::new(text)
    }
}

impl Handler for SlotFilling {
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed("slot_filling")
    }

    async fn before_agent(
        &self,
        cx: &mut RunContext,
        mut config: AgentConfig,
    ) -> Result<AgentConfig, BoxError> {
        // A resumed run has its values; a new one starts from the request's, if any,
        // else from those its thread's last run left.
        if cx.locals().get_value(SlotValues::LOCALS_KEY).is_none() {
            let values = match cx.extensions().get::<SlotValues>() {
                Some(values) => values.clone(),
                None => SlotValues::from_locals(cx.thread_values())?,
            };
            cx.locals_mut().insert(SlotValues::LOCALS_KEY, &values)?;
        }
        cx.extensions_mut()
            .insert(RunRules(Arc::clone(&self.rules)));
        for tool in self.tools.iter() {
            config.add_tool(tool.clone());
        }
        Ok(config)
    }

    async fn after_agent(&self, cx: &mut RunContext, _: &mut History) -> Result<(), BoxError> {
        // The thread's next run starts from them.
        if let Some(values) = cx.locals().get_value(SlotValues::LOCALS_KEY).cloned() {
            cx.thread_values_mut()
                .insert(SlotValues::LOCALS_KEY, &values)?;
        }
        Ok(())
    }
}

impl fmt::Debug for SlotFilling {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SlotFilling")
            .field("slots", &self.rules.slots)
            .field("custom_exit", &self.rules.exit.is_some())
            .field("custom_finish", &self.rules.finish.is_some())
            .finish()
    }
}
