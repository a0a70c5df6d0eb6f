//! `before_agent` hooks rewrite the instruction in registration order.

use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentConfig, AgentRequest, BoxError, Handler, Message, RunContext};

use crate::support::Log;

/// Appends a sentence to the instruction, logging the instruction it was given.
struct Append {
    sentence: &'static str,
    seen: Log,
}

impl Handler for Append {
    async fn before_agent(
        &self,
        _: &mut RunContext,
        mut config: AgentConfig,
    ) -> Result<AgentConfig, BoxError> {
        self.seen.push(config.instruction());
        let instruction = format!("{} {}", config.instruction(), self.sentence);
        config.set_instruction(instruction);
        Ok(config)
    }
}

#[tokio::test]
async fn instruction_rewritten_by_three_handlers_in_order() {
    let model = ScriptedModel::new([Turn::text("Bonjour."), Turn::text("Hello.")]);
    let agent = Agent::builder(model.clone())
        .instruction("You are the agent's default self.")
        .build()
        .unwrap();
    let seen = Log::default();
    let seen_by_closure = seen.clone();

    let request = AgentRequest::user("hi")
        .with_handler(tower_adk::handlers::instruction("You are a helper."))
        .with_handler(tower_adk::handlers::instruction_fn(move |_, current| {
            seen_by_closure.push(current);
            format!("{current} Answer in French.")
        }))
        .with_handler(Append {
            sentence: "Be brief.",
            seen: seen.clone(),
        });
    agent.run(request).await.unwrap();

    // Each handler got what the previous one returned.
    assert_eq!(
        seen.entries(),
        ["You are a helper.", "You are a helper. Answer in French."]
    );
    let messages = &model.requests()[0].messages;
    assert_eq!(
        messages[0],
        Message::system("You are a helper. Answer in French. Be brief.")
    );
    assert_eq!(messages[1], Message::user("hi"));
    assert_eq!(messages.len(), 2, "one system message, then the input");

    // The rewrite was for that run only.
    agent.run(AgentRequest::user("hi")).await.unwrap();
    assert_eq!(
        model.requests()[1].messages[0],
        Message::system("You are the agent's default self.")
    );
}

#[tokio::test]
async fn instruction_set_by_a_handler_on_an_agent_without_one_becomes_the_first_message() {
    let model = ScriptedModel::new([Turn::text("ok")]);
    let agent = Agent::builder(model.clone()).build().unwrap();

    let request =
        AgentRequest::user("hi").with_handler(tower_adk::handlers::instruction_fn(|_, current| {
            assert_eq!(current, "", "the agent has no instruction");
            "Added per request.".to_owned()
        }));
    agent.run(request).await.unwrap();

    assert_eq!(
        model.requests()[0].messages[..],
        [Message::system("Added per request."), Message::user("hi")]
    );
}
