//! Token usage: what one model call used ([`Usage`]), what a run or a thread used,
//! model by model ([`UsageTotals`]), what that cost ([`Prices`], [`Cost`]), and
//! [`UsageMeter`], which adds up the usage of the calls that find it in their request's
//! extensions.

use std::collections::BTreeMap;
use std::ops::{Add, AddAssign};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

/// The tokens one model call used, as the server counted them.
///
/// The cache and reasoning counts are parts of the two main ones, as the providers count
/// them: `cache_read_tokens` and `cache_write_tokens` of `prompt_tokens` (Anthropic counts
/// them apart from its `input_tokens`; its provider adds them in), `reasoning_tokens` of
/// `completion_tokens`.
///
/// ```
/// use tower_adk::model::Usage;
///
/// let call = Usage::new(1_000, 200, 1_200).with_cache(800, 0).with_reasoning(150);
/// let run = call + Usage::new(10, 5, 15);
/// assert_eq!(run.prompt_tokens, 1_010);
/// assert_eq!(run.cache_read_tokens, 800);
/// assert_eq!(run.reasoning_tokens, 150);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct Usage {
    /// Tokens of the prompt: the history, the instruction and the tool schemas.
    pub prompt_tokens: u64,
    /// Tokens the model produced.
    pub completion_tokens: u64,
    /// All tokens of the call (usually the sum of the two above).
    pub total_tokens: u64,
    /// Prompt tokens read from the provider's cache (billed lower).
    #[serde(skip_serializing_if = "is_zero")]
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider's cache (billed higher, where they are).
    #[serde(skip_serializing_if = "is_zero")]
    pub cache_write_tokens: u64,
    /// Completion tokens the model spent reasoning.
    #[serde(skip_serializing_if = "is_zero")]
    pub reasoning_tokens: u64,
}

fn is_zero(count: &u64) -> bool {
    *count == 0
}

impl Usage {
    /// A usage from its three counts.
    pub fn new(prompt_tokens: u64, completion_tokens: u64, total_tokens: u64) -> Self {
        Usage {
            prompt_tokens,
            completion_tokens,
            total_tokens,
            ..Usage::default()
        }
    }

    /// With the prompt tokens read from and written to the provider's cache.
    pub fn with_cache(mut self, read: u64, write: u64) -> Self {
        self.cache_read_tokens = read;
        self.cache_write_tokens = write;
        self
    }

    /// With the completion tokens spent reasoning.
    pub fn with_reasoning(mut self, tokens: u64) -> Self {
        self.reasoning_tokens = tokens;
        self
    }

    /// Whether every count is zero.
    pub fn is_empty(&self) -> bool {
        *self == Usage::default()
    }

    /// Each count less the other's, never below zero.
    pub fn saturating_sub(self, other: Usage) -> Usage {
        Usage {
            prompt_tokens: self.prompt_tokens.saturating_sub(other.prompt_tokens),
            completion_tokens: self
                .completion_tokens
                .saturating_sub(other.completion_tokens),
            total_tokens: self.total_tokens.saturating_sub(other.total_tokens),
            cache_read_tokens: self
                .cache_read_tokens
                .saturating_sub(other.cache_read_tokens),
            cache_write_tokens: self
                .cache_write_tokens
                .saturating_sub(other.cache_write_tokens),
            reasoning_tokens: self.reasoning_tokens.saturating_sub(other.reasoning_tokens),
        }
    }
}

impl Add for Usage {
    type Output = Usage;

    fn add(self, other: Usage) -> Usage {
        Usage {
            prompt_tokens: self.prompt_tokens.saturating_add(other.prompt_tokens),
            completion_tokens: self
                .completion_tokens
                .saturating_add(other.completion_tokens),
            total_tokens: self.total_tokens.saturating_add(other.total_tokens),
            cache_read_tokens: self
                .cache_read_tokens
                .saturating_add(other.cache_read_tokens),
            cache_write_tokens: self
                .cache_write_tokens
                .saturating_add(other.cache_write_tokens),
            reasoning_tokens: self.reasoning_tokens.saturating_add(other.reasoning_tokens),
        }
    }
}

impl AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        *self = *self + other;
    }
}

