//! For every validation code: a graph that triggers it and a near-identical
//! one that does not (PRODUCT §1.3).

#![allow(clippy::expect_used, clippy::unwrap_used)] // a test that cannot load its fixture should panic
use graph::{Code, Graph, Severity, ValidationContext, validate};
use serde_json::{Value, json};

fn module(id: &str, kind: &str, config: Value) -> Value {
    json!({"id": id, "kind": kind, "label": id, "position": {"x": 0, "y": 0}, "config": config})
}

fn cable(id: &str, from: (&str, &str), to: (&str, &str)) -> Value {
    json!({"id": id, "from": {"module": from.0, "port": from.1}, "to": {"module": to.0, "port": to.1}})
}

fn load(modules: Vec<Value>, cables: Vec<Value>) -> Graph {
    Graph::from_value(json!({"modules": modules, "cables": cables})).expect("test graph loads")
}

fn codes_with(graph: &Graph, context: &ValidationContext) -> Vec<Code> {
    validate(graph, context)
        .into_iter()
        .map(|finding| finding.code)
        .collect()
}

fn codes(graph: &Graph) -> Vec<Code> {
    codes_with(graph, &ValidationContext::default())
}

/// input m1 → agent task m2 (with `task`) → output m3.
fn chain(task: Value) -> Graph {
    load(
        vec![
            module("m1", "step.input", json!({})),
            module("m2", "step.agent_task", task),
            module("m3", "step.output", json!({})),
        ],
        vec![
            cable("c1", ("m1", "data_out"), ("m2", "data_in")),
            cable("c2", ("m2", "data_out"), ("m3", "data_in")),
        ],
    )
}

#[test]
fn the_plain_chain_has_no_findings() {
    assert_eq!(codes(&chain(json!({"instruction": "Write"}))), []);
}

#[test]
fn reprompt_empty() {
    let bad = chain(json!({"re_prompts": ["Review your work", "   "]}));
    let findings = validate(&bad, &ValidationContext::default());
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].code, Code::RepromptEmpty);
    assert_eq!(findings[0].severity, Severity::Error);
    assert_eq!(findings[0].module_id.as_deref(), Some("m2"));
    assert_eq!(
        findings[0].path.as_deref(),
        Some("modules[1].config.re_prompts[1]")
    );
    assert!(
        findings[0].message.contains("Re-prompt 2"),
        "{}",
        findings[0].message
    );

    let good = chain(json!({"re_prompts": ["Review your work", "Finalize"]}));
    assert_eq!(codes(&good), []);
}

#[test]
fn reprompt_empty_on_a_coding_agent() {
    let coding = |text: &str| {
        load(
            vec![module(
                "m1",
                "step.coding",
                json!({"agents": [{"role": "builder", "re_prompts": ["Run the tests"]},
                                  {"role": "reviewer", "re_prompts": [text]}]}),
            )],
            vec![],
        )
    };
    let findings = validate(&coding(""), &ValidationContext::default());
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].code, Code::RepromptEmpty);
    assert_eq!(
        findings[0].path.as_deref(),
        Some("modules[0].config.agents[1].re_prompts[0]")
    );
    assert!(findings[0].message.contains("reviewer"));
    assert_eq!(codes(&coding("Reconsider your review")), []);
}

#[test]
fn reprompt_too_many() {
    let prompts = |count: usize| -> Vec<String> {
        (1..=count).map(|index| format!("Pass {index}")).collect()
    };
    let bad = chain(json!({"re_prompts": prompts(11)}));
    let findings = validate(&bad, &ValidationContext::default());
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].code, Code::RepromptTooMany);
    assert_eq!(findings[0].severity, Severity::Warning);
    assert_eq!(codes(&chain(json!({"re_prompts": prompts(10)}))), []);
}

#[test]
fn reprompt_unsupported() {
    let transform = |config: Value| {
        load(
            vec![
                module("m1", "step.input", json!({})),
                module("m2", "step.transform", config),
            ],
            vec![cable("c1", ("m1", "data_out"), ("m2", "data_in"))],
        )
    };
    let bad = transform(json!({"instruction": "Shorten", "re_prompts": ["Shorter"]}));
    assert_eq!(codes(&bad), [Code::RepromptUnsupported]);
    let good = transform(json!({"instruction": "Shorten"}));
    assert_eq!(codes(&good), []);
    // The unsupported field is kept in the document, not dropped.
    let written = serde_json::to_value(&bad).unwrap();
    assert_eq!(
        written["modules"][1]["config"]["re_prompts"],
        json!(["Shorter"])
    );
}

/// The other kinds that take no re-prompts (PRODUCT §1.2): the same code,
/// and nothing else changes.
#[test]
fn reprompt_unsupported_on_panel_judge_and_claim_extractor() {
    for (kind, port) in [
        ("step.panel", "data_in"),
        ("step.judge", "target_in"),
        ("step.claim_extractor", "data_in"),
    ] {
        let with = |config: Value| {
            load(
                vec![
                    module("m1", "step.input", json!({})),
                    module("m2", kind, config),
                ],
                vec![cable("c1", ("m1", "data_out"), ("m2", port))],
            )
        };
        let good = codes(&with(json!({"instruction": "Weigh it"})));
        let mut bad = codes(&with(
            json!({"instruction": "Weigh it", "re_prompts": ["Again"]}),
        ));
        let at = bad
            .iter()
            .position(|code| *code == Code::RepromptUnsupported)
            .unwrap_or_else(|| panic!("{kind}: no reprompt_unsupported in {bad:?}"));
        bad.remove(at);
        assert_eq!(bad, good, "{kind}");
        // An empty list is no re-prompt.
        assert_eq!(
            codes(&with(json!({"instruction": "Weigh it", "re_prompts": []}))),
            good,
            "{kind}"
        );
    }
}

fn wired_to_reprompt_port(separate_outputs: bool, re_prompts: Value) -> Graph {
    load(
        vec![
            module("m1", "step.input", json!({})),
            module(
                "m2",
                "step.agent_task",
                json!({"re_prompts": re_prompts, "separate_outputs": separate_outputs}),
            ),
            module("m3", "step.output", json!({})),
        ],
        vec![
            cable("c1", ("m1", "data_out"), ("m2", "data_in")),
            cable("c2", ("m2", "reprompt_2_out"), ("m3", "data_in")),
        ],
    )
}

#[test]
fn dangling_cable_when_separate_outputs_is_unticked() {
    let good = wired_to_reprompt_port(true, json!(["Review", "Finalize"]));
    assert_eq!(codes(&good), []);

    let bad = wired_to_reprompt_port(false, json!(["Review", "Finalize"]));
    let findings = validate(&bad, &ValidationContext::default());
    let dangling: Vec<_> = findings
        .iter()
        .filter(|finding| finding.code == Code::DanglingCable)
        .collect();
    assert_eq!(dangling.len(), 1);
    assert_eq!(dangling[0].severity, Severity::Warning);
    assert_eq!(dangling[0].cable_id.as_deref(), Some("c2"));
    // In the person's words: labels and port titles, no ids.
    assert_eq!(
        dangling[0].message,
        "The cable from “m2” · Re-prompt 2 to “m3” · Results starts at an output that no longer exists; wire it again or delete it"
    );
    // The cable stays in the document; only a warning says it leads nowhere.
    assert_eq!(bad.cables.len(), 2);
    // With its only cable dangling, the output's required input is unwired.
    assert!(
        findings
            .iter()
            .any(|finding| finding.code == Code::RequiredInputMissing)
    );
}

#[test]
fn dangling_cable_when_a_wired_re_prompt_is_removed() {
    let bad = wired_to_reprompt_port(true, json!(["Review"]));
    let dangling = codes(&bad)
        .into_iter()
        .filter(|code| *code == Code::DanglingCable)
        .count();
    assert_eq!(dangling, 1);
    assert_eq!(bad.cables.len(), 2);
}

#[test]
fn dangling_cable_when_its_module_is_gone() {
    let bad = load(
        vec![
            module("m1", "step.input", json!({})),
            module("m3", "step.output", json!({})),
        ],
        vec![
            cable("c1", ("m1", "data_out"), ("m3", "data_in")),
            cable("c2", ("m2", "data_out"), ("m3", "data_in")),
        ],
    );
    assert_eq!(codes(&bad), [Code::DanglingCable]);
    let findings = validate(&bad, &ValidationContext::default());
    assert_eq!(
        findings[0].message,
        "A cable from a module that was deleted to “m3” leads to a module that no longer exists; delete it"
    );
}

