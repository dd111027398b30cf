//! Script facts (tree-sitter imports/exports/calls) and structural hashes from one parse, per
//! language, as extraction reads every script; and the plain fingerprint of other languages.
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
    let script = skg_syntax::script_within(lang, &text, skg_syntax::DEFAULT_PARSE_BUDGET);
    assert_eq!(script.structure.hash.len(), 32);
    let _ = skg_syntax::plain_structure(&text);
});
