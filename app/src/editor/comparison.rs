//! An experiment's variants side by side in the run panel (and so on the
//! run page, a shared experiment's report): each variant's response,
//! tokens, cost, duration, its own named outputs and (a coding variant)
//! what it changed, the judge's score and the winner, and a line diff
//! between two variants' outputs. Read from the module's
//! `comparison_out` and from the judge the comparison went to.

use graph::experiment::COMPARISON_OUT;
use graph::kinds::judge::{COMPARISON_IN, SCORES_OUT};
use leptos::prelude::*;
use wire::content::{Comparison, ComparisonScores};
use wire::{ActivationRecord, RunRecord};

use crate::canvas::model::duration_text;

/// One variant as the comparison shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct VariantRow {
    pub name: String,
    /// What it changes (`its own instruction, 1 re-prompt`).
    pub summary: String,
    pub completed: bool,
    /// Its merged output, or why it failed.
    pub text: String,
    pub tokens: u64,
    pub cost: Option<f64>,
    pub simulated: bool,
    pub duration_ms: u64,
    /// Its weighted score from the judge, when one scored it, out of
    /// `scale_max`.
    pub score: Option<f64>,
    pub scale_max: u64,
    pub winner: bool,
    /// The sections its last reply labelled, by name.
    pub named_outputs: Vec<(String, String)>,
    /// What a coding variant changed: its own unified diff.
    pub diff: Option<String>,
}

/// The variants of `activation`'s comparison, with the scores of the judge
/// its `comparison_out` fed in `record`; `None` for a module without
/// variants.
pub fn rows(activation: &ActivationRecord, record: Option<&RunRecord>) -> Option<Vec<VariantRow>> {
    let comparison = activation
        .outputs
        .get(COMPARISON_OUT)?
        .as_bundle()?
        .content_as::<Comparison>()?;
    let scores = record.and_then(|record| judge_scores(record, &activation.module_id));
    let scale_max = scores
        .as_ref()
        .map_or(10, |scores| u64::from(scores.scale_max));
    let rows = comparison
        .variants
        .into_iter()
        .map(|variant| {
            let receipt = variant.receipt();
            let failed = variant.text().is_empty() && !variant.completed();
            VariantRow {
                summary: variant.summary.clone(),
                completed: variant.completed(),
                text: if failed {
                    "failed".to_owned()
                } else {
                    variant.text().to_owned()
                },
                tokens: receipt.map_or(0, |receipt| receipt.tokens_in + receipt.tokens_out),
                cost: variant.cost(),
                simulated: receipt.is_some_and(|receipt| receipt.simulated),
                duration_ms: variant.duration_ms,
                score: scores
                    .as_ref()
                    .and_then(|scores| scores.weighted_score_of(&variant.name)),
                scale_max,
                winner: scores
                    .as_ref()
                    .is_some_and(|scores| scores.winner == variant.name),
                named_outputs: variant
                    .named_outputs()
                    .map(|named| {
                        named
                            .iter()
                            .map(|(name, text)| (name.clone(), text.clone()))
                            .collect()
                    })
                    .unwrap_or_default(),
                diff: variant
                    .diff()
                    .filter(|diff| !diff.trim().is_empty())
                    .map(str::to_owned),
                name: variant.name,
            }
        })
        .collect();
    Some(rows)
}

/// The scores of the judge that `module`'s comparison went to: its last
/// activation's `scores_out`, when it scored variants.
fn judge_scores(record: &RunRecord, module: &str) -> Option<ComparisonScores> {
    record
        .graph
        .cables
        .iter()
        .filter(|cable| {
            cable.from.module == module
                && cable.from.port == COMPARISON_OUT
                && cable.to.port == COMPARISON_IN
        })
        .find_map(|cable| {
            record
                .last(&cable.to.module)?
                .outputs
                .get(SCORES_OUT)?
                .as_bundle()?
                .content_as::<ComparisonScores>()
        })
}

