//! What a section says about its skill's use: the one rule behind the card's `when_to_use` /
//! `when_not_to_use` fallbacks and the index's usage vectors ([`SectionRole`], version
//! [`SECTION_ROLE_RULE`]).

#[cfg(doc)]
use skg_model::SECTION_ROLE_RULE;
use skg_model::SectionRole;

/// The role a heading gives its section, read as phrases after any leading numbering ("1.",
/// "Step 2:"), so an API section "Create a trigger", a test plan "Test scenarios", "Abuse cases"
/// or a coding rule "Don't use eval" is none:
/// - **when not to use**: it starts with "when to not", "when to avoid", "when should you not",
///   "not for", "avoid when"; or it holds "when not to", "when to not", "when to avoid", "avoid
///   when"; or "do not use" / "don't use" / "never use" / "avoid using" at its end or before
///   "this", "it", "the", "when", "for", "if" ("Do not use for …", "Don't use this skill"; not
///   "Never use eval");
/// - **when to use**, unless it says "not", "non", "don't", "avoid" or "never" (a heading that
///   starts so says it even with "(and when not to)" after it):
///   - it starts with "when to use / apply / activate / invoke", "when should", "use when", "use
///     this skill when", "use this when", "use it when";
///   - or it holds "use case(s)", "usage scenarios", "example prompt(s)", "example
///     request(s)", "prompt examples", "trigger phrases / keywords / conditions / words";
///   - or it is "Triggers" (with at most "proactive", "auto", "skill", "activation");
/// - else **body**.
///
/// Such sections describe the user's situation in the user's words — what a request says —
/// where the card describes the tool (docs/retrieval.md, "Usage sections").
pub(crate) fn heading_role(title: &str) -> SectionRole {
    let lower = lowercase(title);
    let all = words(&lower);
    let words = without_numbering(&all);
    let has = |w: &str| words.contains(&w);
    let phrase = |p: &[&str]| words.windows(p.len()).any(|w| w == p);
    let text = words.join(" ");
    let starts = |ps: &[&str]| {
        ps.iter()
            .any(|p| text == *p || text.starts_with(&format!("{p} ")))
    };
    let negative_start = starts(&[
        "when to not",
        "when to avoid",
        "when should you not",
        "when should i not",
        "when shouldn't",
        "when you shouldn't",
        "not for",
        "avoid when",
    ]);
    let positive_start = starts(&[
        "when to use",
        "when to apply",
        "when to activate",
        "when to invoke",
        "when should",
        "use when",
        "use this skill when",
        "use this when",
        "use it when",
    ]);
    if positive_start && !negative_start {
        return SectionRole::WhenToUse;
    }
    let scoped = |i: usize| {
        words.get(i).is_none_or(|a| {
            matches!(
                *a,
                "this" | "it" | "the" | "when" | "for" | "if" | "these" | "them"
            )
        })
    };
    let do_not_use = words
        .windows(3)
        .enumerate()
        .any(|(i, w)| w == ["do", "not", "use"] && scoped(i + 3))
        || words.windows(2).enumerate().any(|(i, w)| {
            matches!(w, ["don't" | "dont" | "never", "use"] | ["avoid", "using"]) && scoped(i + 2)
        });
    if negative_start
        || do_not_use
        || phrase(&["when", "not", "to"])
        || phrase(&["when", "to", "not"])
        || phrase(&["when", "to", "avoid"])
        || phrase(&["avoid", "when"])
    {
        return SectionRole::WhenNotToUse;
    }
    let negated =
        has("not") || has("non") || has("don't") || has("dont") || has("avoid") || has("never");
    let trigger = has("trigger") || has("triggers");
    let phrases = phrase(&["use", "case"])
        || phrase(&["use", "cases"])
        || phrase(&["usage", "scenarios"])
        || (has("example") || has("examples"))
            && (has("prompt") || has("prompts") || has("request") || has("requests"))
        || phrase(&["prompt", "examples"])
        || trigger
            && (has("phrases")
                || has("phrase")
                || has("keywords")
                || has("conditions")
                || has("words"));
    let triggers = trigger
        && words.iter().all(|w| {
            matches!(
                *w,
                "trigger" | "triggers" | "proactive" | "auto" | "skill" | "activation"
            )
        });
    if (phrases || triggers) && !negated {
        SectionRole::WhenToUse
    } else {
        SectionRole::Body
    }
}