#[test]
fn port_type_mismatch() {
    let graph_with = |from_port: &str| {
        load(
            vec![
                module("m1", "step.input", json!({})),
                module("m2", "step.agent_task", json!({})),
                module("m3", "step.output", json!({})),
            ],
            vec![
                cable("c1", ("m1", "data_out"), ("m2", "data_in")),
                cable("c2", ("m2", from_port), ("m3", "data_in")),
            ],
        )
    };
    let findings = validate(&graph_with("signal_out"), &ValidationContext::default());
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].code, Code::PortTypeMismatch);
    assert_eq!(findings[0].cable_id.as_deref(), Some("c2"));
    assert_eq!(
        findings[0].message,
        "The cable from “m2” · Done to “m3” · Results joins ports that do not fit: a signal output cannot feed a bundle input"
    );
    assert_eq!(codes(&graph_with("data_out")), []);
    // A receipt may feed a bundle input.
    assert_eq!(codes(&graph_with("receipt_out")), []);
}

#[test]
fn required_input_missing() {
    let judge = |wired: bool| {
        let mut cables = vec![cable("c1", ("m1", "data_out"), ("m2", "comparison_in"))];
        if wired {
            cables.push(cable("c2", ("m1", "data_out"), ("m2", "target_in")));
        }
        load(
            vec![
                module("m1", "step.input", json!({})),
                module("m2", "step.judge", json!({"rubric": [{"name": "Clarity"}]})),
            ],
            cables,
        )
    };
    let findings = validate(&judge(false), &ValidationContext::default());
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].code, Code::RequiredInputMissing);
    assert_eq!(findings[0].module_id.as_deref(), Some("m2"));
    assert!(findings[0].message.contains("Target"));
    assert_eq!(codes(&judge(true)), []);
}

/// Agent task `a` and review gate `g` in a revision loop, optionally fed by
/// an input module.
fn review_loop(fed: bool) -> Graph {
    let mut cables = vec![
        cable("c1", ("a", "data_out"), ("g", "data_in")),
        cable("c2", ("g", "revise_out"), ("a", "context_in")),
    ];
    if fed {
        cables.push(cable("c3", ("in", "data_out"), ("a", "data_in")));
    }
    load(
        vec![
            module("in", "step.input", json!({})),
            module("a", "step.agent_task", json!({"session_persist": true})),
            module("g", "step.agent_review_gate", json!({"max_rounds": 3})),
        ],
        cables,
    )
}

#[test]
fn unwired_failure() {
    // A review gate whose request for revision leads nowhere.
    let gate = load(
        vec![
            module("in", "step.input", json!({})),
            module("a", "step.agent_task", json!({})),
            module("g", "step.agent_review_gate", json!({})),
            module("out", "step.output", json!({})),
        ],
        vec![
            cable("c1", ("in", "data_out"), ("a", "data_in")),
            cable("c2", ("a", "data_out"), ("g", "data_in")),
            cable("c3", ("g", "approved_out"), ("out", "data_in")),
        ],
    );
    let findings = validate(&gate, &ValidationContext::default());
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].code, Code::UnwiredFailure);
    assert_eq!(findings[0].severity, Severity::Warning);
    assert_eq!(findings[0].module_id.as_deref(), Some("g"));
    assert!(
        findings[0]
            .message
            .contains("a request for revision (revise_out)"),
        "{}",
        findings[0].message
    );
    // Wired back, it is handled.
    assert_eq!(codes(&review_loop(true)), []);

    // A command's failed check, and the fix: a cable from Fail.
    let command = |fail_wired: bool| {
        let mut cables = vec![
            cable("c1", ("in", "data_out"), ("t", "data_in")),
            cable("c2", ("t", "pass_out"), ("out", "data_in")),
        ];
        if fail_wired {
            cables.push(cable("c3", ("t", "fail_out"), ("out", "data_in")));
        }
        load(
            vec![
                module("in", "step.input", json!({})),
                module("t", "step.command", json!({"command": "cargo test"})),
                module("out", "step.output", json!({})),
            ],
            cables,
        )
    };
    assert_eq!(codes(&command(false)), [Code::UnwiredFailure]);
    assert_eq!(codes(&command(true)), []);
    // An unwired error is not warned about: any module can have one, and
    // the run failing with its name is the default a person expects.
    assert_eq!(codes(&chain(json!({"instruction": "Write"}))), []);
}

/// input → classifier → three outputs, the cables from the classifier's
/// `data_out` carrying `conditions` in order (`None` = no condition).
fn branches(conditions: &[Option<&str>]) -> Graph {
    let mut modules = vec![
        module("in", "step.input", json!({})),
        module("classify", "step.agent_task", json!({})),
    ];
    let mut cables = vec![cable("c0", ("in", "data_out"), ("classify", "data_in"))];
    for (position, condition) in conditions.iter().enumerate() {
        let target = format!("out{position}");
        modules.push(module(&target, "step.output", json!({})));
        let mut branch = cable(
            &format!("c{}", position + 1),
            ("classify", "data_out"),
            (&target, "data_in"),
        );
        if let Some(condition) = condition {
            branch["condition"] = json!(condition);
        }
        cables.push(branch);
    }
    load(modules, cables)
}

const SALES: Option<&str> = Some("get('$.output.intent') == 'sales'");
const SUPPORT: Option<&str> = Some("get('$.output.intent') == 'support'");

#[test]
fn condition_invalid() {
    let bad = branches(&[Some("get('$.output.intent') = 'sales'"), SUPPORT, None]);
    let findings = validate(&bad, &ValidationContext::default());
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].code, Code::ConditionInvalid);
    assert_eq!(findings[0].severity, Severity::Error);
    assert_eq!(findings[0].cable_id.as_deref(), Some("c1"));
    assert_eq!(findings[0].path.as_deref(), Some("cables[1].condition"));
    assert!(
        findings[0].message.contains("`==`") && findings[0].message.contains("character 24"),
        "{}",
        findings[0].message
    );
    assert_eq!(codes(&branches(&[SALES, SUPPORT, None])), []);
    // A blank condition is no condition.
    assert_eq!(
        codes(&branches(&[SALES, Some("  "), None])),
        [Code::ConditionUnreachable]
    );
}

#[test]
fn condition_no_catch_all() {
    let findings = validate(&branches(&[SALES, SUPPORT]), &ValidationContext::default());
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].code, Code::ConditionNoCatchAll);
    assert_eq!(findings[0].severity, Severity::Warning);
    assert_eq!(findings[0].cable_id.as_deref(), Some("c2"));
    assert!(
        findings[0].message.contains("“classify” · data_out"),
        "{}",
        findings[0].message
    );
    assert_eq!(codes(&branches(&[SALES, SUPPORT, None])), []);
    // Cables with no condition at all fan out, as ever.
    assert_eq!(codes(&branches(&[None, None, None])), []);
}

#[test]
fn condition_unreachable() {
    let findings = validate(
        &branches(&[SALES, None, SUPPORT]),
        &ValidationContext::default(),
    );
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].code, Code::ConditionUnreachable);
    assert_eq!(findings[0].cable_id.as_deref(), Some("c3"));
    assert!(
        findings[0].message.contains("number 2"),
        "{}",
        findings[0].message
    );
}

#[test]
fn orphan_module() {
    let findings = validate(&review_loop(false), &ValidationContext::default());
    let orphans: Vec<&str> = findings
        .iter()
        .filter(|finding| finding.code == Code::OrphanModule)
        .filter_map(|finding| finding.module_id.as_deref())
        .collect();
    assert_eq!(orphans, ["a", "g"]);
    assert!(
        findings
            .iter()
            .all(|finding| finding.severity == Severity::Warning)
    );
    assert_eq!(codes(&review_loop(true)), []);
}

