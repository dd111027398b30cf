//! What a section says about its skill's use: the one rule behind the card's `when_to_use` /
//! `when_not_to_use` fallbacks and the index's usage vectors ([`SectionRole`], version
//! [`SECTION_ROLE_RULE`]).

#[cfg(doc)]
use skg_model::SECTION_ROLE_RULE;
use skg_model::SectionRole;

/// The role a heading gives its section, read as phrases (so an API section "Create a trigger",
/// a test plan "Test scenarios" or "Abuse cases" is none):
/// - **when not to use**: it holds "when not", "when to avoid", "do not use", "don't use", "not
///   for", "avoid when" or "never use when" ("When NOT to use", "Do not use for …");
/// - **when to use**, unless it says "not", "don't", "avoid" or "never":
///   - it starts with "when to use / apply / activate / invoke", "when should", "use when", "use
///     this skill when", "use this when", "use it when";
///   - or it holds "use case(s)", "usage scenarios", "example prompt(s)", "example
///     request(s)", "prompt examples", "trigger phrases / keywords / conditions / words";
///   - or it is "Triggers" (with at most "proactive", "auto", "skill", "activation");
/// - else **body**.
///
/// Such sections describe the user's situation in the user's words — what a request says —
/// where the card describes the tool (docs/retrieval.md, "Usage sections").
pub fn heading_role(title: &str) -> SectionRole {
    let lower = lowercase(title);
    let words = words(&lower);
    let has = |w: &str| words.contains(&w);
    let phrase = |p: &[&str]| words.windows(p.len()).any(|w| w == p);
    if phrase(&["when", "not"])
        || phrase(&["when", "to", "avoid"])
        || phrase(&["do", "not", "use"])
        || phrase(&["don't", "use"])
        || phrase(&["dont", "use"])
        || phrase(&["not", "for"])
        || phrase(&["avoid", "when"])
        || phrase(&["never", "use", "when"])
    {
        return SectionRole::WhenNotToUse;
    }
    let negated = has("not") || has("don't") || has("dont") || has("avoid") || has("never");
    let text = words.join(" ");
    let starts = [
        "when to use",
        "when to apply",
        "when to activate",
        "when to invoke",
        "when should",
        "use when",
        "use this skill when",
        "use this when",
        "use it when",
    ]
    .iter()
    .any(|p| text.starts_with(p));
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
    if (starts || phrases || triggers) && !negated {
        SectionRole::WhenToUse
    } else {
        SectionRole::Body
    }
}

/// The role of a section of a package's markdown: its heading's ([`heading_role`]) when it is a
/// section of `SKILL.md`'s body at the top of the outline (under the document's title at most),
/// or deeper when the heading names nothing but the skill's use ("Usage guidelines > When to
/// use", "For the agent > Use cases": [`names_only_use`]) — "When to use async" three levels
/// down in a guide is about async, not the skill. A reference file's sections and the preamble
/// before any heading are body.
pub(crate) fn section_role(in_skill_md: bool, heading_path: &[String]) -> SectionRole {
    match heading_path {
        [.., title] if in_skill_md => {
            let role = heading_role(title);
            if heading_path.len() <= 2 || names_only_use(title) {
                role
            } else {
                SectionRole::Body
            }
        }
        _ => SectionRole::Body,
    }
}

/// Whether every word of a heading is one of [`heading_role`]'s own words or a word for the
/// skill ("When to use this skill", "Trigger phrases", "Use cases"), so it names no other topic.
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
    let lower = lowercase(title);
    let words = words(&lower);
    !words.is_empty() && words.iter().all(|w| WORDS.contains(w))
}

/// A heading lowercased, curly apostrophes made straight ("Don’t").
fn lowercase(title: &str) -> String {
    title.to_lowercase().replace(['\u{2019}', '\u{2018}'], "'")
}

/// The words of a lowercased heading: runs of letters, digits and apostrophes.
fn words(lower: &str) -> Vec<&str> {
    lower
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_that_say_when_to_use_a_skill() {
        for yes in [
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
        ] {
            assert_eq!(heading_role(yes), SectionRole::WhenToUse, "{yes}");
        }
    }

    #[test]
    fn headings_that_say_when_not_to_use_a_skill() {
        for no in [
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
        ] {
            assert_eq!(heading_role(no), SectionRole::WhenNotToUse, "{no}");
        }
    }

    #[test]
    fn other_headings_are_body() {
        for body in [
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
        ] {
            assert_eq!(heading_role(body), SectionRole::Body, "{body}");
        }
    }

    #[test]
    fn only_top_level_sections_of_skill_md_have_a_role() {
        let path = |p: &[&str]| p.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            section_role(true, &path(&["When to use"])),
            SectionRole::WhenToUse
        );
        assert_eq!(
            section_role(true, &path(&["PDF skill", "When to use"])),
            SectionRole::WhenToUse
        );
        // Deeper, only a heading that names nothing but the skill's use.
        assert_eq!(
            section_role(true, &path(&["PDF", "Views", "When to use views"])),
            SectionRole::Body
        );
        assert_eq!(
            section_role(
                true,
                &path(&["Python", "Async vs sync", "When to Use Async"])
            ),
            SectionRole::Body
        );
        assert_eq!(
            section_role(true, &path(&["Weather", "Usage guidelines", "When to Use"])),
            SectionRole::WhenToUse
        );
        assert_eq!(
            section_role(true, &path(&["Memory", "Capture", "📝 Trigger Phrases"])),
            SectionRole::WhenToUse
        );
        assert_eq!(
            section_role(true, &path(&["Tool", "Use cases", "Use Case 1: Pipelines"])),
            SectionRole::Body
        );
        assert_eq!(
            section_role(false, &path(&["When to use"])),
            SectionRole::Body
        );
        assert_eq!(section_role(true, &[]), SectionRole::Body);
        assert_eq!(
            section_role(true, &path(&["Guide", "When not to use"])),
            SectionRole::WhenNotToUse
        );
    }
}
