//! Conditions: the caller's evaluators, registered by evaluator name.
//!
//! A snapshot's definition names each condition and the evaluator behind it
//! (`{"name": "ip", "evaluator": "ip-range"}`); items refer to conditions by name. Like the Java
//! agent core, the engine maps each condition name to the evaluator the caller registered under the
//! evaluator name. Unlike Java, values are compiled once per snapshot, not per request.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// Turns a condition's values (such as address ranges) into something that can be asked quickly.
///
/// An `Err` makes the condition "unsure" for every request: it is then taken in the engine's safe
/// direction (holds for deny items and allow exceptions, does not hold for allow items and deny
/// exceptions), as Java does with a failing evaluator.
pub trait ConditionEvaluator<C: ?Sized>: Send + Sync {
    /// Compiles the values of one condition of one item.
    fn compile(&self, values: &[String]) -> Result<Box<dyn CompiledCondition<C>>, String>;
}

/// One compiled condition, asked for every request an item could decide.
pub trait CompiledCondition<C: ?Sized>: Send + Sync {
    /// Whether the condition holds for a request's context. An `Err` (or a panic) is "unsure" and
    /// taken in the safe direction.
    fn holds(&self, context: &C) -> Result<bool, String>;
}

/// The evaluators a caller offers, by evaluator name.
pub struct Evaluators<C: ?Sized> {
    by_name: HashMap<String, Arc<dyn ConditionEvaluator<C>>>,
}

impl<C: ?Sized> Evaluators<C> {
    /// No evaluators: every conditional allow item is dead, every conditional deny item total.
    pub fn new() -> Self {
        Evaluators {
            by_name: HashMap::new(),
        }
    }

    /// Registers `evaluator` under `evaluator_name`, replacing one registered before.
    pub fn register(&mut self, evaluator_name: &str, evaluator: Arc<dyn ConditionEvaluator<C>>) {
        self.by_name.insert(evaluator_name.to_string(), evaluator);
    }

    /// The evaluator registered under a name.
    pub fn get(&self, evaluator_name: &str) -> Option<&Arc<dyn ConditionEvaluator<C>>> {
        self.by_name.get(evaluator_name)
    }

    /// The names registered, in no particular order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.by_name.keys().map(String::as_str)
    }
}

impl<C: ?Sized> Default for Evaluators<C> {
    fn default() -> Self {
        Evaluators::new()
    }
}

impl<C: ?Sized> Clone for Evaluators<C> {
    fn clone(&self) -> Self {
        Evaluators {
            by_name: self.by_name.clone(),
        }
    }
}

impl<C: ?Sized> fmt::Debug for Evaluators<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<&str> = self.names().collect();
        names.sort_unstable();
        f.debug_struct("Evaluators").field("names", &names).finish()
    }
}

/// A condition as an item holds it: compiled, or `None` when it cannot be evaluated (no evaluator
/// for its name, or its values did not compile), which is always "unsure".
pub(crate) type Condition<C> = Option<Arc<dyn CompiledCondition<C>>>;

/// Whether a condition holds; `unsure` is what a missing, failing or panicking evaluator counts as.
pub(crate) fn holds<C: ?Sized>(condition: &Condition<C>, context: &C, unsure: bool) -> bool {
    let Some(compiled) = condition else {
        return unsure;
    };
    let asked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| compiled.holds(context)));
    match asked {
        Ok(Ok(holds)) => holds,
        Ok(Err(_)) | Err(_) => unsure,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Never;

    impl ConditionEvaluator<()> for Never {
        fn compile(&self, _: &[String]) -> Result<Box<dyn CompiledCondition<()>>, String> {
            Err("never".to_string())
        }
    }

    #[test]
    fn a_clone_of_the_evaluators_registers_the_same_names() {
        let mut evaluators = Evaluators::<()>::new();
        evaluators.register("ip-range", Arc::new(Never));
        evaluators.register("listener", Arc::new(Never));
        let clone = evaluators.clone();
        let mut names: Vec<&str> = clone.names().collect();
        names.sort_unstable();
        assert_eq!(names, ["ip-range", "listener"]);
        assert!(clone.get("listener").is_some());
    }
}