#[test]
fn no_entry() {
    let bad = load(
        vec![
            module("a", "step.agent_task", json!({})),
            module("g", "step.agent_review_gate", json!({})),
        ],
        vec![
            cable("c1", ("a", "data_out"), ("g", "data_in")),
            cable("c2", ("g", "revise_out"), ("a", "context_in")),
        ],
    );
    assert_eq!(codes(&bad), [Code::NoEntry]);
    let good = load(
        vec![
            module("a", "step.agent_task", json!({})),
            module("g", "step.agent_review_gate", json!({})),
        ],
        vec![cable("c1", ("a", "data_out"), ("g", "data_in"))],
    );
    // It can start; the revision that now leads nowhere is a finding of its own.
    assert_eq!(codes(&good), [Code::UnwiredFailure]);
    assert_eq!(codes(&load(vec![], vec![])), [Code::NoEntry]);
}

#[test]
fn unbounded_cycle() {
    let two_tasks = |back_port: &str, back_kind: &str, mut back_config: Value| {
        if back_kind == "step.command" {
            back_config["command"] = json!("cargo test");
        }
        load(
            vec![
                module("in", "step.input", json!({})),
                module("a", "step.agent_task", json!({})),
                module("b", back_kind, back_config),
            ],
            vec![
                cable("c1", ("in", "data_out"), ("a", "data_in")),
                cable("c2", ("a", "data_out"), ("b", "data_in")),
                cable("c3", ("b", back_port), ("a", "context_in")),
            ],
        )
    };
    // a → b → a with b an agent task: nothing ends the loop.
    let bad = load(
        vec![
            module("in", "step.input", json!({})),
            module("a", "step.agent_task", json!({})),
            module("b", "step.agent_task", json!({})),
        ],
        vec![
            cable("c1", ("in", "data_out"), ("a", "data_in")),
            cable("c2", ("a", "data_out"), ("b", "data_in")),
            cable("c3", ("b", "data_out"), ("a", "context_in")),
        ],
    );
    let findings = validate(&bad, &ValidationContext::default());
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].code, Code::UnboundedCycle);
    assert_eq!(findings[0].module_id.as_deref(), Some("a"));
    // The same loop closed through a command's fail_out is not bounded by
    // it: the command fails the same way each time round…
    assert_eq!(
        codes(&two_tasks("fail_out", "step.command", json!({}))),
        [Code::UnboundedCycle]
    );
    // …unless it has attempts to use up, after which it gives up, out of
    // the loop…
    assert_eq!(
        codes(&two_tasks(
            "fail_out",
            "step.command",
            json!({"max_attempts": 3})
        )),
        []
    );
    // …but not when giving up leads back into it.
    let mut round_again = two_tasks("fail_out", "step.command", json!({"max_attempts": 3}));
    round_again.cables.push(
        serde_json::from_value(cable("c4", ("b", "give_up_out"), ("a", "context_in"))).unwrap(),
    );
    assert_eq!(codes(&round_again), [Code::UnboundedCycle]);
    // A review gate bounds a loop by its rounds…
    assert_eq!(codes(&review_loop(true)), []);
    // …and an intent gate by the model's choice under the activation limit.
    let intent_loop = two_tasks(
        "next_out",
        "step.agent_task",
        json!({"intent_gate": {"allowed_intents": ["next", "closing"]}}),
    );
    assert_eq!(codes(&intent_loop), []);
    // A module cabled to itself is a loop too.
    let self_loop = load(
        vec![
            module("in", "step.input", json!({})),
            module("a", "step.agent_task", json!({})),
        ],
        vec![
            cable("c1", ("in", "data_out"), ("a", "data_in")),
            cable("c2", ("a", "data_out"), ("a", "context_in")),
        ],
    );
    assert_eq!(codes(&self_loop), [Code::UnboundedCycle]);
}

#[test]
fn coding_no_agents() {
    let coding = |agents: Value| {
        load(
            vec![module("m1", "step.coding", json!({"agents": agents}))],
            vec![],
        )
    };
    assert_eq!(codes(&coding(json!([]))), [Code::CodingNoAgents]);
    assert_eq!(codes(&coding(json!([{"role": "builder"}]))), []);
}

#[test]
fn unknown_kind() {
    let one = |kind: &str| load(vec![module("m1", kind, json!({}))], vec![]);
    let findings = validate(&one("step.teleport"), &ValidationContext::default());
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].code, Code::UnknownKind);
    assert!(findings[0].message.contains("step.teleport"));
    assert_eq!(codes(&one("step.input")), []);
}

#[test]
fn unknown_provider() {
    let context = ValidationContext {
        providers: Some(vec!["sim".to_owned(), "openai".to_owned()]),
        ..ValidationContext::default()
    };
    let with_provider =
        |provider: &str| chain(json!({"agent_config": {"provider": provider, "model": "x"}}));
    let findings = validate(&with_provider("anthropic-prod"), &context);
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].code, Code::UnknownProvider);
    assert_eq!(
        findings[0].path.as_deref(),
        Some("modules[1].config.agent_config.provider")
    );
    assert_eq!(codes_with(&with_provider("openai"), &context), []);
    // Without knowing the server's providers, nothing is guessed.
    assert_eq!(codes(&with_provider("anthropic-prod")), []);
}

#[test]
fn unknown_acp_profile() {
    let context = ValidationContext {
        acp_profiles: Some(vec!["sim-agent".to_owned()]),
        ..ValidationContext::default()
    };
    let coding = |profile: Value| {
        load(
            vec![module(
                "m1",
                "step.coding",
                json!({"agents": [{"role": "builder", "acp_profile_id": profile}]}),
            )],
            vec![],
        )
    };
    assert_eq!(
        codes_with(&coding(json!("claude-code")), &context),
        [Code::UnknownAcpProfile]
    );
    assert_eq!(codes_with(&coding(json!("sim-agent")), &context), []);
    // null is the server's default profile.
    assert_eq!(codes_with(&coding(Value::Null), &context), []);
}

#[test]
fn template_unresolved() {
    let with_instruction = |instruction: &str| chain(json!({"instruction": instruction}));
    for resolvable in [
        "Write about {{ input }}",
        "Run {{ run_id }}: expand {{ m1.output }}",
        "Tokens so far: {{m1.tokens_out}}",
    ] {
        assert_eq!(codes(&with_instruction(resolvable)), [], "{resolvable}");
    }
    for unresolvable in [
        "Expand {{ Draft.output }}", // no such label upstream
        "Expand {{ m1.colour }}",    // not a state key
        "Expand {{ m3.output }}",    // downstream, not upstream
        "Expand {{ whatever }}",     // neither built-in nor label.key
    ] {
        let findings = validate(
            &with_instruction(unresolvable),
            &ValidationContext::default(),
        );
        assert_eq!(findings.len(), 1, "{unresolvable}");
        assert_eq!(findings[0].code, Code::TemplateUnresolved, "{unresolvable}");
        assert_eq!(
            findings[0].path.as_deref(),
            Some("modules[1].config.instruction")
        );
    }
    // Variables in re-prompts are checked too.
    let in_re_prompt = chain(json!({"re_prompts": ["Compare with {{ Nobody.output }}"]}));
    assert_eq!(codes(&in_re_prompt), [Code::TemplateUnresolved]);

    // Retry variables have values only in the retry instruction…
    let retrying = |config: Value| {
        let findings = validate(&chain(config), &ValidationContext::default());
        findings
            .into_iter()
            .map(|finding| (finding.path.unwrap_or_default(), finding.message))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        retrying(json!({"max_attempts": 3,
            "retry_instruction": "Attempt {{ attempt }} after {{ error }}; before: {{ prev.output }} on {{ input }}"})),
        []
    );
    for (place, config) in [
        (
            "instruction",
            json!({"instruction": "Attempt {{ attempt }}"}),
        ),
        ("re_prompts[0]", json!({"re_prompts": ["Fix {{ error }}"]})),
        (
            "agent_config.system",
            json!({"agent_config": {"system": "Was: {{ prev.output }}"}}),
        ),
    ] {
        let found = retrying(config);
        assert_eq!(found.len(), 1, "{place}: {found:?}");
        assert_eq!(found[0].0, format!("modules[1].config.{place}"));
        assert!(found[0].1.contains("retry variable"), "{}", found[0].1);
    }
    // …and `diff` only in a coding module's.
    let found = retrying(json!({"max_attempts": 2, "retry_instruction": "Undo {{ diff }}"}));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "modules[1].config.retry_instruction");
    assert!(
        found[0]
            .1
            .contains("a retry variable (attempt, error, prev.output)"),
        "{}",
        found[0].1
    );
    let coding = load(
        vec![module(
            "m1",
            "step.coding",
            json!({"agents": [{"role": "builder"}], "max_attempts": 2,
                   "retry_instruction": "The last try changed {{ diff }}; it failed with {{ error }}"}),
        )],
        vec![],
    );
    assert_eq!(codes(&coding), []);
}

