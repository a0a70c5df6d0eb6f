//! Every kind of problem, at its line and column, all of a file's at once, shown like a
//! compiler error; and no input makes reading panic.

use tower_adk::file::{AgentFile, LoadError, ProblemKind, Registry};
use tower_adk::testing::text_tool;

use super::support::{places, problems, problems_with, read_with};

use ProblemKind::*;

const MODEL: &str = "model: {provider: scripted, turns: [{text: hi}]}\n";

fn registry() -> Registry {
    Registry::new()
        .tool(text_tool("lookup_order", "shipped"))
        .tool(text_tool("refund", "refunded"))
}

/// One file with a problem of nearly every kind: all are reported at once, in order.
const MANY: &str = "\
name: support
description: ${SUPPORT_MISSING_VAR}
model:
  provider: scripted
  temprature: 0.2
  turns: [{text: hi}]
max_iterations: many
timezone: Mars/Olympus
timeout: soon
tools: [lookup_ordr]
mcp_servers:
  - name: files
    command: [node, server.js]
    include: [read_file]
    exclude: [write_file]
handlers:
  - task_complete
  - call_limits: {tool_calls: -1}
  - slots:
      slots: [{name: city, type: txt}]
";

#[test]
fn every_problem_of_a_file_is_reported_at_once_with_its_place() {
    let found = problems_with(MANY, &registry());
    let mut expected = vec![
        (MissingEnv, 2, 14),
        (UnknownKey, 5, 3),
        (WrongType, 7, 17),
        (InvalidTimezone, 8, 11),
        (InvalidValue, 9, 10),
        (UnknownTool, 10, 9),
        (IncludeAndExclude, 15, 5),
        (UnknownHandler, 17, 5),
        (InvalidValue, 18, 31),
        (InvalidValue, 20, 34),
    ];
    if !cfg!(feature = "mcp") {
        expected.insert(6, (NotEnabled, 12, 5));
    }
    assert_eq!(places(&found), expected);
    let suggestions: Vec<_> = found.iter().filter_map(|p| p.suggestion()).collect();
    assert_eq!(
        suggestions,
        ["temperature", "lookup_order", "task_completed", "text"]
    );
    assert!(
        found[0].message().contains("SUPPORT_MISSING_VAR"),
        "{}",
        found[0].message()
    );
}

#[test]
fn the_problems_are_shown_like_compiler_errors() {
    let text = format!("{MODEL}max_iteration: 5\n");
    let errors = read_with(&text, &Registry::new(), &[]).expect_err("a problem");
    let shown = errors.to_string();
    let expected = "\
error[unknown_key]: unknown key `max_iteration` in the agent file
 --> agent.yaml:2:1
  |
2 | max_iteration: 5
  | ^^^^^^^^^^^^^ did you mean `max_iterations`?
";
    assert!(shown.starts_with(expected), "{shown}");
    assert!(
        shown.contains("  = valid here: name, description, model,"),
        "{shown}"
    );
    assert!(
        shown.ends_with("error: agent.yaml has 1 problem"),
        "{shown}"
    );
}

#[test]
fn yaml_that_does_not_parse_is_a_syntax_problem_at_its_place() {
    let found = problems("name: a\n  model: [\n");
    assert_eq!(places(&found), [(Syntax, 2, 8)]);
}

#[test]
fn a_key_given_twice_is_a_problem_at_the_second() {
    let found = problems(&format!(
        "{MODEL}max_iterations: 3\nhandlers:\n  - call_limits: {{tool_calls: 1, tool_calls: 2}}\nmax_iterations: 4\n"
    ));
    assert_eq!(
        places(&found),
        [(DuplicateKey, 4, 34), (DuplicateKey, 5, 1)]
    );
    assert_eq!(
        found[1].message(),
        "the key `max_iterations` is given twice here: keep one"
    );
}

#[test]
fn an_unknown_key_lists_the_valid_ones_and_suggests_the_closest() {
    let found = problems("model:\n  provider: scripted\n  turns: []\n  max_token: 5\n");
    assert_eq!(places(&found), [(UnknownKey, 4, 3)]);
    assert_eq!(found[0].suggestion(), Some("max_tokens"));
    assert!(found[0].choices().iter().any(|c| c == "temperature"));
}

