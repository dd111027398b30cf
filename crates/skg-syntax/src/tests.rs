//! Tests as data: a script in, its facts out (expected values written by hand from the source).

use crate::{Language, ScriptFacts, analyze};

fn imports(f: &ScriptFacts) -> Vec<(String, &'static str, Vec<String>, u32)> {
    f.imports
        .iter()
        .map(|i| {
            let kind = match i.kind {
                crate::ImportKind::Static => "static",
                crate::ImportKind::Require => "require",
                crate::ImportKind::Dynamic => "dynamic",
                crate::ImportKind::Python => "python",
            };
            (i.specifier.clone(), kind, i.names.clone(), i.line)
        })
        .collect()
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| (*x).to_owned()).collect()
}

#[test]
fn js_import_require_dynamic() {
    let src = r#"import { slugify, clean as c } from "../../text-tools/scripts/slug.js";
import def from './local.js';
const { renderChart } = require('../../charts/scripts/render');
const lazy = await import("../../pdf/scripts/pdf.mjs");
export * from "./reexport.js";
slugify("x"); api.fetchAll(); renderChart();
"#;
    let f = analyze(Language::JavaScript, src);
    assert_eq!(
        imports(&f),
        vec![
            (
                "../../text-tools/scripts/slug.js".into(),
                "static",
                s(&["slugify", "clean"]),
                1
            ),
            ("./local.js".into(), "static", s(&["def"]), 2),
            (
                "../../charts/scripts/render".into(),
                "require",
                s(&["renderChart"]),
                3
            ),
            ("../../pdf/scripts/pdf.mjs".into(), "dynamic", vec![], 4),
            ("./reexport.js".into(), "static", vec![], 5),
        ]
    );
    let calls: Vec<_> = f
        .calls
        .iter()
        .map(|c| (c.name.as_str(), c.receiver.as_deref(), c.line))
        .collect();
    assert_eq!(
        calls,
        vec![
            ("slugify", None, 6),
            ("fetchAll", Some("api"), 6),
            ("renderChart", None, 6)
        ]
    );
    assert!(!f.has_errors);
}

#[test]
fn js_exports_esm_and_commonjs() {
    let src = r"export function alpha() {}
export const beta = () => 1, gamma = 2;
export class Delta {}
function eps() {}
export { eps, eps as zeta };
module.exports = { eta, theta: 1, iota() {} };
module.exports.kappa = 1;
exports.lambda = function () {};
";
    let f = analyze(Language::JavaScript, src);
    assert_eq!(
        f.exports,
        s(&[
            "Delta", "alpha", "beta", "eps", "eta", "gamma", "iota", "kappa", "lambda", "theta",
            "zeta"
        ])
    );
    assert_eq!(f.definitions, s(&["Delta", "alpha", "beta", "eps"]));
}

#[test]
fn typescript_and_tsx_parse() {
    let ts = "import type { A } from './types';\nexport async function run(a: A): Promise<void> { helper<A>(a); }\n";
    let f = analyze(Language::TypeScript, ts);
    assert_eq!(
        imports(&f),
        vec![("./types".into(), "static", s(&["A"]), 1)]
    );
    assert_eq!(f.exports, s(&["run"]));
    assert_eq!(f.calls.len(), 1);
    assert!(!f.has_errors);

    let tsx =
        "import React from 'react';\nexport const App = () => <div onClick={() => go()} />;\n";
    let f = analyze(Language::Tsx, tsx);
    assert_eq!(f.exports, s(&["App"]));
    assert!(!f.has_errors, "TSX must parse with the TSX grammar");
}

#[test]
fn python_imports_exports_calls() {
    let src = "import os, json as j\nfrom ..shared import util\nfrom chart_tools.render import render_chart, save as s\n\n@cache\ndef public():\n    render_chart()\n    util.go()\n\ndef _private():\n    pass\n\nclass Thing:\n    def method(self):\n        pass\n";
    let f = analyze(Language::Python, src);
    assert_eq!(
        imports(&f),
        vec![
            ("os".into(), "python", vec![], 1),
            ("json".into(), "python", vec![], 1),
            ("..shared".into(), "python", s(&["util"]), 2),
            (
                "chart_tools.render".into(),
                "python",
                s(&["render_chart", "save"]),
                3
            ),
        ]
    );
    assert_eq!(f.exports, s(&["Thing", "public"]));
    assert_eq!(f.definitions, s(&["Thing", "_private", "method", "public"]));
    let calls: Vec<_> = f
        .calls
        .iter()
        .map(|c| (c.name.as_str(), c.receiver.as_deref()))
        .collect();
    assert_eq!(calls, vec![("render_chart", None), ("go", Some("util"))]);
}

#[test]
fn broken_syntax_recovers_with_flag() {
    let f = analyze(
        Language::JavaScript,
        "import { a from './x.js';\nfunction (\nrequire('./y.js');\n",
    );
    assert!(f.has_errors);
    assert!(
        f.imports.iter().any(|i| i.specifier == "./y.js"),
        "{:?}",
        f.imports
    );
}

#[test]
fn deep_nesting_does_not_overflow() {
    let src = format!("x = {}1{};", "[".repeat(20_000), "]".repeat(20_000));
    let f = analyze(Language::JavaScript, &src);
    assert!(f.imports.is_empty());
}

#[test]
fn language_from_path() {
    use std::path::Path;
    assert_eq!(
        Language::from_path(Path::new("a/b.mjs")),
        Some(Language::JavaScript)
    );
    assert_eq!(
        Language::from_path(Path::new("a/b.TSX")),
        Some(Language::Tsx)
    );
    assert_eq!(
        Language::from_path(Path::new("a/b.py")),
        Some(Language::Python)
    );
    assert_eq!(Language::from_path(Path::new("a/b.sh")), None);
}

#[test]
fn one_parse_gives_what_the_two_separate_reads_give() {
    use std::time::Duration;
    let cases = [
        (
            Language::JavaScript,
            "import x from './lib.js';\nexport function run(a) { return x(a, 2); }\n",
        ),
        (
            Language::TypeScript,
            "const f = (a: number): number => a + 1;\nf(2);\n",
        ),
        (
            Language::Tsx,
            "export const C = () => <div>{load()}</div>;\n",
        ),
        (
            Language::Python,
            "from .util import go\n\ndef main():\n    go(1)\n",
        ),
        (Language::JavaScript, "function ( { broken"),
    ];
    let budget = Duration::from_secs(5);
    for (lang, src) in cases {
        let one = crate::script_within(lang, src, budget);
        assert_eq!(one.facts, crate::analyze_within(lang, src, budget), "{src}");
        assert_eq!(
            one.structure,
            crate::structure_within(lang, src, budget),
            "{src}"
        );
    }
}

#[test]
fn a_parse_over_budget_gives_no_facts_and_the_plain_fingerprint() {
    // Zero time: the parse stops at its first progress check (a file of many statements has many).
    let src = "a(1);\n".repeat(50_000);
    let one = crate::script_within(Language::JavaScript, &src, std::time::Duration::ZERO);
    assert!(one.facts.timed_out);
    assert!(one.facts.calls.is_empty());
    assert_eq!(one.structure, crate::plain_structure(&src));
}
