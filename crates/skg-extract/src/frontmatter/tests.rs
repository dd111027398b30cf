//! Each real-world failure kind as data: the file in, status + values + codes out.

use serde_json::json;
use skg_model::{DiagnosticCode as C, FrontmatterStatus as S};

use super::parse;

/// Parses `text` and returns (status, frontmatter as JSON, [(line, code)], body).
fn check(text: &str) -> (S, serde_json::Value, Vec<(u32, C)>, String) {
    let p = parse(text);
    let codes = p.issues.iter().map(|i| (i.line, i.code)).collect();
    (
        p.status,
        serde_json::Value::Object(p.map),
        codes,
        text[p.body_offset..].to_owned(),
    )
}

#[test]
fn clean_frontmatter() {
    let (s, v, codes, body) = check(
        "---\nname: pdf-tools\ndescription: Merge and split PDFs.\ntags: [pdf, docs]\n---\n# PDF\nBody\n",
    );
    assert_eq!(s, S::Ok);
    assert_eq!(
        v,
        json!({"name": "pdf-tools", "description": "Merge and split PDFs.", "tags": ["pdf", "docs"]})
    );
    assert!(codes.is_empty());
    assert_eq!(body, "# PDF\nBody\n");
    assert_eq!(parse("---\nname: a\n---\nx").body_line, 4);
}

#[test]
fn unquoted_colon_is_repaired_without_loss() {
    let (s, v, codes, _) = check(
        "---\nname: weather\ndescription: Use when: (1) you need a forecast, (2) you plan a trip\n---\nbody",
    );
    assert_eq!(s, S::Repaired);
    assert_eq!(
        v["description"],
        "Use when: (1) you need a forecast, (2) you plan a trip"
    );
    assert_eq!(codes, vec![(3, C::YamlUnquotedColon)]);
}

#[test]
fn multi_line_plain_value_with_colon_is_folded() {
    let (s, v, codes, _) = check("---\nname: x\ndescription: Triggers: a, b\n  and then: c\n---\n");
    assert_eq!(s, S::Repaired);
    assert_eq!(v["description"], "Triggers: a, b and then: c");
    assert_eq!(codes, vec![(3, C::YamlUnquotedColon)]);
}

#[test]
fn unclosed_frontmatter_stops_at_markdown() {
    let (s, v, codes, body) =
        check("---\nname: comms\ndescription: Talk to people.\n# Communication\n\nSteps here.\n");
    assert_eq!(s, S::Repaired);
    assert_eq!(
        v,
        json!({"name": "comms", "description": "Talk to people."})
    );
    assert_eq!(codes, vec![(1, C::FrontmatterUnclosed)]);
    assert_eq!(body, "# Communication\n\nSteps here.\n");
}

/// The diagnostic names the lines read as frontmatter: 2–3 here (the opening `---` is line 1),
/// and none when the line after `---` is already markdown.
#[test]
fn unclosed_frontmatter_names_the_lines_it_read() {
    let message = |text: &str| {
        let p = parse(text);
        p.issues
            .iter()
            .find(|i| i.code == C::FrontmatterUnclosed)
            .map(|i| i.message.clone())
            .unwrap_or_default()
    };
    let m = message("---\nname: comms\ndescription: Talk.\n# Communication\n");
    assert!(
        m.ends_with("lines 2–3 were read as frontmatter, the rest as body"),
        "{m}"
    );
    let m = message("---\n# Communication\n\nSteps.\n");
    assert!(m.ends_with("so all that follows is body"), "{m}");
}

#[test]
fn argument_hint_flow_followed_by_text() {
    let (s, v, codes, _) =
        check("---\nname: leave\nargument-hint: [title] [message]\ndescription: ok\n---\n");
    assert_eq!(s, S::Repaired);
    assert_eq!(v["argument-hint"], "[title] [message]");
    assert_eq!(v["description"], "ok");
    assert_eq!(codes, vec![(3, C::YamlBrokenFlow)]);
}

#[test]
fn broken_hand_written_json_is_kept_as_text() {
    let text = "---\nname: evil\nmetadata: {\"clawdbot\":{\"emoji\":\"x\",\"requires\":{\"bins\":[\"curl\"]}}\n---\n";
    let (s, v, codes, _) = check(text);
    assert_eq!(s, S::Repaired);
    assert_eq!(
        v["metadata"],
        "{\"clawdbot\":{\"emoji\":\"x\",\"requires\":{\"bins\":[\"curl\"]}}"
    );
    assert_eq!(codes, vec![(3, C::YamlBrokenFlow)]);
}

#[test]
fn escaped_bracket_json_is_kept_as_json() {
    let text = "---\nname: f\nmetadata: {\"a\":\\[1,2\\]}\n---\n";
    let (s, v, codes, _) = check(text);
    assert_eq!(s, S::Repaired);
    assert_eq!(v["metadata"], json!({"a": [1, 2]}));
    assert_eq!(codes, vec![(3, C::YamlBrokenFlow)]);
}