/// The role of a section of a package's markdown (`heading_path`: its heading and its
/// ancestors', from the top of the file). Only `SKILL.md`'s sections have one; a reference file's
/// and the preamble before any heading are body. In `SKILL.md`:
/// - a section at the top of the outline (under the document's title at most) has its heading's
///   role ([`heading_role`]);
/// - a deeper section has its heading's role when the heading names nothing but the skill's use
///   ([`names_only_use`]) and sits under a heading that names no topic either ("When to Use"
///   under "Usage guidelines", "Use cases" under "For the agent"; not "When to Use" under
///   "Container queries", which is about container queries);
/// - otherwise a section inherits the role of the top-level section it belongs to ("Use cases >
///   Use case 1: pipelines"), or of a first heading that names only the skill's use (a file
///   without a title: "## When to use > ### Data work"). A title such as "# Use cases of LLMs"
///   is a title, not a usage section, and gives nothing.
pub(crate) fn section_role(in_skill_md: bool, heading_path: &[String]) -> SectionRole {
    let Some((title, ancestors)) = heading_path.split_last() else {
        return SectionRole::Body;
    };
    if !in_skill_md {
        return SectionRole::Body;
    }
    let own = heading_role(title);
    if own != SectionRole::Body {
        if ancestors.len() <= 1 {
            return own;
        }
        let parent = &ancestors[ancestors.len() - 1];
        if names_only_use(title)
            && (names_no_topic(parent) || heading_role(parent) != SectionRole::Body)
        {
            return own;
        }
    }
    // Inherited: from the section at the top of the outline (depth 2), else from a first heading
    // that names only the skill's use.
    if let Some(top) = ancestors.get(1) {
        let r = heading_role(top);
        if r != SectionRole::Body {
            return r;
        }
    }
    match ancestors.first() {
        Some(first) if names_only_use(first) => heading_role(first),
        _ => SectionRole::Body,
    }
}

/// Whether every word of a heading (after any numbering) is one of [`heading_role`]'s own words
/// or a word for the skill ("When to use this skill", "Trigger phrases", "Use cases"), so it
/// names no other topic.
fn names_only_use(title: &str) -> bool {
    const WORDS: &[&str] = &[
        "when",
        "to",
        "use",
        "apply",
        "activate",
        "invoke",
        "should",
        "i",
        "you",
        "we",
        "this",
        "skill",
        "it",
        "the",
        "case",
        "cases",
        "usage",
        "scenarios",
        "example",
        "examples",
        "prompt",
        "prompts",
        "request",
        "requests",
        "trigger",
        "triggers",
        "phrase",
        "phrases",
        "keywords",
        "conditions",
        "words",
        "proactive",
        "auto",
        "activation",
        "not",
        "do",
        "don't",
        "dont",
        "avoid",
        "never",
        "for",
    ];
    all_in(title, WORDS)
}

/// Whether a heading names no topic: its words are only the generic words documents use to
/// group sections ("Overview", "Usage guidelines", "For the agent", "Installation", "Examples").
fn names_no_topic(title: &str) -> bool {
    const WORDS: &[&str] = &[
        "overview",
        "usage",
        "guidelines",
        "guideline",
        "guide",
        "for",
        "the",
        "a",
        "an",
        "agent",
        "agents",
        "assistant",
        "ai",
        "examples",
        "example",
        "introduction",
        "intro",
        "about",
        "skill",
        "this",
        "summary",
        "description",
        "purpose",
        "scope",
        "context",
        "getting",
        "started",
        "quick",
        "start",
        "how",
        "to",
        "use",
        "notes",
        "general",
        "and",
        "instructions",
        "installation",
        "install",
        "setup",
        "inputs",
        "prerequisites",
        "details",
        "reference",
    ];
    all_in(title, WORDS)
}

/// Whether a heading has words, and each (after any numbering) is one of `vocabulary`.
fn all_in(title: &str, vocabulary: &[&str]) -> bool {
    let lower = lowercase(title);
    let all = words(&lower);
    let words = without_numbering(&all);
    !words.is_empty() && words.iter().all(|w| vocabulary.contains(w))
}

/// A heading lowercased, curly apostrophes made straight ("Don’t").
fn lowercase(title: &str) -> String {
    title.to_lowercase().replace(['\u{2019}', '\u{2018}'], "'")
}

/// The words of a lowercased heading: runs of letters, digits and apostrophes (emoji and
/// punctuation dropped).
fn words(lower: &str) -> Vec<&str> {
    lower
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .collect()
}

