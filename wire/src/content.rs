//! What flows on ports and is shown in the app, declared once: the content
//! of the bundles that are more than text (merged responses, a comparison
//! of variants, a judge's scores, a coding module's changed files and test
//! results) and what a bundle's `meta` says. The engine and the coding
//! modules write these types, a judge and the app read them back, so a
//! field is named in one place and both sides agree by construction.
//! Receipts travel on their own port type ([`crate::bundle::Receipt`]).

pub mod coding;
pub mod comparison;
pub mod merged;
pub mod meta;
pub mod scores;

pub use crate::bundle::Receipt;
pub use coding::{ChangedFile, FileChange, TestResults, TestRun};
pub use comparison::{Comparison, VariantOutcome, VariantResult};
pub use merged::MergedResponses;
pub use scores::{ComparisonScores, CriterionScore, JudgeScores, VariantScores};