#[test]
fn a_key_far_from_every_valid_one_gets_no_suggestion() {
    let found = problems(&format!("{MODEL}zzzz: 1\n"));
    assert_eq!(places(&found), [(UnknownKey, 2, 1)]);
    assert_eq!(found[0].suggestion(), None);
}

#[test]
fn a_wrong_type_says_what_was_expected_and_found() {
    let found = problems(&format!(
        "{MODEL}filler_messages: sometimes\ntools: lookup\n"
    ));
    assert_eq!(places(&found), [(WrongType, 2, 18), (WrongType, 3, 8)]);
    assert_eq!(found[0].message(), "expected true or false, found a string");
    assert_eq!(found[1].message(), "expected a list, found a string");
}

#[test]
fn missing_keys_are_reported_at_their_mapping() {
    let found = problems("name: a\n");
    assert_eq!(places(&found), [(MissingKey, 1, 1)]);
    let found = problems("model:\n  name: x\n");
    assert_eq!(places(&found), [(MissingKey, 2, 3)]);
    assert!(found[0].message().contains("`provider`"));
}

#[test]
fn an_invalid_timezone_is_named() {
    let found = problems(&format!(
        "{MODEL}include_date_time: true\ntimezone: Europe/Berlinn\n"
    ));
    assert_eq!(places(&found), [(InvalidTimezone, 3, 11)]);
    assert!(found[0].message().contains("Europe/Berlinn"));
}

#[test]
fn include_and_exclude_on_one_server_is_a_problem_at_exclude() {
    let text = format!(
        "{MODEL}mcp_servers:\n  - name: fs\n    url: http://127.0.0.1:1/mcp\n    exclude: [a]\n    include: [b]\n"
    );
    let found: Vec<_> = problems(&text)
        .into_iter()
        .filter(|p| p.kind() != NotEnabled)
        .collect();
    assert_eq!(places(&found), [(IncludeAndExclude, 5, 5)]);
}

#[test]
fn unknown_handlers_tools_and_models_list_what_is_registered() {
    let registry = registry().handler("audit", |_| Ok::<_, tower_adk::BoxError>(()));
    let text = "model: {provider: registered, name: gpt}\ntools: [refnd]\nhandlers: [audti, approval: {tools: [refund, lookup]}]\n";
    let found = problems_with(text, &registry);
    assert_eq!(
        places(&found),
        [
            (UnknownModel, 1, 37),
            (UnknownTool, 2, 9),
            (UnknownHandler, 3, 12),
            (UnknownTool, 3, 38),
            (UnknownTool, 3, 46)
        ]
    );
    assert_eq!(found[1].suggestion(), Some("refund"));
    assert_eq!(found[2].suggestion(), Some("audit"));
    assert!(found[2].choices().iter().any(|c| c == "task_completed"));
    // Tools a handler names must be the agent's (those the file lists), not any
    // registered one.
    assert_eq!(found[4].choices(), ["refnd"]);
}

#[test]
fn missing_environment_variables_are_named_in_each_form() {
    let text = "model:\n  provider: openai\n  base_url: ${ADK_TEST_URL}/v1\n  api_key: {env: ADK_TEST_KEY}\n  name: m\n";
    let found: Vec<_> = problems(text)
        .into_iter()
        .filter(|p| p.kind() != NotEnabled)
        .collect();
    assert_eq!(places(&found), [(MissingEnv, 3, 13), (MissingEnv, 4, 18)]);
    assert_eq!(
        found[0].message(),
        "environment variable `ADK_TEST_URL` is not set"
    );
    assert_eq!(
        found[1].message(),
        "environment variable `ADK_TEST_KEY` is not set"
    );
}

#[test]
fn an_unreadable_prompt_file_and_conflicting_prompts() {
    let found = problems(&format!("{MODEL}prompt_file: no/such/file.jinja2\n"));
    assert_eq!(places(&found), [(UnreadableFile, 2, 14)]);
    let found = problems(&format!("{MODEL}prompt: a\nprompt_file: b.jinja2\n"));
    assert_eq!(places(&found)[0], (Conflict, 3, 14));
}

#[test]
fn a_template_that_does_not_compile_is_a_problem_of_the_file() {
    let found = problems(&format!("{MODEL}prompt: '{{{{ description '\n"));
    assert_eq!(places(&found), [(InvalidValue, 2, 9)]);
}