/// `words` without leading numbering: numbers ("1.", "2.3") and "step / part / section / phase"
/// before a number.
fn without_numbering<'a, 'b>(words: &'b [&'a str]) -> &'b [&'a str] {
    let number = |w: &str| w.chars().all(|c| c.is_ascii_digit());
    let mut rest = words;
    loop {
        match rest {
            [n, tail @ ..] if number(n) => rest = tail,
            ["step" | "part" | "section" | "phase", n, tail @ ..] if number(n) => rest = tail,
            _ => return rest,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Headings written by hand for each role (the negatives include the review's false
    /// matches: API sections, test plans, coding rules, negations).
    #[test]
    fn each_heading_has_the_role_it_says() {
        let when_to_use: &[&str] = &[
            "When to Use",
            "When to use this skill",
            "When To Apply",
            "When to activate",
            "When to invoke",
            "When should you use it?",
            "Use when",
            "Use this skill when",
            "Use this when…",
            "Use it when",
            "Use Cases",
            "Common use case",
            "Usage Scenarios",
            "Example prompts",
            "Example Requests",
            "Prompt examples",
            "Trigger phrases",
            "Trigger keywords",
            "Triggers",
            "Proactive Triggers",
            "Skill activation triggers",
            "When to Use This Skill",
            "When to apply it",
            "Use when:",
            "When should I reach for it?",
            "Benefits & use cases",
            "Auto-trigger keywords",
            "Context / trigger conditions",
            "1. When to Use",
            "Step 2: When to use",
            "When to use (and when not to)",
        ];
        let when_not_to_use: &[&str] = &[
            "When NOT to use",
            "When not to use this skill",
            "When to avoid",
            "Do not use for",
            "Don't use when",
            "Don\u{2019}t use when",
            "Not for",
            "Avoid when",
            "Do not use this skill when",
            "Never use when",
            "When to not use",
            "When should you not use it?",
            "Don't use this skill",
            "Do not use",
        ];
        let body: &[&str] = &[
            "Overview",
            "Installation",
            "Create a trigger",
            "List all triggers",
            "Trigger Events",
            "Test Scenarios",
            "STRIDE + Abuse Cases",
            "Example queries",
            "Examples",
            "Usage",
            "How to use",
            "Never use eval",
            "Use cases we avoid",
            "When the build fails",
            "How it works",
            "Case study",
            "Emotional Triggers",
            "Scenario 1: Time pressure",
            "Merge",
            "Don't use eval",
            "Do not use `any`",
            "Errors when not authenticated",
            "When not sure",
            "Non-use cases",
            "Avoid using eval",
        ];
        for (role, headings) in [
            (SectionRole::WhenToUse, when_to_use),
            (SectionRole::WhenNotToUse, when_not_to_use),
            (SectionRole::Body, body),
        ] {
            for heading in headings {
                assert_eq!(heading_role(heading), role, "{heading}");
            }
        }
    }

    #[test]
    fn a_section_has_a_role_at_the_top_of_skill_md_or_by_its_place() {
        use SectionRole::{Body, WhenNotToUse, WhenToUse};
        // (in SKILL.md, heading path, role).
        let cases: [(bool, &[&str], SectionRole); 17] = [
            // At the top of the outline, with or without a document title.
            (true, &["When to use"][..], WhenToUse),
            (true, &["PDF skill", "When to use"][..], WhenToUse),
            (true, &["Guide", "When not to use"][..], WhenNotToUse),
            // Not SKILL.md's, or before any heading.
            (false, &["When to use"][..], Body),
            (true, &[][..], Body),
            // Deeper: a heading that names only the skill's use, under one that names no topic.
            (
                true,
                &["Weather", "Usage guidelines", "When to Use"][..],
                WhenToUse,
            ),
            (
                true,
                &["PDF", "Reference", "When to use this skill"][..],
                WhenToUse,
            ),
            (
                true,
                &["Tool", "Overview", "📝 Trigger Phrases"][..],
                WhenToUse,
            ),
            // …but not under a topic, nor naming one.
            (true, &["Python", "Async vs sync", "When to Use"][..], Body),
            (true, &["CSS", "Container queries", "Use cases"][..], Body),
            (true, &["PDF", "Views", "When to use views"][..], Body),
            // Inherited from the top-level section it belongs to.
            (
                true,
                &["Tool", "Use cases", "Use Case 1: Pipelines"][..],
                WhenToUse,
            ),
            (
                true,
                &["Tool", "When NOT to use", "Big files"][..],
                WhenNotToUse,
            ),
            (true, &["When to use", "Data work"][..], WhenToUse),
            (
                true,
                &["Tool", "Use cases", "Pipelines", "Step one"][..],
                WhenToUse,
            ),
            // A title is not a usage section.
            (true, &["Use cases of LLMs", "Install"][..], Body),
            (true, &["Tool", "Install", "Linux"][..], Body),
        ];
        for (skill_md, path, want) in cases {
            let path: Vec<String> = path.iter().map(|s| (*s).to_owned()).collect();
            assert_eq!(
                section_role(skill_md, &path),
                want,
                "{path:?} (SKILL.md: {skill_md})"
            );
        }
    }
}