/// A line of a diff between two texts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiffLine {
    Same(String),
    /// Only in the first text.
    Removed(String),
    /// Only in the second.
    Added(String),
}

/// The lines of `first` and `second`, the common ones once (the longest
/// common subsequence of lines).
pub fn line_diff(first: &str, second: &str) -> Vec<DiffLine> {
    let a: Vec<&str> = first.lines().collect();
    let b: Vec<&str> = second.lines().collect();
    // common[i][j]: the longest common run of a[i..] and b[j..].
    let mut common = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            common[i][j] = if a[i] == b[j] {
                common[i + 1][j + 1] + 1
            } else {
                common[i + 1][j].max(common[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut lines = Vec::new();
    while i < a.len() && j < b.len() {
        if a[i] == b[j] {
            lines.push(DiffLine::Same(a[i].to_owned()));
            i += 1;
            j += 1;
        } else if common[i + 1][j] >= common[i][j + 1] {
            lines.push(DiffLine::Removed(a[i].to_owned()));
            i += 1;
        } else {
            lines.push(DiffLine::Added(b[j].to_owned()));
            j += 1;
        }
    }
    lines.extend(
        a[i..]
            .iter()
            .map(|line| DiffLine::Removed((*line).to_owned())),
    );
    lines.extend(
        b[j..]
            .iter()
            .map(|line| DiffLine::Added((*line).to_owned())),
    );
    lines
}

/// The lines of a unified diff, marked as a line diff's are: what it adds,
/// removes, and the rest (headers and context).
pub fn unified_lines(diff: &str) -> Vec<DiffLine> {
    diff.lines()
        .map(|line| {
            let header = line.starts_with("+++") || line.starts_with("---");
            match line.chars().next() {
                Some('+') if !header => DiffLine::Added(line[1..].to_owned()),
                Some('-') if !header => DiffLine::Removed(line[1..].to_owned()),
                _ => DiffLine::Same(line.to_owned()),
            }
        })
        .collect()
}

/// Lines of a diff, each marked by what it does.
pub fn diff_spans(lines: Vec<DiffLine>) -> impl IntoView {
    lines
        .into_iter()
        .map(|line| match line {
            DiffLine::Same(text) => {
                view! { <span class="diff-same">{format!("  {text}\n")}</span> }
            }
            DiffLine::Removed(text) => {
                view! { <span class="diff-removed">{format!("- {text}\n")}</span> }
            }
            DiffLine::Added(text) => {
                view! { <span class="diff-added">{format!("+ {text}\n")}</span> }
            }
        })
        .collect_view()
}

/// What a variant cost, for its column.
fn cost_text(row: &VariantRow) -> String {
    if row.simulated {
        "free (simulated)".to_owned()
    } else {
        wire::cost::cost_text(row.cost)
    }
}

/// The variants side by side, and a diff of two of them.
#[component]
pub fn Comparison(rows: Signal<Vec<VariantRow>>) -> impl IntoView {
    let first = RwSignal::new(0usize);
    let second = RwSignal::new(1usize);
    let diff = Memo::new(move |_| {
        rows.with(|rows| {
            let text = |index: usize| rows.get(index).map_or("", |row| row.text.as_str());
            line_diff(text(first.get()), text(second.get()))
        })
    });
    let picker = move |chosen: RwSignal<usize>, label: &'static str| {
        view! {
            <select aria-label=label on:change=move |event| {
                if let Ok(index) = event_target_value(&event).parse::<usize>() {
                    chosen.set(index);
                }
            }>
                {move || rows.get().into_iter().enumerate().map(|(index, row)| {
                    view! { <option value=index.to_string() selected=move || chosen.get() == index>{row.name}</option> }
                }).collect_view()}
            </select>
        }
    };
    view! {
        <div class="comparison" role="tabpanel">
            <div class="variants" role="list" aria-label="Variants">
                {move || rows.get().into_iter().map(|row| {
                    let facts = format!(
                        "{} tok · {} · {}",
                        row.tokens,
                        cost_text(&row),
                        duration_text(row.duration_ms as f64)
                    );
                    view! {
                        <section
                            class="variant"
                            class:winner=row.winner
                            class:failed=!row.completed
                            role="listitem"
                            aria-label=format!("Variant {}", row.name)
                        >
                            <header>
                                <strong>{row.name.clone()}</strong>
                                {row.winner.then(|| view! { <span class="winner-mark">"★ winner"</span> })}
                                {row.score.map(|score| view! { <span class="variant-score" title="The judge's weighted score">{format!("{score:.1} / {}", row.scale_max)}</span> })}
                            </header>
                            <p class="hint">{row.summary.clone()}</p>
                            <p class="variant-facts">{if row.completed { facts } else { "failed".to_owned() }}</p>
                            <pre class="variant-text">{row.text.clone()}</pre>
                            <VariantExtras named_outputs=row.named_outputs diff=row.diff/>
                        </section>
                    }
                }).collect_view()}
            </div>
            <Show when=move || rows.with(|rows| rows.len() >= 2)>
                <div class="variant-diff">
                    <div class="variant-diff-pick">
                        "Diff "
                        {picker(first, "First variant of the diff")}
                        " → "
                        {picker(second, "Second variant of the diff")}
                    </div>
                    <pre class="diff" aria-label="Diff between the two variants">
                        {move || diff_spans(diff.get())}
                    </pre>
                </div>
            </Show>
        </div>
    }
}

/// A variant's own named outputs and what it changed, folded under its
/// reply.
#[component]
fn VariantExtras(named_outputs: Vec<(String, String)>, diff: Option<String>) -> impl IntoView {
    let named = (!named_outputs.is_empty()).then(|| {
        view! {
            <details class="variant-named">
                <summary>{format!("Named outputs ({})", named_outputs.len())}</summary>
                <dl>
                    {named_outputs.into_iter().map(|(name, text)| view! {
                        <dt>{name}</dt>
                        <dd><pre class="variant-named-text">{text}</pre></dd>
                    }).collect_view()}
                </dl>
            </details>
        }
    });
    let changes = diff.map(|diff| {
        let changed = diff.lines().filter(|line| line.starts_with("diff --git")).count();
        view! {
            <details class="variant-changes">
                <summary>{format!("Its changes ({changed} file{})", if changed == 1 { "" } else { "s" })}</summary>
                <pre class="variant-changes-text">{diff_spans(unified_lines(&diff))}</pre>
            </details>
        }
    });
    view! { {named} {changes} }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::content::{CriterionScore, VariantScores};
    use wire::{ContextBundle, PortValue};

    /// A module's comparison as the engine writes it, read back as the run
    /// record carries it.
    fn experiment_activation() -> ActivationRecord {
        let mut activation = ActivationRecord::new("m2", 1, 0);
        let comparison = Comparison::example();
        let bundle = ContextBundle {
            content_type: graph::experiment::COMPARISON_CONTENT_TYPE.to_owned(),
            ..ContextBundle::typed("m2", &comparison)
        };
        let stored = serde_json::to_string(&PortValue::Bundle(bundle)).unwrap();
        activation.outputs.insert(
            COMPARISON_OUT.to_owned(),
            serde_json::from_str(&stored).unwrap(),
        );
        activation
    }

    #[test]
    fn a_comparison_reads_every_variant_with_what_it_cost_and_why_it_failed() {
        let rows = rows(&experiment_activation(), None).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].name, "A");
        assert_eq!(rows[0].tokens, 15);
        assert_eq!(cost_text(&rows[0]), "free (simulated)");
        assert!(rows[0].completed);
        assert_eq!(rows[1].text, "the provider failed");
        assert!(!rows[1].completed);
        assert_eq!(rows[0].score, None);
        // A module without variants has no comparison.
        assert_eq!(super::rows(&ActivationRecord::new("m2", 1, 0), None), None);
    }

    #[test]
    fn the_judge_the_comparison_went_to_gives_the_scores_and_the_winner() {
        let example = graph::starter::example("which-prompt-is-better").unwrap();
        let mut judge = ActivationRecord::new("judge", 1, 0);
        let scored = |variant: &str, weighted_score: f64| VariantScores {
            variant: variant.to_owned(),
            scores: vec![CriterionScore {
                criterion: "Clarity".to_owned(),
                score: 5.into(),
                reasoning: String::new(),
            }],
            weighted_score,
        };
        let scores = ComparisonScores {
            variants: vec![scored("A", 4.5), scored("B", 7.0)],
            winner: "B".to_owned(),
            summary: "B is clearer.".to_owned(),
            scale_max: 10,
        };
        judge.outputs.insert(
            SCORES_OUT.to_owned(),
            PortValue::Bundle(ContextBundle::typed("judge", &scores)),
        );
        let mut draft = experiment_activation();
        draft.module_id = "draft".to_owned();
        let mut modules = std::collections::BTreeMap::new();
        modules.insert(
            "judge".to_owned(),
            wire::run::ModuleRecord {
                activations: vec![judge],
            },
        );
        let record = RunRecord {
            id: "r_1".to_owned(),
            graph_id: None,
            graph_revision: None,
            status: wire::RunStatus::Completed,
            error: None,
            created_at: 0,
            started_at: None,
            finished_at: None,
            input: wire::RunInput::default(),
            graph: example.graph,
            modules,
            state: std::collections::BTreeMap::new(),
            last_event_id: 0,
            budget_usd: None,
            from: None,
        };
        let rows = rows(&draft, Some(&record)).unwrap();
        assert_eq!(rows[0].score, Some(4.5));
        assert!(!rows[0].winner);
        assert!(rows[1].winner);
        assert_eq!(rows[1].scale_max, 10);
    }

    #[test]
    fn a_variant_shows_its_own_named_outputs_and_diff() {
        let mut activation = experiment_activation();
        let mut comparison = Comparison::example();
        if let wire::content::VariantOutcome::Completed {
            named_outputs,
            diff,
            ..
        } = &mut comparison.variants[0].outcome
        {
            named_outputs.insert("Summary".to_owned(), "Short.".to_owned());
            *diff = Some("diff --git a/x b/x\n--- a/x\n+++ b/x\n-old\n+new\n".to_owned());
        }
        activation.outputs.insert(
            COMPARISON_OUT.to_owned(),
            PortValue::Bundle(ContextBundle {
                content_type: graph::experiment::COMPARISON_CONTENT_TYPE.to_owned(),
                ..ContextBundle::typed("m2", &comparison)
            }),
        );
        let rows = rows(&activation, None).unwrap();
        assert_eq!(
            rows[0].named_outputs,
            [("Summary".to_owned(), "Short.".to_owned())]
        );
        let diff = rows[0].diff.as_deref().unwrap();
        assert_eq!(
            unified_lines(diff),
            [
                DiffLine::Same("diff --git a/x b/x".to_owned()),
                DiffLine::Same("--- a/x".to_owned()),
                DiffLine::Same("+++ b/x".to_owned()),
                DiffLine::Removed("old".to_owned()),
                DiffLine::Added("new".to_owned()),
            ]
        );
        assert!(rows[1].named_outputs.is_empty() && rows[1].diff.is_none());
    }

    #[test]
    fn a_line_diff_keeps_the_common_lines_once() {
        assert_eq!(
            line_diff("a\nb\nc", "a\nc\nd"),
            [
                DiffLine::Same("a".to_owned()),
                DiffLine::Removed("b".to_owned()),
                DiffLine::Same("c".to_owned()),
                DiffLine::Added("d".to_owned()),
            ]
        );
        assert_eq!(line_diff("", "x"), [DiffLine::Added("x".to_owned())]);
        assert_eq!(
            line_diff("same", "same"),
            [DiffLine::Same("same".to_owned())]
        );
    }
}