/// What a run, or a thread, used: in all, model by model, and in how many calls.
///
/// The loop adds every call's [`ModelDelta::Usage`](super::ModelDelta::Usage) here;
/// [`AgentResult::usage`](crate::agent::AgentResult::usage) is the run's, and the
/// thread's record carries the thread's on.
///
/// ```
/// use tower_adk::model::{Prices, Price, Usage, UsageTotals};
///
/// let mut run = UsageTotals::default();
/// run.add(Some("gpt-4o-mini"), Usage::new(1_000_000, 100_000, 1_100_000));
/// run.add(Some("claude-sonnet-4-5"), Usage::new(10_000, 1_000, 11_000));
/// assert_eq!(run.calls, 2);
/// assert_eq!(run.total.prompt_tokens, 1_010_000);
///
/// let prices = Prices::new().with("gpt-4o-mini", Price::per_million(0.15, 0.60));
/// let cost = run.cost(&prices);
/// assert!((cost.usd - 0.21).abs() < 1e-9);
/// assert_eq!(cost.unpriced, ["claude-sonnet-4-5"]);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct UsageTotals {
    /// All calls' usage, added up.
    pub total: Usage,
    /// The usage of each model, by the name the provider reported (or the agent's name
    /// for it); calls whose model has no name are under `""`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub by_model: BTreeMap<String, Usage>,
    /// How many calls reported their usage.
    pub calls: u64,
}

impl UsageTotals {
    /// No calls.
    pub const EMPTY: UsageTotals = UsageTotals {
        total: Usage {
            prompt_tokens: 0,
            completion_tokens: 0,
            total_tokens: 0,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            reasoning_tokens: 0,
        },
        by_model: BTreeMap::new(),
        calls: 0,
    };

    /// Adds one call's usage, under its model's name.
    pub fn add(&mut self, model: Option<&str>, usage: Usage) {
        self.total += usage;
        self.calls = self.calls.saturating_add(1);
        let model = model.unwrap_or_default();
        match self.by_model.get_mut(model) {
            Some(sum) => *sum += usage,
            None => {
                self.by_model.insert(model.to_owned(), usage);
            }
        }
    }

    /// Adds all of another's calls.
    pub fn merge(&mut self, other: &UsageTotals) {
        self.total += other.total;
        self.calls = self.calls.saturating_add(other.calls);
        for (model, usage) in &other.by_model {
            *self.by_model.entry(model.clone()).or_default() += *usage;
        }
    }

    /// These totals less another's that they include (a thread's less one of its runs').
    pub fn without(&self, part: &UsageTotals) -> UsageTotals {
        let mut by_model = self.by_model.clone();
        for (model, usage) in &part.by_model {
            if let Some(sum) = by_model.get_mut(model) {
                *sum = sum.saturating_sub(*usage);
            }
        }
        by_model.retain(|_, usage| !usage.is_empty());
        UsageTotals {
            total: self.total.saturating_sub(part.total),
            by_model,
            calls: self.calls.saturating_sub(part.calls),
        }
    }

    /// What these calls cost at these prices. The models the table has no price for are
    /// named in [`Cost::unpriced`], and add nothing.
    pub fn cost(&self, prices: &Prices) -> Cost {
        let mut cost = Cost::default();
        for (model, usage) in &self.by_model {
            match prices.price(model) {
                Some(price) => cost.usd += price.cost(usage),
                None => cost.unpriced.push(model.clone()),
            }
        }
        cost
    }
}

/// The price of one model's tokens, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct Price {
    /// Per million prompt tokens (not read from the cache).
    pub input: f64,
    /// Per million completion tokens (reasoning tokens included).
    pub output: f64,
    /// Per million prompt tokens read from the cache; the input price if unset.
    pub cache_read: Option<f64>,
    /// Per million prompt tokens written to the cache; the input price if unset.
    pub cache_write: Option<f64>,
}

impl Price {
    /// A price per million input and output tokens.
    pub fn per_million(input: f64, output: f64) -> Self {
        Price {
            input,
            output,
            ..Price::default()
        }
    }

    /// With the prices per million tokens read from and written to the cache.
    pub fn with_cache(mut self, read: f64, write: f64) -> Self {
        self.cache_read = Some(read);
        self.cache_write = Some(write);
        self
    }

