//! The compiled loop: its topology for one compatibility key, and the cache of variants.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use super::run::RunStep;
use crate::config::AgentConfig;

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

    /// The key of a run with this configuration.
    pub(crate) fn of(config: &AgentConfig) -> Self {
        let tools = !config.tools().is_empty();
        LoopKey {
            tools,
            return_directly: tools && config.returns_directly(),
        }
    }

    fn index(self) -> usize {
        usize::from(self.tools) * 2 + usize::from(self.return_directly)
    }
}

/// Where to go after a step.
#[derive(Debug, Clone, Copy)]
enum Edge {
    To(RunStep),
    /// After the model: to `then` if the (rewritten) reply has tool calls.
    IfToolCalls {
        then: RunStep,
        otherwise: RunStep,
    },
    /// After the tools: to `then` if a return-directly tool was called.
    IfReturnedDirectly {
        then: RunStep,
        otherwise: RunStep,
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

/// The loop's graph for one key: where each step leads. It does all the routing: the
/// steps only say what they found.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CompiledLoop {
    after_model: Edge,
    after_tools: Edge,
}

impl CompiledLoop {
    /// The graph of a run whose configuration is not made yet: every step leads to the
    /// end.
    pub(crate) const UNSTARTED: CompiledLoop = CompiledLoop {
        after_model: Edge::To(RunStep::Finish),
        after_tools: Edge::To(RunStep::Finish),
    };

    fn compile(key: LoopKey) -> Self {
        let after_model = if key.tools {
            Edge::IfToolCalls {
                then: RunStep::RunTools,
                otherwise: RunStep::Finish,
            }
        } else {
            Edge::To(RunStep::Finish)
        };
        let after_tools = if key.return_directly {
            Edge::IfReturnedDirectly {
                then: RunStep::Finish,
                otherwise: RunStep::CallModel,
            }
        } else {
            Edge::To(RunStep::CallModel)
        };
        CompiledLoop {
            after_model,
            after_tools,
        }
    }

    /// The first step of the loop.
    pub(crate) fn entry(&self) -> RunStep {
        RunStep::CallModel
    }

    /// The step after `from`, given what it found.
    pub(crate) fn next(&self, from: RunStep, outcome: Outcome) -> RunStep {
        if outcome.halt {
            return RunStep::Finish;
        }
        let edge = match from {
            RunStep::CallModel | RunStep::AfterModel => self.after_model,
            RunStep::RunTools => self.after_tools,
            RunStep::Start => return self.entry(),
            RunStep::Finish | RunStep::Done => return RunStep::Done,
        };
        match edge {
            Edge::To(to) => to,
            Edge::IfToolCalls { then, otherwise } => {
                if outcome.tool_calls {
                    then
                } else {
                    otherwise
                }
            }
            Edge::IfReturnedDirectly { then, otherwise } => {
                if outcome.returned_directly {
                    then
                } else {
                    otherwise
                }
            }
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

    fn walk(key: LoopKey, outcomes: &[Outcome]) -> Vec<RunStep> {
        let graph = CompiledLoop::compile(key);
        let mut at = graph.entry();
        let mut steps = vec![at];
        for outcome in outcomes {
            at = graph.next(at, *outcome);
            steps.push(at);
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
        assert_eq!(walk(key, &[calls]), [RunStep::CallModel, RunStep::Finish]);
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
            [RunStep::CallModel, RunStep::RunTools, RunStep::CallModel]
        );
        let with_direct = LoopKey {
            tools: true,
            return_directly: true,
        };
        assert_eq!(
            walk(with_direct, &[calls, direct]),
            [RunStep::CallModel, RunStep::RunTools, RunStep::Finish]
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
        assert_eq!(walk(plain, &[halt]), [RunStep::CallModel, RunStep::Finish]);
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