#[test]
fn exit_if_conditions_are_compiled_and_their_slots_checked() {
    let text = format!(
        "{MODEL}handlers:\n  - slots:\n      slots: [{{name: city}}, {{name: room}}]\n      exit_if: ['slots.cty is not none', 'slots.room ==']\n"
    );
    let found = problems(&text);
    assert_eq!(
        places(&found),
        [(InvalidValue, 5, 17), (InvalidValue, 5, 42)]
    );
    assert_eq!(found[0].suggestion(), Some("city"));
}

#[test]
fn a_choice_outside_its_set_suggests_the_closest() {
    let text = format!(
        "{MODEL}tools: [refund]\nhandlers:\n  - call_limits: {{on_limit: end}}\n  - approval: {{tools: {{refund: {{allow: [aprove]}}}}}}\n"
    );
    let found = problems_with(&text, &Registry::new().tool(text_tool("refund", "r")));
    assert_eq!(
        places(&found),
        [(InvalidValue, 4, 29), (InvalidValue, 5, 41)]
    );
    assert_eq!(found[0].suggestion(), Some("end_run"));
    assert_eq!(found[1].suggestion(), Some("approve"));
}

#[tokio::test]
async fn a_registered_handler_refusing_its_settings_is_a_problem_at_its_name() {
    #[derive(serde::Deserialize)]
    #[allow(dead_code)]
    struct Settings {
        level: u8,
    }
    let registry = Registry::new().handler("audit", |settings| {
        settings.deserialize::<Settings>().map(|_| ())
    });
    let text = format!("{MODEL}handlers:\n  - audit: {{level: high}}\n");
    let file =
        read_with(&text, &registry, &[]).expect("reads: the settings are the handler's to check");
    let Err(LoadError::File(errors)) = file.load(&registry).await else {
        panic!("the handler's refusal is a problem of the file");
    };
    assert_eq!(places(errors.problems()), [(HandlerSettings, 3, 5)]);
    assert!(
        errors.problems()[0]
            .message()
            .starts_with("handler `audit`: "),
        "{}",
        errors.problems()[0].message()
    );
}

#[test]
fn reading_never_panics_on_any_prefix_of_a_file() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/agents");
    let mut texts = vec![MANY.to_owned()];
    for name in ["support.yaml", "booking.yaml", "mcp.yaml"] {
        texts.push(std::fs::read_to_string(dir.join(name)).expect("example"));
    }
    for text in &texts {
        for (end, _) in text.char_indices() {
            let _ = AgentFile::reader()
                .env(|_| None)
                .read_str(&text[..end], "prefix.yaml");
            let _ = AgentFile::reader()
                .registry(&registry())
                .read_str(&text[end..], "suffix.yaml");
        }
    }
}

#[test]
fn the_readmes_example_error_is_what_is_shown() {
    let text = "name: booking\ndescription: Books hotel rooms.\nmodel: {provider: openai, name: gpt-4o-mini, temprature: 0.2}\n";
    let errors = AgentFile::reader()
        .env(|_| None)
        .read_str(text, "booking.yaml")
        .expect_err("a typo");
    let shown = errors.to_string();
    let expected = "\
error[unknown_key]: unknown key `temprature` in `model`
 --> booking.yaml:3:46
  |
3 | model: {provider: openai, name: gpt-4o-mini, temprature: 0.2}
  |                                              ^^^^^^^^^^ did you mean `temperature`?
  = valid here: provider, name, base_url, api_key, stream, temperature, max_tokens,";
    // (Without the `openai` feature, a problem about that comes first.)
    assert!(shown.contains(expected), "{shown}");
}

#[test]
fn an_agent_file_that_cannot_be_read_is_one_problem_naming_it() {
    let errors = AgentFile::from_path("no/such/agent.yaml").expect_err("no file");
    assert_eq!(errors.file(), "no/such/agent.yaml");
    assert_eq!(places(errors.problems()), [(UnreadableFile, 0, 0)]);
    let shown = errors.to_string();
    assert!(shown.contains("--> no/such/agent.yaml\n"), "{shown}");
    assert!(!shown.contains(":0:0"), "{shown}");
}