#[test]
fn retry_invalid() {
    let findings = validate(
        &chain(json!({"max_attempts": 0, "backoff_seconds": 7200, "timeout_seconds": 0})),
        &ValidationContext::default(),
    );
    let paths: Vec<(&str, Code)> = findings
        .iter()
        .map(|finding| (finding.path.as_deref().unwrap_or(""), finding.code))
        .collect();
    assert_eq!(
        paths,
        [
            ("modules[1].config.max_attempts", Code::RetryInvalid),
            ("modules[1].config.backoff_seconds", Code::RetryInvalid),
            ("modules[1].config.timeout_seconds", Code::RetryInvalid),
        ]
    );
    assert!(
        findings[0]
            .message
            .contains("between 1 (no retries) and 20")
    );
    assert_eq!(findings[0].severity, Severity::Error);
    assert_eq!(
        codes(&chain(
            json!({"max_attempts": 20, "backoff_seconds": 3600, "timeout_seconds": 60})
        )),
        // The attempts give the module a give_up_out and the timeout a
        // timeout_out; unwired, each fails the run naming the module, as
        // an error does, which is no finding.
        []
    );
}

#[test]
fn repeat_without_attempts() {
    let gate = json!({"allowed_intents": ["next", "repeat"]});
    let findings = validate(
        &gated(gate.clone(), &[], json!({})),
        &ValidationContext::default(),
    );
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].code, Code::RepeatWithoutAttempts);
    assert_eq!(findings[0].severity, Severity::Warning);
    assert_eq!(
        findings[0].path.as_deref(),
        Some("modules[1].config.max_attempts")
    );
    assert!(findings[0].message.contains("2 or more attempts"));
    // Attempts to repeat into, or no repeat, and it is gone.
    assert_eq!(codes(&gated(gate, &[], json!({"max_attempts": 2}))), []);
    assert_eq!(
        codes(&gated(json!({"allowed_intents": ["next"]}), &[], json!({}))),
        []
    );
}

#[test]
fn workspace_path_not_allowed() {
    let coding = |path: &str| {
        load(
            vec![module(
                "m1",
                "step.coding",
                json!({"workspace": {"path": path}, "agents": [{"role": "builder"}]}),
            )],
            vec![],
        )
    };
    let context = |roots: &[&str]| ValidationContext {
        workspace_roots: Some(roots.iter().map(|root| (*root).to_owned()).collect()),
        ..ValidationContext::default()
    };
    let allowed = context(&["/srv/projects"]);
    let findings = validate(&coding("/etc"), &allowed);
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].code, Code::WorkspacePathNotAllowed);
    assert_eq!(findings[0].severity, Severity::Error);
    assert_eq!(
        findings[0].path.as_deref(),
        Some("modules[0].config.workspace.path")
    );
    assert!(
        findings[0].message.contains("/srv/projects"),
        "{}",
        findings[0].message
    );
    // `..` does not climb out of a root.
    assert_eq!(
        codes_with(&coding("/srv/projects/../../etc"), &allowed),
        [Code::WorkspacePathNotAllowed]
    );
    assert_eq!(codes_with(&coding("/srv/projects/app"), &allowed), []);
    // With no roots, no folder is allowed, and the message says how to allow one.
    let none = validate(&coding("/srv/projects/app"), &context(&[]));
    assert_eq!(none.len(), 1);
    assert!(
        none[0].message.contains("--workspace-roots"),
        "{}",
        none[0].message
    );
    // An empty path is a fresh repository, always allowed.
    assert_eq!(codes_with(&coding(""), &context(&[])), []);
    // Without knowing the server's roots, nothing is guessed.
    assert_eq!(codes(&coding("/etc")), []);
}

#[test]
fn attachment_unsupported() {
    let with = |media_type: &str| {
        chain(json!({"re_prompts": [{"text": "Use it", "attachments": [
            {"id": "a_x", "name": "file", "media_type": media_type, "size_bytes": 3}
        ]}]}))
    };
    let findings = validate(&with("application/zip"), &ValidationContext::default());
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].code, Code::AttachmentUnsupported);
    assert_eq!(findings[0].severity, Severity::Error);
    assert_eq!(
        findings[0].path.as_deref(),
        Some("modules[1].config.re_prompts[0].attachments[0]")
    );
    assert!(findings[0].message.contains("PNG, JPEG, GIF or WebP"));
    assert_eq!(codes(&with("text/markdown")), []);
    assert_eq!(codes(&with("image/webp")), []);
    // The primary instruction's attachments too.
    let primary = chain(
        json!({"attachments": [{"id": "a_y", "name": "x.pdf", "media_type": "application/pdf", "size_bytes": 1}]}),
    );
    assert_eq!(codes(&primary), [Code::AttachmentUnsupported]);
}

/// input → gated agent task → an output on `next_out` (and on each port
/// in `also_wired`).
fn gated(gate: Value, also_wired: &[&str], task: Value) -> Graph {
    let mut config = task;
    config["intent_gate"] = gate;
    let mut modules = vec![
        module("in", "step.input", json!({})),
        module("decide", "step.agent_task", config),
        module("next", "step.output", json!({})),
    ];
    let mut cables = vec![
        cable("c0", ("in", "data_out"), ("decide", "data_in")),
        cable("c1", ("decide", "next_out"), ("next", "data_in")),
    ];
    for (position, port) in also_wired.iter().enumerate() {
        let target = format!("out{position}");
        modules.push(module(&target, "step.output", json!({})));
        cables.push(cable(
            &format!("w{position}"),
            ("decide", port),
            (&target, "data_in"),
        ));
    }
    load(modules, cables)
}

#[test]
fn intent_gate_invalid() {
    let good = json!({"allowed_intents": ["next", "repeat", "abort"], "intent_field": "decision.intent", "handoff_fields": ["summary", "category: billing | sales"]});
    assert_eq!(
        codes(&gated(good.clone(), &[], json!({"max_attempts": 3}))),
        []
    );
    let findings = validate(
        &gated(
            json!({"allowed_intents": ["next"], "intent_field": "decision..intent", "handoff_fields": ["reason"]}),
            &[],
            json!({}),
        ),
        &ValidationContext::default(),
    );
    let paths: Vec<&str> = findings
        .iter()
        .filter_map(|finding| finding.path.as_deref())
        .collect();
    assert_eq!(
        paths,
        [
            "modules[1].config.intent_gate.intent_field",
            "modules[1].config.intent_gate.handoff_fields[0]"
        ],
        "{findings:?}"
    );
    assert!(
        findings
            .iter()
            .all(|finding| finding.code == Code::IntentGateInvalid
                && finding.severity == Severity::Error)
    );
    assert!(
        findings[0]
            .message
            .contains("The intent gate of \"decide\"")
            && findings[0].message.contains("step 2"),
        "{}",
        findings[0].message
    );
    // No fallback for a gate that does not fail fast.
    let lenient = json!({"allowed_intents": ["next"], "fail_fast": false});
    assert_eq!(
        codes(&gated(lenient, &[], json!({}))),
        [Code::IntentGateInvalid]
    );
    // Named outputs shape the last reply, which the gate makes JSON.
    assert_eq!(
        codes(&gated(
            good,
            &[],
            json!({"named_outputs": ["Summary"], "max_attempts": 3})
        )),
        [Code::IntentGateInvalid]
    );
    // An intent the document does not know does not load as a config.
    let unknown = Graph::from_value(json!({"modules": [module(
        "m1",
        "step.agent_task",
        json!({"intent_gate": {"allowed_intents": ["proceed"]}})
    )]}))
    .unwrap_err();
    assert!(
        unknown.to_string().contains("intent_gate.allowed_intents"),
        "{unknown}"
    );
    // Parallel coding agents have no last word.
    let coding = |coordination: &str| {
        load(
            vec![module(
                "m1",
                "step.coding",
                json!({"coordination": coordination, "agents": [{"role": "a"}, {"role": "b"}],
                       "intent_gate": {"allowed_intents": ["closing"]}}),
            )],
            vec![],
        )
    };
    assert_eq!(codes(&coding("parallel")), [Code::IntentGateInvalid]);
    assert_eq!(codes(&coding("review_chain")), []);
}

