//! Tool catalogs: JSON arrays, JSONL, MCP `tools/list` results, and the text the scan reads of
//! each tool.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = skg_extract::fuzzing::catalog_bytes(data, &skg_extract::Limits::default());
});
