//! The whole tool pipeline in one handler, in a fixed order.

use std::borrow::Cow;
use std::fmt;

use adk::{BoxError, Handler, ToolOutput, ToolRequest, ToolStream};
use adk::{ToolCallNext, ToolResponse};

use crate::{
    AllowAll, MapArguments, MapOutput, OutputLimit, Policy, PolicyGate, UntrustedEnvelope,
};

/// A handler that runs a tool call through a policy, argument transforms, output
/// transforms, an output limit and an untrusted-data envelope, in an order that holds by
/// construction.
///
/// Each stage is one of the standalone handlers of this crate ([`PolicyGate`],
/// [`MapArguments`], [`MapOutput`], [`OutputLimit`], [`UntrustedEnvelope`]); every stage
/// is optional, and a guard with none passes calls through.
///
/// # Order
///
/// Register the guard first (outermost), e.g. in the agent's first
/// [`HandlerLayer`](adk::HandlerLayer), so that every other tool wrapper runs inside it.
/// Then each call, invoked or streamed, goes:
///
/// ```text
/// validate      the core checks the model's arguments against the tool's schema,
///               before any handler (an invalid call stops here), unless the agent
///               was built with `validate_arguments(false)`
/// policy        the gate allows, denies, rewrites (re-validated) or asks (the approver,
///               or a person: the run is interrupted)
/// pre           the argument transforms, in the order added, then one re-validation each
/// wrappers      the other tool wrappers of the run, in their own order
/// tool          the tool
/// post          the output transforms, in the order added, after every wrapper
/// limit         the output limit, on the transformed output
/// envelope      the envelope, last, so nothing changes the output once wrapped
/// ```
///
/// A stage that refuses the call (a denial, invalid rewritten arguments) answers the model
/// with a tool error, and no later stage, wrapper or tool runs.
///
/// On a streamed call, a whole-text [`map_output`](crate::map_output) reads the tool's
/// stream to its end before the limit sees it, so the limit can then no longer stop the
/// tool early; [`map_output_chunks`](crate::map_output_chunks) keeps the stream lazy.
///
/// # Example
///
/// ```
/// use tower_adk::{Agent, AgentRequest, HandlerLayer};
/// use tower_adk::testing::{echo_tool, ScriptedModel, Turn};
/// use tower_adk::handlers::{Decision, ToolGuard};
/// use serde_json::json;
/// use tower::{ServiceBuilder, ServiceExt};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let model = ScriptedModel::new([
///     Turn::calls([
///         tower_adk::ToolCall::new("c1", "search", json!({"q": "tea"})),
///         tower_adk::ToolCall::new("c2", "delete", json!({})),
///     ]),
///     Turn::text("ok"),
/// ]);
/// let agent = Agent::builder(model)
///     .tools([echo_tool("search"), echo_tool("delete")])
///     .build()?;
///
/// let guard = ToolGuard::new()
///     .policy(tower_adk::handlers::policy(|call| match call.name.as_str() {
///         "delete" => Decision::deny("read-only session"),
///         _ => Decision::Allow,
///     }))
///     .pre(tower_adk::handlers::map_arguments(|call| {
///         if let Some(arguments) = call.arguments.as_object_mut() {
///             arguments.insert("safe".into(), json!(true));
///         }
///     }))
///     .post(tower_adk::handlers::map_output(|text| text.to_uppercase()))
///     .limit(tower_adk::handlers::max_output_chars(14))
///     .envelope(tower_adk::handlers::untrusted_envelope().note(""));
/// let agent = ServiceBuilder::new().layer(HandlerLayer::new(guard)).service(agent);
///
/// let result = agent.oneshot(AgentRequest::user("go")).await?.await?;
/// assert_eq!(
///     result.tool_records[0].content,
///     "<tool_output untrusted=\"true\">\n{\"Q\":\"TEA\",\"SA…[truncated: 9 more chars]\n</tool_output>",
/// );
/// assert_eq!(result.tool_records[1].content, "error (denied): read-only session");
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct ToolGuard<P = AllowAll> {
    gate: PolicyGate<P>,
    pre: Vec<MapArguments>,
    post: Vec<MapOutput>,
    limit: Option<OutputLimit>,
    envelope: Option<UntrustedEnvelope>,
}

