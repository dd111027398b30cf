//! Frontmatter: the strict YAML read, then the repair pass, on any text.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = skg_extract::fuzzing::frontmatter(&text);
});
