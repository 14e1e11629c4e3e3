//! What calls cost: a model's price from the server configuration, the
//! cost of one call from the tokens its provider reported, a run's total,
//! and how a cost reads for people. A model with no price has no cost —
//! `None`, never 0 — and a total says how many activations had none.

use serde::{Deserialize, Serialize};

/// The code a run or a module fails with when its budget is spent (the
/// start of its error).
pub const BUDGET_EXCEEDED: &str = "budget_exceeded";

/// A model's price in US dollars per million tokens.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Price {
    pub input_per_million: f64,
    pub output_per_million: f64,
    /// Input tokens the provider served from its cache, where it reports
    /// them; priced as other input when this is not set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input_per_million: Option<f64>,
}

impl Price {
    /// The simulated provider's: it costs nothing.
    pub const FREE: Price = Price {
        input_per_million: 0.0,
        output_per_million: 0.0,
        cached_input_per_million: None,
    };

    /// The cost of a call that read `tokens_in` tokens (of which
    /// `cached_tokens_in` came from the provider's cache) and wrote
    /// `tokens_out`.
    pub fn cost(&self, tokens_in: u64, cached_tokens_in: u64, tokens_out: u64) -> f64 {
        let cached = cached_tokens_in.min(tokens_in);
        let fresh = tokens_in - cached;
        let cached_rate = self
            .cached_input_per_million
            .unwrap_or(self.input_per_million);
        (fresh as f64 * self.input_per_million
            + cached as f64 * cached_rate
            + tokens_out as f64 * self.output_per_million)
            / 1_000_000.0
    }

    /// Whether the numbers can be a price: finite and not negative.
    pub fn is_valid(&self) -> bool {
        let valid = |rate: f64| rate.is_finite() && rate >= 0.0;
        valid(self.input_per_million)
            && valid(self.output_per_million)
            && self.cached_input_per_million.is_none_or(valid)
    }
}

/// Adds a cost to a running sum where either may be unknown: unknown
/// stays unknown.
pub fn add(sum: Option<f64>, cost: Option<f64>) -> Option<f64> {
    Some(sum? + cost?)
}

/// What a run, or a part of it, cost: the sum of the costs that are known,
/// and how many activations had none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CostTotal {
    pub known: f64,
    pub priced: u32,
    pub unpriced: u32,
}

impl CostTotal {
    pub fn add(&mut self, cost: Option<f64>) {
        match cost {
            Some(cost) => {
                self.known += cost;
                self.priced += 1;
            }
            None => self.unpriced += 1,
        }
    }

    /// "$0.0123", "$0.0123 + 2 activations with no price configured", or
    /// "no price configured".
    pub fn text(&self) -> String {
        let plural = |count: u32| if count == 1 { "" } else { "s" };
        match (self.priced, self.unpriced) {
            (0, 0) => dollars(0.0),
            (0, _) => "no price configured".to_owned(),
            (_, 0) => dollars(self.known),
            (_, unpriced) => format!(
                "{} + {unpriced} activation{} with no price configured",
                dollars(self.known),
                plural(unpriced)
            ),
        }
    }
}

/// `GET /api/graphs/{id}/estimate`: what a run of the graph may cost,
/// from its last finished runs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Estimate {
    /// How many past runs it averages (0: no estimate).
    pub runs: u32,
    /// Each module of the graph now that ran in them.
    pub modules: Vec<ModuleEstimate>,
}

/// One module's average cost per run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ModuleEstimate {
    pub module_id: String,
    pub label: String,
    /// `None` when one of its calls had no price.
    pub average: Option<f64>,
}

impl Estimate {
    /// The sum of the modules' averages that are known, and how many
    /// modules had no price.
    pub fn total(&self) -> CostTotal {
        let mut total = CostTotal::default();
        for module in &self.modules {
            total.add(module.average);
        }
        total
    }

    /// What the run dialog says.
    pub fn text(&self) -> String {
        if self.runs == 0 {
            return "No estimate yet: this graph has no finished run to go by.".to_owned();
        }
        let runs = if self.runs == 1 {
            "its last run".to_owned()
        } else {
            format!("the average of its last {} runs", self.runs)
        };
        let total = self.total();
        let unpriced: Vec<&str> = self
            .modules
            .iter()
            .filter(|module| module.average.is_none())
            .map(|module| module.label.as_str())
            .collect();
        let mut text = format!("Estimated cost: about {} ({runs})", dollars(total.known));
        if !unpriced.is_empty() {
            text.push_str(&format!(
                "; not counted, with no price configured: {}",
                unpriced.join(", ")
            ));
        }
        text.push('.');
        text
    }
}