/// A [`ToolGuard`] with no stages yet, allowing every call.
///
/// # Example
///
/// ```
/// let guard = tower_adk::handlers::tool_guard().limit(tower_adk::handlers::max_output_bytes(8192));
/// # let _ = guard;
/// ```
pub fn tool_guard() -> ToolGuard {
    ToolGuard::new()
}

impl ToolGuard {
    /// A guard with no stages yet, allowing every call.
    ///
    /// # Example
    ///
    /// ```
    /// use tower_adk::handlers::{Decision, ToolGuard};
    ///
    /// let guard = ToolGuard::new()
    ///     .policy(tower_adk::handlers::policy(|_| Decision::ask("check first")))
    ///     .envelope(tower_adk::handlers::untrusted_envelope());
    /// # let _ = guard;
    /// ```
    pub fn new() -> Self {
        ToolGuard {
            gate: PolicyGate::new(AllowAll),
            pre: Vec::new(),
            post: Vec::new(),
            limit: None,
            envelope: None,
        }
    }
}

impl Default for ToolGuard {
    fn default() -> Self {
        ToolGuard::new()
    }
}

impl<P: Policy> ToolGuard<P> {
    /// Sets the policy stage (replacing the previous one), with its approver if any.
    pub fn policy<Q: Policy>(self, gate: PolicyGate<Q>) -> ToolGuard<Q> {
        ToolGuard {
            gate,
            pre: self.pre,
            post: self.post,
            limit: self.limit,
            envelope: self.envelope,
        }
    }

    /// Adds an argument transform; transforms run in the order added.
    pub fn pre(mut self, transform: MapArguments) -> Self {
        self.pre.push(transform);
        self
    }

    /// Adds an output transform; transforms run in the order added.
    pub fn post(mut self, transform: MapOutput) -> Self {
        self.post.push(transform);
        self
    }

    /// Sets the output limit (replacing the previous one).
    pub fn limit(mut self, limit: OutputLimit) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Sets the untrusted-data envelope (replacing the previous one).
    pub fn envelope(mut self, envelope: UntrustedEnvelope) -> Self {
        self.envelope = Some(envelope);
        self
    }

    /// Policy, then argument transforms: the request to run, or the model's answer.
    async fn before_tool(&self, request: ToolRequest) -> Result<ToolRequest, BoxError> {
        let mut request = self.gate.admit(request).await?;
        for transform in &self.pre {
            transform.apply(&mut request)?;
        }
        Ok(request)
    }

    fn after_invoke(&self, output: ToolOutput) -> ToolOutput {
        let output = self.post.iter().fold(output, |o, t| t.output(o));
        let output = match &self.limit {
            Some(limit) => limit.output(output),
            None => output,
        };
        match &self.envelope {
            Some(envelope) => envelope.output(output),
            None => output,
        }
    }

    fn after_stream(&self, chunks: ToolStream) -> ToolStream {
        let chunks = self.post.iter().fold(chunks, |s, t| t.stream(s));
        let chunks = match &self.limit {
            Some(limit) => limit.stream(chunks),
            None => chunks,
        };
        match &self.envelope {
            Some(envelope) => envelope.stream(chunks),
            None => chunks,
        }
    }
}

impl<P: Policy> Handler for ToolGuard<P> {
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed("tool_guard")
    }

    async fn wrap_tool(
        &self,
        request: ToolRequest,
        next: ToolCallNext,
    ) -> Result<ToolResponse, BoxError> {
        let request = self.before_tool(request).await?;
        Ok(match next.run(request).await? {
            ToolResponse::Output(output) => ToolResponse::Output(self.after_invoke(output)),
            ToolResponse::Stream(chunks) => ToolResponse::Stream(self.after_stream(chunks)),
        })
    }
}

impl<P> fmt::Debug for ToolGuard<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolGuard")
            .field("policy", &self.gate)
            .field("pre", &self.pre)
            .field("post", &self.post)
            .field("limit", &self.limit)
            .field("envelope", &self.envelope)
            .finish()
    }
}