#[test]
fn intent_unwired() {
    let gate = json!({"allowed_intents": ["next", "escalate", "closing", "repeat"]});
    let findings = validate(
        &gated(gate.clone(), &[], json!({"max_attempts": 2})),
        &ValidationContext::default(),
    );
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].code, Code::IntentUnwired);
    assert_eq!(findings[0].severity, Severity::Warning);
    assert!(
        findings[0].message.contains("“escalate”") && findings[0].message.contains("escalate_out"),
        "{}",
        findings[0].message
    );
    // Closing ends there by meaning; repeat and abort have no port.
    assert_eq!(
        codes(&gated(gate, &["escalate_out"], json!({"max_attempts": 2}))),
        []
    );
    // A port that goes when its intent is no longer allowed leaves a
    // dangling cable.
    let narrowed = gated(
        json!({"allowed_intents": ["next"]}),
        &["escalate_out"],
        json!({}),
    );
    assert_eq!(
        codes(&narrowed),
        [Code::RequiredInputMissing, Code::DanglingCable]
    );
}

#[test]
fn session_not_continuable() {
    // input → coding → agent task that continues its input's session.
    let after = |between: Option<Value>, session_mode: &str| {
        let mut modules = vec![
            module("m1", "step.input", json!({})),
            module(
                "build",
                "step.coding",
                json!({"instruction": "Build", "agents": [{"role": "builder"}]}),
            ),
            module(
                "m3",
                "step.agent_task",
                json!({"instruction": "Explain it", "session_mode": session_mode}),
            ),
        ];
        let mut cables = vec![cable("c1", ("m1", "data_out"), ("build", "data_in"))];
        match between {
            Some(task) => {
                modules.push(module("chat", "step.agent_task", task));
                cables.push(cable("c2", ("build", "data_out"), ("chat", "data_in")));
                cables.push(cable("c3", ("chat", "data_out"), ("m3", "data_in")));
            }
            None => cables.push(cable("c2", ("build", "data_out"), ("m3", "data_in"))),
        }
        load(modules, cables)
    };
    let bad = validate(&after(None, "continue"), &ValidationContext::default());
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert_eq!(bad[0].code, Code::SessionNotContinuable);
    assert_eq!(bad[0].severity, Severity::Warning);
    assert_eq!(
        bad[0].path.as_deref(),
        Some("modules[2].config.session_mode")
    );
    assert!(
        bad[0].message.contains("\"build\" is a coding module"),
        "{}",
        bad[0].message
    );
    // A new session, or a chat to continue: nothing to say.
    assert_eq!(codes(&after(None, "new")), []);
    assert_eq!(
        codes(&after(
            Some(json!({"instruction": "Sum it up"})),
            "continue"
        )),
        []
    );
}

#[test]
fn session_not_continuable_on_a_coding_agent() {
    // input → `upstream` → coding module whose agents are given.
    let fed_by = |upstream: Value, downstream: Value| {
        load(
            vec![
                module("m1", "step.input", json!({})),
                module(
                    "first",
                    upstream["kind"].as_str().unwrap_or_default(),
                    upstream["config"].clone(),
                ),
                module("second", "step.coding", downstream),
            ],
            vec![
                cable("c1", ("m1", "data_out"), ("first", "data_in")),
                cable("c2", ("first", "data_out"), ("second", "data_in")),
            ],
        )
    };
    let coding = |coordination: &str, agents: Value| json!({"kind": "step.coding", "config": {"instruction": "Build", "coordination": coordination, "agents": agents}});
    let continuing = |coordination: &str, agents: Value| json!({"instruction": "Go on", "coordination": coordination, "agents": agents});
    let builder = json!([{"role": "builder"}]);
    let continues = json!([{"role": "fixer", "session_mode": "continue"}]);
    let found = |graph: &Graph| validate(graph, &ValidationContext::default());

    // A sequential or review chain upstream hands on its session.
    assert_eq!(
        codes(&fed_by(
            coding("sequential", builder.clone()),
            continuing("sequential", continues.clone())
        )),
        []
    );
    assert_eq!(
        codes(&fed_by(
            coding(
                "review_chain",
                json!([{"role": "builder"}, {"role": "reviewer"}])
            ),
            continuing(
                "review_chain",
                json!([{"role": "fixer", "session_mode": "continue"}, {"role": "reviewer"}])
            )
        )),
        []
    );
    // A parallel module upstream hands on none.
    let bad = found(&fed_by(
        coding("parallel", builder.clone()),
        continuing("sequential", continues.clone()),
    ));
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert_eq!(bad[0].code, Code::SessionNotContinuable);
    assert_eq!(bad[0].severity, Severity::Warning);
    assert_eq!(
        bad[0].path.as_deref(),
        Some("modules[2].config.agents[0].session_mode")
    );
    assert!(
        bad[0]
            .message
            .contains("\"first\" runs its agents in parallel, which hands on no session"),
        "{}",
        bad[0].message
    );
    // A chat is not an ACP session.
    let bad = found(&fed_by(
        json!({"kind": "step.agent_task", "config": {"instruction": "Plan"}}),
        continuing("sequential", continues.clone()),
    ));
    assert!(
        bad[0].message.contains("\"first\" is a model's chat"),
        "{}",
        bad[0].message
    );
    // Parallel agents, and a later agent of a chain, cannot take one up.
    let bad = found(&fed_by(
        coding("sequential", builder.clone()),
        continuing("parallel", continues.clone()),
    ));
    assert!(
        bad[0].message.contains("parallel agents work at once"),
        "{}",
        bad[0].message
    );
    let bad = found(&fed_by(
        coding("sequential", builder.clone()),
        continuing(
            "sequential",
            json!([{"role": "builder"}, {"role": "fixer", "session_mode": "continue"}]),
        ),
    ));
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert_eq!(
        bad[0].path.as_deref(),
        Some("modules[2].config.agents[1].session_mode")
    );
    assert!(
        bad[0].message.contains("only the first agent"),
        "{}",
        bad[0].message
    );
    // Two named, different ACP profiles: a session continues only with its agent.
    let bad = found(&fed_by(
        coding(
            "sequential",
            json!([{"role": "builder", "acp_profile_id": "claude"}]),
        ),
        continuing(
            "sequential",
            json!([{"role": "fixer", "session_mode": "continue", "acp_profile_id": "sim"}]),
        ),
    ));
    assert!(
        bad[0]
            .message
            .contains("a session continues only with the same agent"),
        "{}",
        bad[0].message
    );
    assert_eq!(
        codes(&fed_by(
            coding(
                "sequential",
                json!([{"role": "builder", "acp_profile_id": "sim"}])
            ),
            continuing(
                "sequential",
                json!([{"role": "fixer", "session_mode": "continue", "acp_profile_id": "sim"}])
            )
        )),
        []
    );
    // The last agent of a sequential chain holds the session it hands on.
    let bad = found(&fed_by(
        coding(
            "sequential",
            json!([{"role": "builder", "acp_profile_id": "sim"}, {"role": "tester", "acp_profile_id": "claude"}]),
        ),
        continuing(
            "sequential",
            json!([{"role": "fixer", "session_mode": "continue", "acp_profile_id": "sim"}]),
        ),
    ));
    assert_eq!(codes_of(&bad), [Code::SessionNotContinuable]);

    // Wired from a port that names no session.
    let mut graph = fed_by(
        coding("sequential", builder.clone()),
        continuing("sequential", continues.clone()),
    );
    graph.cables[1].from.port = "diff_out".to_owned();
    let bad = found(&graph);
    assert!(
        bad[0]
            .message
            .contains("\"first\" is wired to it from a port that names no session"),
        "{}",
        bad[0].message
    );

    // Taking a session up continues it: variants, or two modules, would
    // share it.
    let mut with_variants = continuing("sequential", continues.clone());
    with_variants["variants"] = json!([{"name": "a"}, {"name": "b"}]);
    let bad = found(&fed_by(
        coding("sequential", builder.clone()),
        with_variants,
    ));
    assert!(
        bad.iter()
            .any(|finding| finding.message.contains("as each of its variants does")),
        "{bad:?}"
    );
    let mut graph = fed_by(
        coding("sequential", builder),
        continuing("sequential", continues.clone()),
    );
    let twin = load(
        vec![module(
            "third",
            "step.coding",
            continuing("sequential", continues),
        )],
        vec![],
    );
    graph.modules.extend(twin.modules);
    graph.cables.push(
        serde_json::from_value(cable("c3", ("first", "data_out"), ("third", "data_in"))).unwrap(),
    );
    let bad = found(&graph);
    assert_eq!(bad.len(), 2, "{bad:?}");
    assert!(
        bad[0].message.contains("as \"third\" also does"),
        "{}",
        bad[0].message
    );
    assert!(
        bad[1].message.contains("as \"second\" also does"),
        "{}",
        bad[1].message
    );
}

