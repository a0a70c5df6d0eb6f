//! What a route that shows a reply as text (AG-UI's text messages, OpenAI's chat
//! completions) shows of its parts: the text, and a placeholder for each image and file
//! (see [`Part::placeholder`]), so that a part it cannot carry is said, not dropped.

use std::borrow::Cow;

use crate::content::Part;
use crate::message::Message;

/// The reply as text: its text parts and the placeholders of its images and files, apart
/// by blank lines (its reasoning is left out: the routes show it on its own).
pub(crate) fn text(message: &Message) -> Cow<'_, str> {
    match message.full_content() {
        Cow::Borrowed(content) => content.readable(),
        Cow::Owned(content) => Cow::Owned(content.readable().into_owned()),
    }
}

/// What a reply whose text streamed adds after it: the placeholders of its images and
/// files, each after a blank line; `None` when it has none.
pub(crate) fn after_streamed(message: &Message) -> Option<String> {
    let parts = message.parts();
    let unstreamed = parts
        .iter()
        .filter(|part| !matches!(part, Part::Text { .. } | Part::Reasoning(_)));
    let said: String = unstreamed
        .filter_map(Part::placeholder)
        .map(|placeholder| format!("\n\n{placeholder}"))
        .collect();
    (!said.is_empty()).then_some(said)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::content::{Content, Reasoning, Source};

    #[test]
    fn images_and_files_are_said_and_reasoning_is_left_out() {
        let message = Message::assistant(Content::from(vec![
            Part::Reasoning(Reasoning::new("anthropic", "hmm").with_data("signature", "c2ln")),
            Part::text("Here it is."),
            Part::image(Source::base64("image/png", "iVBORw0K")),
            Part::file(Source::url("https://x/a.pdf"), Some("a.pdf".into())),
        ]));

        assert_eq!(
            text(&message),
            "Here it is.\n\n[an image: image/png, 8 base64 bytes]\n\n[a file: a.pdf, https://x/a.pdf]"
        );
        assert_eq!(
            after_streamed(&message).unwrap(),
            "\n\n[an image: image/png, 8 base64 bytes]\n\n[a file: a.pdf, https://x/a.pdf]"
        );
        assert_eq!(after_streamed(&Message::assistant("only text")), None);
        assert_eq!(text(&Message::assistant("only text")), "only text");
    }
}