#[test]
fn merge_conflict_keeps_first_side() {
    let text = "---\nname: daily\n<<<<<<< HEAD\ndescription: Ours\n=======\ndescription: Theirs\n>>>>>>> branch\n---\n";
    let (s, v, codes, _) = check(text);
    assert_eq!(s, S::Repaired);
    assert_eq!(v["description"], "Ours");
    assert_eq!(codes, vec![(3, C::YamlMergeConflict)]);
}

#[test]
fn control_character_is_removed() {
    let (s, v, codes, _) = check("---\nname: img\ndescription: Eye\u{80}catching\n---\n");
    assert_eq!(s, S::Repaired);
    assert_eq!(v["description"], "Eyecatching");
    assert_eq!(codes, vec![(3, C::YamlControlCharacter)]);
}

#[test]
fn reserved_indicators_are_quoted() {
    let (s, v, codes, _) = check("---\nname: p\ndescription: , a guide\nusage: `run` it\n---\n");
    assert_eq!(s, S::Repaired);
    assert_eq!(v["description"], ", a guide");
    assert_eq!(v["usage"], "`run` it");
    assert_eq!(
        codes,
        vec![(3, C::YamlReservedIndicator), (4, C::YamlReservedIndicator)]
    );
}

#[test]
fn orphan_continuation_line_is_folded() {
    let (s, v, codes, _) =
        check("---\nname: molt\ndescription: Find launches\nand vote on them\nversion: 1\n---\n");
    assert_eq!(s, S::Repaired);
    assert_eq!(v["description"], "Find launches and vote on them");
    assert_eq!(v["version"], 1);
    assert_eq!(codes, vec![(4, C::YamlOrphanLine)]);
}

#[test]
fn undelimited_key_lines() {
    let (s, v, codes, body) = check("name: bare\ndescription: No dashes here.\n\n# Bare\ntext\n");
    assert_eq!(s, S::Repaired);
    assert_eq!(v, json!({"name": "bare", "description": "No dashes here."}));
    assert_eq!(codes, vec![(1, C::FrontmatterUndelimited)]);
    assert_eq!(body, "\n# Bare\ntext\n");
}

#[test]
fn missing_frontmatter() {
    let (s, v, codes, body) = check("# Title\n\nJust markdown.\n");
    assert_eq!(s, S::Missing);
    assert_eq!(v, json!({}));
    assert_eq!(codes, vec![(1, C::FrontmatterMissing)]);
    assert_eq!(body, "# Title\n\nJust markdown.\n");
}

#[test]
fn unrepairable_entry_is_salvaged_as_text() {
    let text = "---\nname: keep-me\nmetadata:\n  a: [unclosed, \"x\n  b: {\ndescription: still here\n---\n";
    let p = parse(text);
    assert_eq!(p.status, S::Salvaged);
    assert_eq!(p.map["name"], "keep-me");
    assert_eq!(p.map["description"], "still here");
    assert!(p.map["metadata"].is_string());
    assert!(
        p.issues
            .iter()
            .all(|i| i.severity == skg_model::Severity::Error)
    );
    assert!(
        p.issues[0].message.contains("salvaged keys"),
        "{}",
        p.issues[0].message
    );
}

#[test]
fn key_lines_point_at_the_file() {
    let p = parse("\n---\nname: a\ndescription: b\n---\n");
    assert_eq!(p.key_lines.get("name"), Some(&3));
    assert_eq!(p.key_lines.get("description"), Some(&4));
}

#[test]
fn not_a_mapping() {
    let p = parse("---\n- a\n- b\n---\nbody");
    assert_eq!(p.issues[0].code, C::FrontmatterNotMapping);
    assert!(p.map.is_empty());
}

#[test]
fn alias_bomb_does_not_explode() {
    let mut y = String::from(
        "---\na: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for (i, prev) in ["b", "c", "d", "e", "f", "g", "h", "i"]
        .iter()
        .zip(["a", "b", "c", "d", "e", "f", "g", "h"])
    {
        let refs = vec![format!("*{prev}"); 9].join(",");
        y.push_str(&format!("{i}: &{i} [{refs}]\n").replace("\n\n", "\n"));
    }
    y.push_str("name: bomb\n---\n");
    let p = parse(&y);
    // Either the budget refuses it or salvage keeps the simple keys; it must finish and keep `name`.
    assert_eq!(p.map.get("name").and_then(|v| v.as_str()), Some("bomb"));
}

#[test]
fn multi_line_hand_written_json_without_indentation() {
    let text = "name: udau\ndescription: Union.\nmetadata: {\n\"clawdbot\": {\n\"requires\": {\n\"bins\": []\n}\n},\n\"x\": 1\n}\n\n# UDAU\nbody\n";
    let p = parse(text);
    assert_eq!(p.status, S::Repaired);
    assert_eq!(
        serde_json::Value::Object(p.map.clone())["metadata"],
        json!({"clawdbot": {"requires": {"bins": []}}, "x": 1})
    );
    assert_eq!(
        p.issues.iter().map(|i| i.code).collect::<Vec<_>>(),
        vec![C::FrontmatterUndelimited]
    );
    assert_eq!(&text[p.body_offset..], "\n# UDAU\nbody\n");
}