#[test]
fn a_byte_order_mark_is_not_part_of_the_first_key() {
    let text = format!("\u{feff}name: booking\n{MODEL}");
    let file = read_with(&text, &Registry::new(), &[]).unwrap_or_else(|errors| panic!("{errors}"));
    assert_eq!(file.name(), "booking");
    let wrong = format!("\u{feff}nme: booking\n{MODEL}");
    assert_eq!(places(&problems(&wrong)), [(UnknownKey, 1, 1)]);
}

#[test]
fn a_file_that_is_not_a_mapping_or_holds_two_documents() {
    assert_eq!(places(&problems("- a\n- b\n")), [(WrongType, 1, 1)]);
    assert_eq!(places(&problems("")), [(MissingKey, 1, 1)]);
    let two = format!("{MODEL}---\n{MODEL}");
    assert_eq!(places(&problems(&two)), [(Syntax, 3, 1)]);
}

#[test]
fn a_scripted_turn_with_both_text_and_stream() {
    let found = problems("model: {provider: scripted, turns: [{text: a, stream: [b]}]}\n");
    assert_eq!(places(&found), [(Conflict, 1, 55)]);
}

#[test]
fn an_unset_variable_in_any_text_is_reported_where_it_is() {
    let text = "\
model:
  provider: scripted
  turns: [{text: '${ADK_UNSET_TURN}'}]
prompt: \"Hello ${ADK_TEST_NAME}\"
handlers:
  - envelope: {note: '${ADK_UNSET_NOTE}'}
  - policy: {deny: {refund: '${ADK_UNSET_REASON}'}}
  - task_completed: {description: '${ADK_UNSET_DESCRIPTION}'}
";
    let found = problems_with(text, &registry());
    assert_eq!(
        places(&found),
        [
            (MissingEnv, 3, 18),
            (MissingEnv, 4, 9),
            (MissingEnv, 6, 22),
            (MissingEnv, 7, 29),
            (MissingEnv, 8, 35),
        ]
    );
    assert!(
        found[1].message().contains("ADK_TEST_NAME"),
        "{}",
        found[1].message()
    );
}

#[test]
fn exit_if_may_call_a_method_on_a_slot() {
    let slots = "handlers:\n  - slots:\n      slots: [{name: city}]\n      exit_if:";
    let fine = format!("{MODEL}{slots} [\"slots.city.lower() == 'paris'\"]\n");
    read_with(&fine, &Registry::new(), &[]).unwrap_or_else(|errors| panic!("{errors}"));
    let wrong = format!("{MODEL}{slots} [\"slots.cty.lower() == 'paris'\"]\n");
    let found = problems(&wrong);
    assert_eq!(places(&found), [(InvalidValue, 5, 17)]);
    assert!(
        found[0].message().contains("`cty`"),
        "{}",
        found[0].message()
    );
    assert_eq!(found[0].suggestion(), Some("city"));
}

#[test]
fn an_empty_mcp_command_is_a_problem_at_the_command() {
    let text = format!("{MODEL}mcp_servers:\n  - name: files\n    command: []\n");
    let found: Vec<_> = problems(&text)
        .into_iter()
        .filter(|p| p.kind() != NotEnabled)
        .collect();
    assert_eq!(places(&found), [(InvalidValue, 4, 14)]);
    assert!(
        found[0].message().contains("an empty command"),
        "{}",
        found[0].message()
    );
}

#[test]
fn max_tokens_too_large_or_zero_is_a_problem() {
    let text = "model:\n  provider: scripted\n  turns: [{text: hi}]\n  max_tokens: 99999999999\n";
    let found = problems(text);
    assert_eq!(places(&found), [(InvalidValue, 4, 15)]);
    assert_eq!(found[0].message(), "too large");
    let zero = text.replace("99999999999", "0");
    assert_eq!(places(&problems(&zero)), [(InvalidValue, 4, 15)]);
}

#[test]
fn a_registered_model_refuses_the_other_providers_settings() {
    let text = "model:\n  provider: registered\n  name: m\n  per_run: true\n  stream: true\n  base_url: http://x\n  api_key: k\n";
    let found = problems(text);
    assert_eq!(
        places(&found),
        [
            (UnknownModel, 3, 9),
            (Conflict, 4, 12),
            (Conflict, 5, 11),
            (Conflict, 6, 13),
            (Conflict, 7, 12)
        ]
    );
    assert_eq!(
        found[1].message(),
        "`per_run` is not a setting of the `registered` provider"
    );
}

