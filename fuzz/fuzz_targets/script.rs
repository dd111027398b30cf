//! Script facts (tree-sitter imports/exports/calls) and structural hashes, per language.
#![no_main]
use skg_syntax::Language;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let lang = match pick % 4 {
        0 => Language::JavaScript,
        1 => Language::TypeScript,
        2 => Language::Tsx,
        _ => Language::Python,
    };
    let text = String::from_utf8_lossy(rest);
    let _ = skg_syntax::analyze(lang, &text);
    let _ = skg_syntax::structure(lang, &text);
    let _ = skg_syntax::plain_structure(&text);
});
