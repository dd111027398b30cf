//! Section roles through extraction: the documents carry them, and the card's `when_to_use` /
//! `when_not_to_use` fallbacks read the same sections.

use skg_extract::Limits;
use skg_model::{Level, SectionRole};

const SKILL: &str = "---
name: pdf-tools
description: Merge PDF files.
---
# PDF tools

## Install

pip install pdf-tools

## Use cases

### Use case 1: weekly reports

Merge the weekly reports into one file.

## When NOT to use

Scanned images: use an OCR skill first.

## Views

### When to use

Views are for read-only pages.
";

const GUIDE: &str = "# Guide

## When to use

Read this guide before merging.
";

#[test]
fn sections_say_when_to_use_a_skill_and_the_card_reads_them() {
    // In memory, through the code paths `extract` runs (no disk needed to read two files).
    let files = [
        ("pdf-tools/SKILL.md".to_owned(), SKILL.as_bytes().to_vec()),
        (
            "pdf-tools/references/guide.md".to_owned(),
            GUIDE.as_bytes().to_vec(),
        ),
    ];
    let x = skg_extract::fuzzing::extract_files(&files, &Limits::default());
    assert_eq!(x.skills.len(), 1);
    let card = &x.skills[0];
    // The top-level "Use cases" section has no text of its own; its subsection inherits its role
    // and gives the card its first paragraph.
    assert_eq!(
        card.when_to_use.as_deref(),
        Some("Merge the weekly reports into one file.")
    );
    assert_eq!(
        card.when_not_to_use.as_deref(),
        Some("Scanned images: use an OCR skill first.")
    );
    let roles: Vec<(&str, &str, SectionRole)> = x
        .documents
        .iter()
        .filter(|d| d.level == Level::L2)
        .map(|d| (d.file.as_str(), d.title.as_str(), d.role))
        .collect();
    assert_eq!(
        roles,
        [
            ("SKILL.md", "Install", SectionRole::Body),
            (
                "SKILL.md",
                "Use case 1: weekly reports",
                SectionRole::WhenToUse
            ),
            ("SKILL.md", "When NOT to use", SectionRole::WhenNotToUse),
            // A "When to use" about views, under a topic, is not about the skill.
            ("SKILL.md", "When to use", SectionRole::Body),
            // Nor is a reference file's.
            ("references/guide.md", "When to use", SectionRole::Body),
        ]
    );
    // L0 and L1 are never sections.
    assert!(
        x.documents
            .iter()
            .filter(|d| d.level != Level::L2)
            .all(|d| d.role == SectionRole::Body)
    );
}
