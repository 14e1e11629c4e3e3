//! What a run has spent, against its budget and its modules' budgets.
//! A call's cost is known when its usage arrives, so the check is made
//! then: when the run's spend reaches its budget, `reached` fires and the
//! scheduler stops what is in flight (the overshoot is at most what was in
//! flight); when a module's spend reaches its own, that module's activation
//! fails. Either way the error starts with `budget_exceeded` and names
//! what spent the money. Calls with no price add nothing: a budget bounds
//! what is known.

use std::collections::BTreeMap;
use std::sync::Mutex;

use tokio_util::sync::CancellationToken;
use wire::cost::dollars;

pub use wire::cost::BUDGET_EXCEEDED;

pub struct Spend {
    run_budget: Option<f64>,
    spent: Mutex<Spent>,
    reached: CancellationToken,
}

#[derive(Default)]
struct Spent {
    total: f64,
    /// By module id: its label and what it spent.
    by_module: BTreeMap<String, (String, f64)>,
    /// Why the run's budget stopped it.
    reason: Option<String>,
}

impl Spend {
    pub fn new(run_budget: Option<f64>) -> Spend {
        Spend {
            run_budget: run_budget.filter(|budget| budget.is_finite() && budget >= &0.0),
            spent: Mutex::new(Spent::default()),
            reached: CancellationToken::new(),
        }
    }

    /// Fires when the run's budget is spent.
    pub fn reached(&self) -> &CancellationToken {
        &self.reached
    }

    /// Why the run stopped, once its budget is spent: `budget_exceeded:
    /// the run's budget of $0.01 is spent ($0.0123: "Draft" $0.0080, …)`.
    pub fn reason(&self) -> Option<String> {
        self.spent.lock().ok()?.reason.clone()
    }

    /// What the run has spent so far.
    pub fn total(&self) -> f64 {
        self.spent.lock().map_or(0.0, |spent| spent.total)
    }

    /// Adds what a call of `module` cost. An error when that reaches the
    /// module's own budget (`module_budget`); the run's budget firing is
    /// `reached`.
    pub fn record(
        &self,
        module_id: &str,
        label: &str,
        module_budget: Option<f64>,
        cost: Option<f64>,
    ) -> Result<(), String> {
        let Some(cost) = cost.filter(|cost| *cost > 0.0) else {
            return Ok(());
        };
        let Ok(mut spent) = self.spent.lock() else {
            return Ok(());
        };
        spent.total += cost;
        let module_spent = {
            let entry = spent
                .by_module
                .entry(module_id.to_owned())
                .or_insert_with(|| (label.to_owned(), 0.0));
            entry.1 += cost;
            entry.1
        };
        if let Some(budget) = self.run_budget
            && spent.total >= budget
            && spent.reason.is_none()
        {
            let mut spenders: Vec<&(String, f64)> = spent.by_module.values().collect();
            spenders.sort_by(|a, b| b.1.total_cmp(&a.1));
            let named: Vec<String> = spenders
                .iter()
                .map(|(label, amount)| format!("\"{label}\" {}", dollars(*amount)))
                .collect();
            spent.reason = Some(format!(
                "{BUDGET_EXCEEDED}: the run's budget of {} is spent ({}: {})",
                dollars(budget),
                dollars(spent.total),
                named.join(", ")
            ));
            self.reached.cancel();
        }
        match module_budget {
            Some(budget) if module_spent >= budget => Err(format!(
                "{BUDGET_EXCEEDED}: \"{label}\" spent {} of its budget of {}",
                dollars(module_spent),
                dollars(budget)
            )),
            _ => Ok(()),
        }
    }

    /// Adds what an activation that had ended before a resume cost.
    pub fn replayed(&self, module_id: &str, label: &str, cost: Option<f64>) {
        let _ = self.record(module_id, label, None, cost);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_budget_fires_once_and_names_who_spent_it() {
        let spend = Spend::new(Some(0.01));
        assert!(spend.record("m2", "Draft", None, Some(0.006)).is_ok());
        assert!(!spend.reached().is_cancelled());
        // No price: nothing known is added.
        assert!(spend.record("m3", "Review", None, None).is_ok());
        assert!(spend.record("m3", "Review", None, Some(0.0045)).is_ok());
        assert!(spend.reached().is_cancelled());
        assert_eq!(
            spend.reason().as_deref(),
            Some(
                "budget_exceeded: the run's budget of $0.0100 is spent ($0.0105: \"Draft\" $0.0060, \"Review\" $0.0045)"
            )
        );
        // Later calls do not rewrite why.
        let _ = spend.record("m2", "Draft", None, Some(1.0));
        assert!(
            spend
                .reason()
                .is_some_and(|reason| reason.contains("$0.0105"))
        );
    }

    #[test]
    fn a_module_budget_fails_the_module_and_leaves_the_run_going() {
        let spend = Spend::new(None);
        assert!(
            spend
                .record("m2", "Draft", Some(0.002), Some(0.001))
                .is_ok()
        );
        let error = spend
            .record("m2", "Draft", Some(0.002), Some(0.0015))
            .unwrap_err();
        assert_eq!(
            error,
            "budget_exceeded: \"Draft\" spent $0.0025 of its budget of $0.0020"
        );
        assert!(!spend.reached().is_cancelled());
        assert!((spend.total() - 0.0025).abs() < 1e-12);
    }
}