#[test]
fn an_openai_model_without_a_name_is_a_problem_unless_openai_model_is_set() {
    let text = "model:\n  provider: openai\n  api_key: k\n";
    let found: Vec<_> = problems(text)
        .into_iter()
        .filter(|p| p.kind() != NotEnabled)
        .collect();
    assert_eq!(places(&found), [(MissingKey, 2, 3)]);
    assert!(
        found[0].message().contains("`name`"),
        "{}",
        found[0].message()
    );
    if cfg!(feature = "openai") {
        read_with(text, &Registry::new(), &[("OPENAI_MODEL", "m")])
            .unwrap_or_else(|errors| panic!("{errors}"));
    }
}

#[tokio::test]
async fn a_scripted_call_of_a_tool_the_agent_lacks_is_a_problem_at_its_name() {
    let text = "\
model:
  provider: scripted
  turns:
    - call: {tool: refnd, arguments: {order: 7}}
    - calls: [{tool: refund}, {tool: lookup_order}]
tools: [refund]
";
    // Read against the registry (as `adk check` does) ...
    let found = problems_with(text, &registry());
    assert_eq!(places(&found), [(UnknownTool, 4, 20), (UnknownTool, 5, 38)]);
    assert_eq!(found[0].message(), "the agent has no tool `refnd`");
    assert_eq!(found[0].suggestion(), Some("refund"));
    // ... and loaded after a read without one.
    let file = AgentFile::reader()
        .env(|_| None)
        .read_str(text, "agent.yaml")
        .unwrap();
    let Err(LoadError::File(errors)) = file.load(&registry()).await else {
        panic!("the unknown tools are problems of the file");
    };
    assert_eq!(
        places(errors.problems()),
        [(UnknownTool, 4, 20), (UnknownTool, 5, 38)]
    );
}

#[test]
fn a_scripted_call_of_a_handlers_own_tool_is_no_problem() {
    let text = "\
model:
  provider: scripted
  turns: [{call: {tool: set_slot_city, arguments: {value: Paris}}}, {call: {tool: task_completed}}]
handlers:
  - task_completed
  - slots: {slots: [{name: city}]}
";
    read_with(text, &registry(), &[]).unwrap_or_else(|errors| panic!("{errors}"));
}

#[test]
fn a_tab_is_one_problem_and_the_files_other_problems_are_still_found() {
    let text = format!(
        "{MODEL}max_iteration: 5\nhandlers:\n\t- task_complete\ntimezone: Mars/Olympus\nprompt: \"a\\tb\"\n"
    );
    let found = problems(&text);
    assert_eq!(
        places(&found),
        [
            (UnknownKey, 2, 1),
            (Syntax, 4, 1),
            (UnknownHandler, 4, 4),
            (InvalidTimezone, 5, 11)
        ]
    );
    assert!(
        found[1].message().contains("a tab"),
        "{}",
        found[1].message()
    );
}

#[test]
fn tabs_inside_text_in_comments_and_at_line_ends_are_no_problem() {
    // (The file does not parse for another reason: its tabs are then looked at.)
    let text = format!(
        "{MODEL}prompt: |\n  Steps:\n  \t1. look\ndescription: 'a\tb' # a\tcomment\t\nname: [\n"
    );
    let found = problems(&text);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].kind(), Syntax);
    assert!(!found[0].message().contains("a tab"), "{found:?}");
}

#[test]
fn tabs_in_indentation_or_after_a_key_are_each_a_problem_where_they_are() {
    let text = format!("{MODEL}handlers:\n\t- task_completed\n\t- envelope\ntimezone:\t\tUTC\n");
    let found = problems(&text);
    assert_eq!(
        places(&found),
        [(Syntax, 3, 1), (Syntax, 4, 1), (Syntax, 5, 10)]
    );
    let shown = AgentFile::from_str(&text, "tabs.yaml")
        .unwrap_err()
        .to_string();
    assert!(
        shown.contains("5 | timezone:\t\tUTC\n  |          ^^\n"),
        "{shown}"
    );
}

#[test]
fn a_template_that_does_not_compile_says_so_once() {
    let found = problems(&format!("{MODEL}prompt: '{{{{ description '\n"));
    let message = found[0].message();
    assert_eq!(message.matches("does not compile").count(), 1, "{message}");
    assert!(
        message.starts_with("the prompt template does not compile: "),
        "{message}"
    );
}