/// A cost for people: `$0`, `$0.000042`, `$0.0123`, `$1.23`.
pub fn dollars(cost: f64) -> String {
    if cost == 0.0 {
        "$0".to_owned()
    } else if cost >= 1.0 {
        format!("${cost:.2}")
    } else if cost >= 0.01 {
        format!("${cost:.4}")
    } else {
        // Two significant figures of a small amount.
        let digits = (-cost.log10()).ceil() as usize + 1;
        format!("${cost:.digits$}")
    }
}

/// A cost that may be unknown, for people.
pub fn cost_text(cost: Option<f64>) -> String {
    cost.map_or_else(|| "no price configured".to_owned(), dollars)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_costs_its_input_cached_input_and_output_at_their_rates() {
        let price = Price {
            input_per_million: 2.5,
            output_per_million: 10.0,
            cached_input_per_million: Some(1.25),
        };
        // 1000 in (400 of them cached), 500 out.
        let cost = price.cost(1000, 400, 500);
        let expected = (600.0 * 2.5 + 400.0 * 1.25 + 500.0 * 10.0) / 1e6;
        assert!((cost - expected).abs() < 1e-12, "{cost} != {expected}");
        // Without a cached rate, cached input is input.
        let plain = Price {
            cached_input_per_million: None,
            ..price
        };
        assert!((plain.cost(1000, 400, 0) - 1000.0 * 2.5 / 1e6).abs() < 1e-12);
        // A report of more cached tokens than input is bounded.
        assert!((price.cost(10, 50, 0) - 10.0 * 1.25 / 1e6).abs() < 1e-12);
        assert_eq!(Price::FREE.cost(1000, 0, 1000), 0.0);
    }

    #[test]
    fn unknown_stays_unknown_and_a_total_counts_what_had_no_price() {
        assert_eq!(add(Some(0.5), Some(0.25)), Some(0.75));
        assert_eq!(add(Some(0.5), None), None);
        assert_eq!(add(None, Some(0.5)), None);
        let mut total = CostTotal::default();
        total.add(Some(0.01));
        total.add(None);
        total.add(Some(0.0023));
        assert_eq!(total.priced, 2);
        assert_eq!(total.unpriced, 1);
        assert_eq!(
            total.text(),
            "$0.0123 + 1 activation with no price configured"
        );
        let mut none_priced = CostTotal::default();
        none_priced.add(None);
        assert_eq!(none_priced.text(), "no price configured");
    }

    #[test]
    fn costs_read_with_the_figures_that_matter() {
        assert_eq!(dollars(0.0), "$0");
        assert_eq!(dollars(1.234), "$1.23");
        assert_eq!(dollars(0.01234), "$0.0123");
        assert_eq!(dollars(0.000042), "$0.000042");
        assert_eq!(dollars(0.0042), "$0.0042");
        assert_eq!(cost_text(None), "no price configured");
    }

    #[test]
    fn an_estimate_says_what_it_goes_by_and_what_it_leaves_out() {
        assert_eq!(
            Estimate::default().text(),
            "No estimate yet: this graph has no finished run to go by."
        );
        let estimate = Estimate {
            runs: 3,
            modules: vec![
                ModuleEstimate {
                    module_id: "m2".to_owned(),
                    label: "Draft".to_owned(),
                    average: Some(0.012),
                },
                ModuleEstimate {
                    module_id: "m3".to_owned(),
                    label: "Review".to_owned(),
                    average: None,
                },
            ],
        };
        assert_eq!(
            estimate.text(),
            "Estimated cost: about $0.0120 (the average of its last 3 runs); not counted, with no price configured: Review."
        );
    }

    #[test]
    fn a_price_is_finite_and_not_negative() {
        assert!(Price::FREE.is_valid());
        let bad = Price {
            input_per_million: -1.0,
            ..Price::FREE
        };
        assert!(!bad.is_valid());
        let nan = Price {
            cached_input_per_million: Some(f64::NAN),
            ..Price::FREE
        };
        assert!(!nan.is_valid());
    }
}