/// input → task → an approval with `config`, approved to an output, sent
/// back to the task.
fn approval(config: Value) -> Graph {
    load(
        vec![
            module("in", "step.input", json!({})),
            module("a", "step.agent_task", json!({})),
            module("ok", "step.approval", config),
            module("out", "step.output", json!({})),
        ],
        vec![
            cable("c1", ("in", "data_out"), ("a", "data_in")),
            cable("c2", ("a", "data_out"), ("ok", "data_in")),
            cable("c3", ("ok", "approved_out"), ("out", "data_in")),
            cable("c4", ("ok", "revise_out"), ("a", "data_in")),
        ],
    )
}

#[test]
fn approval_invalid() {
    // An empty config is valid: it asks the person to approve its input.
    assert_eq!(codes(&approval(json!({}))), []);
    assert_eq!(codes(&approval(json!({"timeout_seconds": 86_400}))), []);
    for config in [
        json!({"timeout_seconds": 0}),
        json!({"timeout_seconds": 31 * 24 * 3600}),
        json!({"max_rounds": 0}),
        json!({"show": ["instruction_in"]}),
    ] {
        let findings = validate(&approval(config.clone()), &ValidationContext::default());
        assert_eq!(codes_of(&findings), [Code::ApprovalInvalid], "{config}");
        assert_eq!(findings[0].severity, Severity::Error);
        assert!(
            findings[0]
                .path
                .as_deref()
                .unwrap()
                .starts_with("modules[2].config.")
        );
    }
    // Its rejection with no cable is "stop": no warning; a revision with
    // none is warned about, as a review gate's is.
    let unwired = load(
        vec![
            module("in", "step.input", json!({})),
            module("ok", "step.approval", json!({})),
        ],
        vec![cable("c1", ("in", "data_out"), ("ok", "data_in"))],
    );
    let findings = validate(&unwired, &ValidationContext::default());
    assert_eq!(codes_of(&findings), [Code::UnwiredFailure], "{findings:?}");
    assert!(findings[0].message.contains("revise_out"));
}

#[test]
fn webhook_not_allowed() {
    let notifying = approval(json!({"notify": ["ops"]}));
    let server = |webhooks: &[&str]| ValidationContext {
        webhooks: Some(webhooks.iter().map(|id| (*id).to_owned()).collect()),
        ..ValidationContext::default()
    };
    assert_eq!(codes_with(&notifying, &server(&["ops"])), []);
    // Unknown here (the editor before the server answered): not guessed.
    assert_eq!(codes(&notifying), []);
    let findings = validate(&notifying, &server(&["alerts"]));
    assert_eq!(codes_of(&findings), [Code::WebhookNotAllowed]);
    assert_eq!(
        findings[0].path.as_deref(),
        Some("modules[2].config.notify[0]")
    );
    assert!(
        findings[0].message.contains("this server has alerts"),
        "{}",
        findings[0].message
    );
    let none = validate(&notifying, &server(&[]));
    assert!(
        none[0].message.contains("this server has none"),
        "{}",
        none[0].message
    );
}

fn codes_of(findings: &[graph::Finding]) -> Vec<Code> {
    findings.iter().map(|finding| finding.code).collect()
}

/// A server that runs commands or not, and confines processes or not.
fn server_that(commands: bool, sandbox: bool) -> ValidationContext {
    ValidationContext {
        commands_enabled: Some(commands),
        sandbox_available: Some(sandbox),
        ..ValidationContext::default()
    }
}

fn example_graph(id: &str) -> graph::Graph {
    graph::starter::example(id).unwrap().graph
}

#[test]
fn commands_disabled() {
    // A coding module with two validators, on a server without commands.
    let build = example_graph("build-until-the-checks-pass");
    let findings = validate(&build, &server_that(false, true));
    let found: Vec<&graph::Finding> = findings
        .iter()
        .filter(|finding| finding.code == Code::CommandsDisabled)
        .collect();
    assert_eq!(found.len(), 1, "{findings:?}");
    assert_eq!(found[0].severity, graph::Severity::Error);
    assert_eq!(
        found[0].message,
        "“Build” runs shell commands (its 2 validators), and this server does not run commands: start it with --enable-commands, or remove them"
    );
    // Where commands run, or where it is not known yet, nothing is said.
    assert!(!codes_with(&build, &server_that(true, true)).contains(&Code::CommandsDisabled));
    assert!(!codes(&build).contains(&Code::CommandsDisabled));
}

#[test]
fn sandbox_unavailable() {
    let coding = example_graph("coding-agent");
    let findings = validate(&coding, &server_that(true, false));
    let found: Vec<&graph::Finding> = findings
        .iter()
        .filter(|finding| finding.code == Code::SandboxUnavailable)
        .collect();
    assert!(!found.is_empty(), "{findings:?}");
    assert!(
        found[0]
            .message
            .contains("starts processes (its coding agents), and this server cannot confine them"),
        "{}",
        found[0].message
    );
    assert!(!codes_with(&coding, &server_that(true, true)).contains(&Code::SandboxUnavailable));
}

/// A server with the built-in tools and one MCP server, `everything`.
fn server_with_tools() -> ValidationContext {
    use graph::tools::ToolSpec;
    let spec = |name: &str, arguments: &[&str]| ToolSpec {
        name: name.to_owned(),
        arguments: arguments
            .iter()
            .map(|argument| (*argument).to_owned())
            .collect(),
    };
    ValidationContext {
        providers: Some(vec!["sim".to_owned(), "small".to_owned()]),
        tool_servers: Some(std::collections::BTreeMap::from([
            (
                "everything".to_owned(),
                graph::tools::ServerSpec {
                    tools: vec![spec("echo", &["message"]), spec("get-sum", &["a", "b"])],
                    problem: None,
                    not_for_agents: None,
                },
            ),
            (
                "down".to_owned(),
                graph::tools::ServerSpec {
                    tools: Vec::new(),
                    problem: Some("it did not start".to_owned()),
                    not_for_agents: None,
                },
            ),
        ])),
        providers_without_tools: Some(vec!["small".to_owned()]),
        ..ValidationContext::default()
    }
}

