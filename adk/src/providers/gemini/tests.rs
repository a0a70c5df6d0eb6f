#![allow(clippy::unwrap_used)]

use super::{GeminiModel, ResponseFuture};

#[test]
fn the_model_and_its_future_are_send_and_sync() {
    fn send_sync<T: Send + Sync + 'static>() {}
    fn send<T: Send + 'static>() {}
    send_sync::<GeminiModel>();
    send::<ResponseFuture>();
    send_sync::<super::GeminiError>();
}
