//! The compiled loop: its topology for one compatibility key, and the cache of variants.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// What the loop's topology depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct LoopKey {
    /// The run has tools: the loop has a tools step and loops back to the model.
    pub(crate) tools: bool,
    /// A tool of the run returns directly: the tools step can end the run.
    pub(crate) return_directly: bool,
}

impl LoopKey {
    const COUNT: usize = 4;

    fn index(self) -> usize {
        usize::from(self.tools) * 2 + usize::from(self.return_directly)
    }
}

/// A step of the loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    CallModel,
    RunTools,
    End,
}

/// Where to go after a step.
#[derive(Debug, Clone, Copy)]
enum Edge {
    To(usize),
    /// After the model: to `then` if the (rewritten) reply has tool calls.
    IfToolCalls {
        then: usize,
        otherwise: usize,
    },
    /// After the tools: to `then` if a return-directly tool was called.
    IfReturnedDirectly {
        then: usize,
        otherwise: usize,
    },
}

/// What a step found, for routing.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Outcome {
    pub(crate) tool_calls: bool,
    pub(crate) returned_directly: bool,
    /// The run must end here whatever the topology (e.g. the failure policy said so).
    pub(crate) halt: bool,
}

/// The loop's graph for one key: steps and the edges between them.
#[derive(Debug)]
pub(crate) struct CompiledLoop {
    steps: Vec<(Step, Edge)>,
}

impl CompiledLoop {
    const MODEL: usize = 0;

    fn compile(key: LoopKey) -> Self {
        const TOOLS: usize = 1;
        const END: usize = 2;
        let after_model = if key.tools {
            Edge::IfToolCalls {
                then: TOOLS,
                otherwise: END,
            }
        } else {
            Edge::To(END)
        };
        let after_tools = if key.return_directly {
            Edge::IfReturnedDirectly {
                then: END,
                otherwise: Self::MODEL,
            }
        } else {
            Edge::To(Self::MODEL)
        };
        let mut steps = vec![(Step::CallModel, after_model)];
        if key.tools {
            steps.push((Step::RunTools, after_tools));
        } else {
            // Keep END at a fixed index; an unreachable tools step would only mislead.
            steps.push((Step::End, Edge::To(END)));
        }
        steps.push((Step::End, Edge::To(END)));
        CompiledLoop { steps }
    }

    pub(crate) fn entry(&self) -> usize {
        Self::MODEL
    }

    pub(crate) fn step(&self, at: usize) -> Step {
        self.steps.get(at).map_or(Step::End, |(step, _)| *step)
    }

    pub(crate) fn next(&self, at: usize, outcome: Outcome) -> usize {
        if outcome.halt {
            return self.steps.len() - 1;
        }
        match self.steps.get(at).map(|(_, edge)| *edge) {
            Some(Edge::To(to)) => to,
            Some(Edge::IfToolCalls { then, otherwise }) => {
                if outcome.tool_calls {
                    then
                } else {
                    otherwise
                }
            }
            Some(Edge::IfReturnedDirectly { then, otherwise }) => {
                if outcome.returned_directly {
                    then
                } else {
                    otherwise
                }
            }
            None => self.steps.len(),
        }
    }
}

/// The variants compiled so far, one slot per key; each is compiled once, on first use,
/// and read without a lock afterwards.
#[derive(Debug, Default)]
pub(crate) struct Variants {
    slots: [OnceLock<Arc<CompiledLoop>>; LoopKey::COUNT],
    compiled: AtomicUsize,
    /// The cache is off: every `get` compiles afresh (a benchmarking aid).
    recompile: bool,
}

impl Variants {
    /// Variants that are cached, or, with `recompile`, compiled afresh on every `get`.
    pub(crate) fn new(recompile: bool) -> Self {
        Variants {
            recompile,
            ..Variants::default()
        }
    }

    pub(crate) fn get(&self, key: LoopKey) -> Arc<CompiledLoop> {
        if self.recompile {
            self.compiled.fetch_add(1, Ordering::Relaxed);
            return Arc::new(CompiledLoop::compile(key));
        }
        let slot = &self.slots[key.index()];
        Arc::clone(slot.get_or_init(|| {
            self.compiled.fetch_add(1, Ordering::Relaxed);
            Arc::new(CompiledLoop::compile(key))
        }))
    }

    pub(crate) fn compiled(&self) -> usize {
        self.compiled.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk(key: LoopKey, outcomes: &[Outcome]) -> Vec<Step> {
        let graph = CompiledLoop::compile(key);
        let mut at = graph.entry();
        let mut steps = vec![graph.step(at)];
        for outcome in outcomes {
            at = graph.next(at, *outcome);
            steps.push(graph.step(at));
        }
        steps
    }

    #[test]
    fn toolless_loop_ends_after_one_model_call_even_if_tools_are_asked_for() {
        let key = LoopKey {
            tools: false,
            return_directly: false,
        };
        let calls = Outcome {
            tool_calls: true,
            returned_directly: false,
            halt: false,
        };
        assert_eq!(walk(key, &[calls]), [Step::CallModel, Step::End]);
    }

    #[test]
    fn tool_loop_goes_back_to_the_model_unless_a_tool_returned_directly() {
        let calls = Outcome {
            tool_calls: true,
            returned_directly: false,
            halt: false,
        };
        let direct = Outcome {
            tool_calls: true,
            returned_directly: true,
            halt: false,
        };
        let plain = LoopKey {
            tools: true,
            return_directly: false,
        };
        assert_eq!(
            walk(plain, &[calls, direct]),
            [Step::CallModel, Step::RunTools, Step::CallModel]
        );
        let with_direct = LoopKey {
            tools: true,
            return_directly: true,
        };
        assert_eq!(
            walk(with_direct, &[calls, direct]),
            [Step::CallModel, Step::RunTools, Step::End]
        );
    }

    #[test]
    fn a_halting_outcome_ends_any_loop() {
        let halt = Outcome {
            tool_calls: true,
            returned_directly: false,
            halt: true,
        };
        let plain = LoopKey {
            tools: true,
            return_directly: false,
        };
        assert_eq!(walk(plain, &[halt]), [Step::CallModel, Step::End]);
    }

    #[test]
    fn each_key_compiles_once() {
        let variants = Variants::default();
        let key = LoopKey {
            tools: true,
            return_directly: false,
        };
        let a = variants.get(key);
        let b = variants.get(key);
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(variants.compiled(), 1);
        variants.get(LoopKey {
            tools: false,
            return_directly: false,
        });
        assert_eq!(variants.compiled(), 2);
    }

    #[test]
    fn without_the_cache_every_get_compiles() {
        let variants = Variants::new(true);
        let key = LoopKey {
            tools: true,
            return_directly: false,
        };
        let a = variants.get(key);
        let b = variants.get(key);
        assert!(!Arc::ptr_eq(&a, &b));
        assert_eq!(variants.compiled(), 2);
    }
}
