//! [`Progress`]: a remote task followed event by event: its ids, its artifacts so far,
//! and what each event means for the call that follows it.

use crate::a2a::{Message, Part, PartContent, StreamResponse, TaskState, TaskStatus};

/// What the events of one remote task have said so far.
#[derive(Debug, Default)]
pub(crate) struct Progress {
    pub(crate) task_id: Option<String>,
    pub(crate) context_id: Option<String>,
    /// Each artifact's id and text, in the order they came.
    artifacts: Vec<(String, String)>,
}

/// What one event means for the call.
#[derive(Debug)]
pub(crate) enum Step {
    /// Text for the caller: an artifact's chunk, a status message.
    Chunk(String),
    /// The task ended, or waits.
    End(Outcome),
}

/// How a remote task ended, or why it stopped.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// Done: the text of its artifacts (or of its last message).
    Completed(String),
    /// Failed, rejected or canceled, with the agent's reason.
    Failed { state: TaskState, reason: String },
    /// It waits for input (or for authorization), asking with this message.
    InputRequired(Option<Message>),
}

impl Progress {
    /// Reads one event; a task or a message that is already final gives its text as a
    /// chunk first (`SendMessage`'s one answer), then its end.
    pub(crate) fn read(&mut self, event: StreamResponse) -> Vec<Step> {
        match event {
            StreamResponse::Task(task) => {
                self.ids(&task.id, &task.context_id);
                let mut steps = Vec::new();
                for artifact in task.artifacts {
                    let text = parts_text(&artifact.parts);
                    self.artifact(artifact.artifact_id, text.clone(), false);
                    steps.push(Step::Chunk(text));
                }
                steps.extend(self.status(task.status));
                steps
            }
            StreamResponse::Message(message) => {
                if let Some(context) = &message.context_id {
                    self.context_id = Some(context.clone());
                }
                let text = parts_text(&message.parts);
                vec![
                    Step::Chunk(text.clone()),
                    Step::End(Outcome::Completed(text)),
                ]
            }
            StreamResponse::StatusUpdate(update) => {
                self.ids(&update.task_id, &update.context_id);
                self.status(update.status).into_iter().collect()
            }
            StreamResponse::ArtifactUpdate(update) => {
                self.ids(&update.task_id, &update.context_id);
                let text = parts_text(&update.artifact.parts);
                self.artifact(update.artifact.artifact_id, text.clone(), update.append);
                vec![Step::Chunk(text)]
            }
        }
    }

    /// What a status means: a message while it works, or the end.
    fn status(&mut self, status: TaskStatus) -> Option<Step> {
        let text = status.message.as_ref().map(|m| parts_text(&m.parts));
        match status.state {
            TaskState::Completed => {
                let result = if self.artifacts.is_empty() {
                    text.unwrap_or_default()
                } else {
                    self.result()
                };
                Some(Step::End(Outcome::Completed(result)))
            }
            state @ (TaskState::Failed | TaskState::Rejected | TaskState::Canceled) => {
                let reason = text.unwrap_or_else(|| "no reason given".to_owned());
                Some(Step::End(Outcome::Failed { state, reason }))
            }
            TaskState::InputRequired | TaskState::AuthRequired => {
                Some(Step::End(Outcome::InputRequired(status.message)))
            }
            _ => text
                .filter(|t| !t.is_empty())
                .map(|t| Step::Chunk(format!("{t}\n"))),
        }
    }

    fn ids(&mut self, task_id: &str, context_id: &str) {
        if !task_id.is_empty() {
            self.task_id = Some(task_id.to_owned());
        }
        if !context_id.is_empty() {
            self.context_id = Some(context_id.to_owned());
        }
    }

    fn artifact(&mut self, id: String, text: String, append: bool) {
        match self.artifacts.iter_mut().find(|(known, _)| *known == id) {
            Some((_, kept)) if append => kept.push_str(&text),
            Some((_, kept)) => *kept = text,
            None => self.artifacts.push((id, text)),
        }
    }

    /// The artifacts' text, one after the other.
    fn result(&self) -> String {
        let texts: Vec<&str> = self.artifacts.iter().map(|(_, t)| t.as_str()).collect();
        texts.join("\n")
    }
}

/// The text of parts as the model reads it: text as it is, data as JSON, files named.
pub(crate) fn parts_text(parts: &[Part]) -> String {
    parts
        .iter()
        .map(|part| match &part.content {
            PartContent::Text(text) => text.clone(),
            PartContent::Data(data) => data.to_string(),
            PartContent::Url(url) => format!("[file: {url}]"),
            PartContent::Raw(bytes) => {
                let media = part.media_type.as_deref().unwrap_or("bytes");
                format!("[{} bytes of {media}]", bytes.len())
            }
            #[allow(unreachable_patterns)]
            _ => String::new(),
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    fn event(value: serde_json::Value) -> StreamResponse {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn appended_chunks_make_one_artifact_and_the_result_is_its_text() {
        let mut progress = Progress::default();
        let chunk = |text: &str, append: bool| {
            event(
                json!({"artifactUpdate": {"taskId": "t1", "contextId": "c1", "append": append,
                "artifact": {"artifactId": "a", "parts": [{"text": text}]}}}),
            )
        };
        progress.read(chunk("Invoice 7 ", false));
        progress.read(chunk("is paid.", true));
        let steps = progress.read(event(
            json!({"statusUpdate": {"taskId": "t1", "contextId": "c1",
            "status": {"state": "TASK_STATE_COMPLETED"}}}),
        ));
        assert!(
            matches!(&steps[..], [Step::End(Outcome::Completed(text))] if text == "Invoice 7 is paid.")
        );
        assert_eq!(progress.task_id.as_deref(), Some("t1"));
        assert_eq!(progress.context_id.as_deref(), Some("c1"));
    }

    #[test]
    fn a_failed_task_gives_its_reason_and_a_data_part_reads_as_json() {
        let mut progress = Progress::default();
        let steps = progress.read(event(json!({"task": {"id": "t1", "contextId": "c1",
            "status": {"state": "TASK_STATE_REJECTED", "message": {"messageId": "m", "role": "ROLE_AGENT",
                "parts": [{"text": "no: "}, {"data": {"limit": 10}}]}}}})));
        assert!(
            matches!(&steps[..], [Step::End(Outcome::Failed { state: TaskState::Rejected, reason })]
            if reason == r#"no: {"limit":10}"#)
        );
    }
}