#[test]
fn tool_unknown() {
    let tools = |tools: Value| {
        chain(
            json!({"instruction": "Add", "tools": tools, "re_prompts": [{"text": "Again", "allowed_tools": ["sum", "echo"]}]}),
        )
    };
    let fine = tools(
        json!([{"server": "everything", "tool": "get-sum", "as": "sum", "arguments": {"b": 2}}, {"server": "everything", "tool": "echo"}]),
    );
    assert_eq!(codes_with(&fine, &server_with_tools()), []);
    // The document alone, before the server has said what it has: fine.
    assert_eq!(
        codes(&tools(
            json!([{"server": "elsewhere", "tool": "x", "as": "sum"}, {"server": "everything", "tool": "echo"}])
        )),
        []
    );
    let findings = validate(
        &tools(json!([
            {"server": "elsewhere", "tool": "get-sum", "as": "sum"},
            {"server": "everything", "tool": "nope", "as": "echo"},
            {"server": "everything", "tool": "get-sum", "as": "other", "arguments": {"c": 1}}
        ])),
        &server_with_tools(),
    );
    let found: Vec<(Code, Option<&str>, &str)> = findings
        .iter()
        .map(|finding| {
            (
                finding.code,
                finding.path.as_deref(),
                finding.message.as_str(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            (
                Code::ToolUnknown,
                Some("modules[1].config.tools[0].server"),
                "\"m2\" uses tools of MCP server \"elsewhere\", which this server does not have (the operator's [[mcp_servers]])"
            ),
            (
                Code::ToolUnknown,
                Some("modules[1].config.tools[1].tool"),
                "\"m2\" uses tool \"nope\" of MCP server \"everything\", which has no tool of that name"
            ),
            (
                Code::ToolUnknown,
                Some("modules[1].config.tools[2].arguments.c"),
                "\"m2\" locks argument \"c\" of tool \"other\", which the tool does not take"
            ),
        ]
    );
    // A re-prompt allowing a tool the module lacks.
    let narrowing = chain(
        json!({"instruction": "Add", "tools": [{"server": "everything", "tool": "echo"}], "re_prompts": [{"text": "Again", "allowed_tools": ["sum"]}]}),
    );
    let findings = validate(&narrowing, &server_with_tools());
    assert_eq!(codes_of(&findings), [Code::ToolUnknown]);
    assert_eq!(
        findings[0].path.as_deref(),
        Some("modules[1].config.re_prompts[0].allowed_tools")
    );
}

#[test]
fn tool_invalid() {
    let findings = validate(
        &chain(json!({"instruction": "Add", "max_tool_calls": 0, "tools": [
            {"server": "everything", "tool": "echo"},
            {"server": "everything", "tool": "echo"},
            {"server": "everything", "tool": "get-sum", "as": "add two"}
        ]})),
        &server_with_tools(),
    );
    assert_eq!(
        codes_of(&findings),
        [Code::ToolInvalid, Code::ToolInvalid, Code::ToolInvalid],
        "{findings:?}"
    );
    assert!(
        findings[2]
            .message
            .contains("allows 0 tool calls: from 1 to 100"),
        "{}",
        findings[2].message
    );
}

#[test]
fn tool_unknown_in_a_variant_or_a_locked_template() {
    // A variant with tools of its own is checked as the module is, at its
    // own paths; what it keeps of the module's is not reported twice.
    let graph = load(
        vec![
            module("m1", "step.input", json!({})),
            module(
                "m2",
                "step.agent_task",
                json!({
                    "instruction": "Add",
                    "re_prompts": [{"text": "Again", "allowed_tools": ["echo"]}],
                    "tools": [{"server": "everything", "tool": "echo"}],
                    "variants": [
                        {"name": "A"},
                        {"name": "B", "config_overrides": {"tools": [{"server": "elsewhere", "tool": "x"}]}},
                        {"name": "C", "config_overrides": {"provider": "small"}},
                    ],
                }),
            ),
            module("m3", "step.judge", json!({})),
        ],
        vec![
            cable("c1", ("m1", "data_out"), ("m2", "data_in")),
            cable("c2", ("m2", "comparison_out"), ("m3", "comparison_in")),
        ],
    );
    let mut context = server_with_tools();
    context.providers = Some(vec!["sim".to_owned(), "small".to_owned()]);
    let findings = validate(&graph, &context);
    let found: Vec<(Code, Option<&str>)> = findings
        .iter()
        .map(|finding| (finding.code, finding.path.as_deref()))
        .collect();
    assert_eq!(
        found,
        [
            (
                Code::ToolUnknown,
                Some("modules[1].config.variants[1].config_overrides.tools[0].server")
            ),
            // Variant B's tools lack the module's re-prompt's echo.
            (
                Code::ToolUnknown,
                Some("modules[1].config.re_prompts[0].allowed_tools")
            ),
            (
                Code::ToolsUnsupported,
                Some("modules[1].config.variants[2].config_overrides.provider")
            ),
        ]
    );
    // A locked argument's template is checked as a prompt's is.
    let locked = chain(json!({
        "instruction": "Add",
        "tools": [{"server": "everything", "tool": "echo", "arguments": {"message": "{{ Nobody.output }}"}}],
    }));
    let findings = validate(&locked, &server_with_tools());
    assert_eq!(codes_of(&findings), [Code::TemplateUnresolved]);
    assert_eq!(
        findings[0].path.as_deref(),
        Some("modules[1].config.tools[0].arguments.message")
    );
}

#[test]
fn tool_invalid_when_the_only_turn_answers_an_intent_gate() {
    let gated = |re_prompts: Value| {
        chain(json!({
            "instruction": "Sort it",
            "re_prompts": re_prompts,
            "tools": [{"server": "everything", "tool": "echo"}],
            "intent_gate": {"allowed_intents": ["next", "closing"]},
        }))
    };
    let findings = validate(&gated(json!([])), &server_with_tools());
    let tool_findings: Vec<&str> = findings
        .iter()
        .filter(|finding| finding.code == Code::ToolInvalid)
        .map(|finding| finding.message.as_str())
        .collect();
    assert_eq!(
        tool_findings,
        [
            "\"m2\" has tools and an intent gate but no re-prompt: its only turn answers the gate, which offers no tools. Add a re-prompt for the tools' work"
        ]
    );
    let findings = validate(&gated(json!(["Look it up"])), &server_with_tools());
    assert!(
        findings
            .iter()
            .all(|finding| finding.code != Code::ToolInvalid),
        "{findings:?}"
    );
}

#[test]
fn tools_unsupported() {
    let on = |provider: &str| {
        chain(
            json!({"instruction": "Add", "agent_config": {"provider": provider, "model": ""}, "tools": [{"server": "everything", "tool": "echo"}]}),
        )
    };
    assert_eq!(codes_with(&on("sim"), &server_with_tools()), []);
    let findings = validate(&on("small"), &server_with_tools());
    assert_eq!(codes_of(&findings), [Code::ToolsUnsupported]);
    assert_eq!(
        findings[0].message,
        "\"m2\" has tools, and its provider \"small\" cannot call tools"
    );
}

#[test]
fn every_code_is_exercised_above() {
    // Keeps this file honest when a code is added: each code must appear in a
    // test of its own name.
    let source = include_str!("validation.rs");
    for code in Code::ALL {
        let name = code.as_str().trim_start_matches("validation.");
        assert!(
            source.contains(&format!("fn {name}(")) || source.contains(&format!("fn {name}_")),
            "no test for {}",
            code.as_str()
        );
    }
}

#[test]
fn findings_serialize_with_the_product_field_names() {
    let findings = validate(
        &chain(json!({"re_prompts": [""]})),
        &ValidationContext::default(),
    );
    let wire = serde_json::to_value(&findings).unwrap();
    assert_eq!(
        wire,
        json!([{
            "code": "validation.reprompt_empty",
            "severity": "error",
            "module_id": "m2",
            "path": "modules[1].config.re_prompts[0]",
            "message": "Re-prompt 1 of \"m2\" is empty"
        }])
    );
}

#[test]
fn every_code_is_written_as_the_name_it_is_read_by() {
    for code in Code::ALL {
        let written = serde_json::to_value(code).unwrap();
        assert_eq!(written, serde_json::json!(code.as_str()));
        assert_eq!(serde_json::from_value::<Code>(written).unwrap(), code);
    }
}

#[test]
fn poll_invalid() {
    let poll = |config: Value| {
        let graph = load(
            vec![
                module("in", "step.input", json!({})),
                module("wait", "step.poll", config),
            ],
            vec![cable("c1", ("in", "data_out"), ("wait", "data_in"))],
        );
        validate(&graph, &ValidationContext::default())
            .into_iter()
            .filter(|finding| finding.code != Code::UnwiredFailure)
            .map(|finding| (finding.path.unwrap_or_default(), finding.message))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        poll(
            json!({"command": "check.sh", "results": ["approved", "fix"], "interval_seconds": 60})
        ),
        []
    );
    let found = poll(json!({"command": "check.sh", "results": [], "interval_seconds": 0}));
    let paths: Vec<&str> = found.iter().map(|(path, _)| path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "modules[1].config.results",
            "modules[1].config.interval_seconds"
        ]
    );
    assert!(found[0].1.contains("declares no result"), "{}", found[0].1);
    let found = poll(json!({"command": "check.sh", "results": ["ok", "not ok", "timeout"]}));
    let paths: Vec<&str> = found.iter().map(|(path, _)| path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "modules[1].config.results[1]",
            "modules[1].config.results[2]"
        ]
    );
    assert!(found[0].1.contains("not a plain name"));
    assert!(found[1].1.contains("built in"));
}

