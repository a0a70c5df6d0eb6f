//! Token counts: the estimate, and OpenAI's tokenizers against known counts.

use tower_adk::handlers::{CharEstimate, TokenCounter, counter_for_model};

#[test]
fn the_estimate_is_a_token_per_four_bytes_rounded_up() {
    assert_eq!(CharEstimate.count("hello world"), 3);
    assert_eq!(CharEstimate.count("お誕生日おめでとう"), 7); // 27 bytes
    assert_eq!(counter_for_model("llama3.2").count("hello world"), 3);
}

/// The counts OpenAI's cookbook gives ("How to count tokens with tiktoken").
#[cfg(feature = "tiktoken")]
#[test]
fn tiktoken_counts_match_openais_known_values() {
    use tower_adk::Message;
    use tower_adk::handlers::Tiktoken;

    let gpt4 = Tiktoken::for_model("gpt-4").unwrap();
    let gpt4o = Tiktoken::for_model("gpt-4o").unwrap();
    assert_eq!(gpt4.count("tiktoken is great!"), 6);
    assert_eq!(gpt4.count("antidisestablishmentarianism"), 6);
    assert_eq!(gpt4.count("2 + 2 = 4"), 7);
    assert_eq!(gpt4.count("お誕生日おめでとう"), 9);
    assert_eq!(gpt4o.count("hello world"), 2);
    assert_eq!(gpt4o.count("antidisestablishmentarianism"), 6);
    assert_eq!(gpt4o.count("2 + 2 = 4"), 7);
    assert_eq!(gpt4o.count("お誕生日おめでとう"), 8);
    // Known names get the real tokenizer, others the estimate.
    assert_eq!(counter_for_model("gpt-4o-mini").count("hello world"), 2);
    assert!(Tiktoken::for_model("mistral-7b").is_err());
    // A message: 3 of framing, then its text; a history adds 3 for the reply.
    let history = [Message::user("hello world")];
    assert_eq!(gpt4o.count_messages(&history), 3 + 2 + 3);
}