    /// What this usage costs, in US dollars.
    pub fn cost(&self, usage: &Usage) -> f64 {
        let cached = usage
            .cache_read_tokens
            .saturating_add(usage.cache_write_tokens);
        let fresh = usage.prompt_tokens.saturating_sub(cached) as f64;
        let per_token = |per_million: f64| per_million / 1_000_000.0;
        fresh * per_token(self.input)
            + usage.cache_read_tokens as f64 * per_token(self.cache_read.unwrap_or(self.input))
            + usage.cache_write_tokens as f64 * per_token(self.cache_write.unwrap_or(self.input))
            + usage.completion_tokens as f64 * per_token(self.output)
    }
}

/// A price table: each model's [`Price`], by name, and one for the models it does not
/// name, if set. Give it to
/// [`AgentBuilder::prices`](crate::agent::AgentBuilder::prices) for the cost of runs and
/// threads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Prices {
    models: BTreeMap<String, Price>,
    #[serde(skip_serializing_if = "Option::is_none")]
    other: Option<Price>,
}

impl Prices {
    /// An empty table.
    pub fn new() -> Self {
        Prices::default()
    }

    /// With this model's price.
    pub fn with(mut self, model: impl Into<String>, price: Price) -> Self {
        self.models.insert(model.into(), price);
        self
    }

    /// With the price of every model the table does not name.
    pub fn otherwise(mut self, price: Price) -> Self {
        self.other = Some(price);
        self
    }

    /// The price of this model: its own, or the table's price for others.
    pub fn price(&self, model: &str) -> Option<&Price> {
        self.models.get(model).or(self.other.as_ref())
    }
}

/// What a run or a thread cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Cost {
    /// In US dollars, of the models the table has a price for.
    pub usd: f64,
    /// The models that were used and that the table has no price for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unpriced: Vec<String>,
}

/// Adds up the [`Usage`] of the model calls that see it.
///
/// Put a meter in a request's extensions (an `AgentRequest`'s for a whole run, a
/// `ModelRequest`'s for one call); a model that reports usage adds each call's usage to
/// the meter it finds there once the call's reply is complete (for a streamed reply: when
/// the stream ends). Clones share their counts, so keep one clone to read.
///
/// # Example
///
/// ```
/// use tower_adk::model::{Usage, UsageMeter};
///
/// let meter = UsageMeter::new();
/// let seen_by_the_model = meter.clone();
/// seen_by_the_model.record(Usage::new(12, 3, 15));
/// seen_by_the_model.record(Usage::new(20, 5, 25));
///
/// assert_eq!(meter.total(), Usage::new(32, 8, 40));
/// assert_eq!(meter.calls(), 2);
/// ```
#[derive(Debug, Clone, Default)]
pub struct UsageMeter(Arc<Counts>);

#[derive(Debug, Default)]
struct Counts {
    prompt: AtomicU64,
    completion: AtomicU64,
    total: AtomicU64,
    cache_read: AtomicU64,
    cache_write: AtomicU64,
    reasoning: AtomicU64,
    calls: AtomicU64,
}

impl UsageMeter {
    /// A meter at zero.
    pub fn new() -> Self {
        UsageMeter::default()
    }

    /// Adds the usage of one call.
    pub fn record(&self, usage: Usage) {
        let counts = &self.0;
        counts
            .prompt
            .fetch_add(usage.prompt_tokens, Ordering::Relaxed);
        counts
            .completion
            .fetch_add(usage.completion_tokens, Ordering::Relaxed);
        counts
            .total
            .fetch_add(usage.total_tokens, Ordering::Relaxed);
        counts
            .cache_read
            .fetch_add(usage.cache_read_tokens, Ordering::Relaxed);
        counts
            .cache_write
            .fetch_add(usage.cache_write_tokens, Ordering::Relaxed);
        counts
            .reasoning
            .fetch_add(usage.reasoning_tokens, Ordering::Relaxed);
        counts.calls.fetch_add(1, Ordering::Relaxed);
    }

    /// The usage recorded so far, added up.
    pub fn total(&self) -> Usage {
        let counts = &self.0;
        Usage {
            prompt_tokens: counts.prompt.load(Ordering::Relaxed),
            completion_tokens: counts.completion.load(Ordering::Relaxed),
            total_tokens: counts.total.load(Ordering::Relaxed),
            cache_read_tokens: counts.cache_read.load(Ordering::Relaxed),
            cache_write_tokens: counts.cache_write.load(Ordering::Relaxed),
            reasoning_tokens: counts.reasoning.load(Ordering::Relaxed),
        }
    }

    /// How many calls recorded their usage.
    pub fn calls(&self) -> u64 {
        self.0.calls.load(Ordering::Relaxed)
    }
}