#[test]
fn budget_invalid() {
    let with_budget = |budget: Value| {
        chain(
            json!({"instruction": "Write", "agent_config": {"provider": "sim", "budget_usd": budget}}),
        )
    };
    assert_eq!(codes(&with_budget(json!(0.25))), []);
    for nonsense in [json!(0), json!(-1.5)] {
        let findings = validate(&with_budget(nonsense), &ValidationContext::default());
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(findings[0].code, Code::BudgetInvalid);
        assert_eq!(
            findings[0].path.as_deref(),
            Some("modules[1].config.agent_config.budget_usd")
        );
        assert!(findings[0].message.contains("more than 0"));
    }
}

#[test]
fn experiment_invalid() {
    let experiment = |variants: Value| {
        load(
            vec![
                module("m1", "step.input", json!({})),
                module(
                    "m2",
                    "step.agent_task",
                    json!({"instruction": "Write", "re_prompts": ["Review"], "variants": variants}),
                ),
                module("m3", "step.judge", json!({})),
            ],
            vec![
                cable("c1", ("m1", "data_out"), ("m2", "data_in")),
                // Variants into a judge: it needs no target.
                cable("c2", ("m2", "comparison_out"), ("m3", "comparison_in")),
            ],
        )
    };
    assert_eq!(
        codes(&experiment(
            json!([{"name": "A"}, {"name": "B", "instruction_override": "Write less"}])
        )),
        []
    );
    let findings = validate(
        &experiment(
            json!([{"name": "A"}, {"name": "A", "config_overrides": {"re_prompts": [""]}}]),
        ),
        &ValidationContext::default(),
    );
    let found: Vec<(Code, Option<&str>)> = findings
        .iter()
        .map(|finding| (finding.code, finding.path.as_deref()))
        .collect();
    assert_eq!(
        found,
        [
            (
                Code::ExperimentInvalid,
                Some("modules[1].config.variants[1].name")
            ),
            (
                Code::ExperimentInvalid,
                Some("modules[1].config.variants[1].config_overrides.re_prompts[0]")
            ),
        ]
    );
    // A variant's provider must be on the server too.
    let context = ValidationContext {
        providers: Some(vec!["sim".to_owned()]),
        ..ValidationContext::default()
    };
    let unknown = validate(
        &experiment(
            json!([{"name": "A"}, {"name": "B", "config_overrides": {"provider": "nowhere"}}]),
        ),
        &context,
    );
    assert_eq!(unknown.len(), 1, "{unknown:?}");
    assert_eq!(unknown[0].code, Code::UnknownProvider);
    // A coding module's variants change its instruction and agents' profiles.
    let coding = |variants: Value| {
        let graph = load(
            vec![module(
                "m1",
                "step.coding",
                json!({"agents": [{"role": "builder"}], "variants": variants}),
            )],
            vec![],
        );
        validate(&graph, &ValidationContext::default())
            .into_iter()
            .filter(|finding| finding.code == Code::ExperimentInvalid)
            .map(|finding| finding.path.unwrap_or_default())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        coding(
            json!([{"name": "A"}, {"name": "B", "config_overrides": {"agent_profiles": {"builder": "sim-agent"}}}])
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        coding(
            json!([{"name": "A"}, {"name": "B", "config_overrides": {"agent_profiles": {"tester": "sim-agent"}}}])
        ),
        ["modules[0].config.variants[1].config_overrides.agent_profiles.tester"]
    );
    // Without variants, a judge fed on "Compare with" alone still needs a target.
    let plain = load(
        vec![
            module("m1", "step.input", json!({})),
            module("m3", "step.judge", json!({})),
        ],
        vec![cable("c1", ("m1", "data_out"), ("m3", "comparison_in"))],
    );
    assert_eq!(codes(&plain), [Code::RequiredInputMissing]);
}

#[test]
fn validator_invalid() {
    let validators = json!([{"name": "tests", "command": "cargo test", "success_when": "exit_code:0",
                             "failure_pattern": "failing", "extract_params": {"failures": "output"}}]);
    let patterns =
        json!([{"name": "failing", "prompt": "Fix: {{ failures }}", "params": ["failures"]}]);
    let good = json!({"validators": validators, "failure_patterns": patterns});
    assert_eq!(codes(&chain(good.clone())), []);
    // A problem is reported at its field.
    let mut broken = good.clone();
    broken["validators"][0]["success_when"] = json!("zero");
    let findings = validate(&chain(broken), &ValidationContext::default());
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].code, Code::ValidatorInvalid);
    assert_eq!(
        findings[0].path.as_deref(),
        Some("modules[1].config.validators[0].success_when")
    );
    assert!(
        findings[0]
            .message
            .contains("neither `empty` nor `exit_code:N`")
    );
    // Not beside an intent gate, whose answer a fix turn would replace.
    let mut gated = good.clone();
    gated["intent_gate"] = json!({"allowed_intents": ["closing"]});
    let findings = validate(&chain(gated), &ValidationContext::default());
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].code, Code::ValidatorInvalid);
    // Saying why and what to do instead.
    assert!(
        findings[0]
            .message
            .contains("a fix turn would take the place of the gate's answer")
            && findings[0]
                .message
                .contains("in a module of its own after the gate"),
        "{}",
        findings[0].message
    );
    // A coding module's validators need sequential agents.
    let coding = |coordination: &str| {
        let mut config = good.clone();
        config["agents"] = json!([{"role": "a"}, {"role": "b"}]);
        config["coordination"] = json!(coordination);
        load(vec![module("m1", "step.coding", config)], vec![])
    };
    assert_eq!(codes(&coding("sequential")), []);
    for coordination in ["parallel", "review_chain"] {
        let findings = validate(&coding(coordination), &ValidationContext::default());
        assert_eq!(findings.len(), 1, "{coordination}: {findings:?}");
        assert_eq!(findings[0].code, Code::ValidatorInvalid);
        assert!(
            findings[0].message.contains("which need sequential agents"),
            "{}",
            findings[0].message
        );
    }
}

#[test]
fn template_in_a_quoted_here_document() {
    // A command's variable in a quoted here-document is never filled in:
    // said before the run reaches it, at the script's field.
    let command = |script: &str| {
        load(
            vec![
                module("m1", "step.input", json!({})),
                module("m2", "step.command", json!({"command": script})),
            ],
            vec![cable("c1", ("m1", "data_out"), ("m2", "data_in"))],
        )
    };
    let quoted = command("cat <<'EOF' > notes.md\n{{ input }}\nEOF");
    let findings: Vec<graph::Finding> = validate(&quoted, &ValidationContext::default())
        .into_iter()
        .filter(|finding| finding.code != Code::UnwiredFailure)
        .collect();
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].code, Code::TemplateUnresolved);
    assert_eq!(
        findings[0].path.as_deref(),
        Some("modules[1].config.command")
    );
    assert!(
        findings[0]
            .message
            .contains("{{ input }} in \"m2\" cannot be filled: it is in a quoted here-document")
            && findings[0].message.contains("use an unquoted one (<<EOF)"),
        "{}",
        findings[0].message
    );
    assert_eq!(
        codes(&command("cat <<EOF > notes.md\n{{ input }}\nEOF")),
        [Code::UnwiredFailure]
    );
    // A validator's command too.
    let validators = json!([{"name": "tests", "command": "sh <<'EOF'\ntest -n '{{ run_id }}'\nEOF",
                             "success_when": "exit_code:0", "failure_pattern": "failing"}]);
    let patterns = json!([{"name": "failing", "prompt": "Fix it."}]);
    let findings = validate(
        &chain(json!({"validators": validators, "failure_patterns": patterns})),
        &ValidationContext::default(),
    );
    assert_eq!(
        findings
            .iter()
            .map(|finding| (finding.code, finding.path.as_deref()))
            .collect::<Vec<_>>(),
        [(
            Code::TemplateUnresolved,
            Some("modules[1].config.validators[0].command")
        )]
    );
}
