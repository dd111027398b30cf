//! Encoded blobs: base64 or hex that decodes to commands, addresses or secrets.

use super::{Ctx, OBF_BLOB, Place, instructions::instruction_rules, re, shell::shell_rules};
use base64::Engine as _;
use regex::Regex;
use std::sync::LazyLock;

pub(super) static B64: LazyLock<Regex> =
    LazyLock::new(|| re(r"[A-Za-z0-9+/]{24,}={0,2}|[A-Za-z0-9_-]{32,}={0,2}"));
pub(super) static HEX: LazyLock<Regex> =
    LazyLock::new(|| re(r"\b(?:[0-9a-fA-F]{2}){16,}\b|(?:\\x[0-9a-fA-F]{2}){12,}"));
pub(super) static DECODED_DANGER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(https?://|\b(?:curl|wget|bash|sh|nc|ncat|powershell|iex|eval|exec|chmod|/bin/|python3?\s+-c|rm\s+-rf|base64)\b|\b(?:ignore|disregard)\b.{0,40}\binstructions\b|\bsystem prompt\b|\bdo not tell\b)",
    )
});

/// Decoded text of a blob when it is mostly printable ASCII.
pub(super) fn decode_blob(blob: &str) -> Option<String> {
    let bytes = if blob.starts_with("\\x") {
        let hex: String = blob.split("\\x").collect();
        decode_hex(&hex)?
    } else if blob.len().is_multiple_of(2) && blob.bytes().all(|b| b.is_ascii_hexdigit()) {
        decode_hex(blob)?
    } else {
        let std = base64::engine::general_purpose::STANDARD;
        let url = base64::engine::general_purpose::URL_SAFE;
        let t = blob.trim_end_matches('=');
        let pad = |s: &str| {
            let mut s = s.to_owned();
            while !s.len().is_multiple_of(4) {
                s.push('=');
            }
            s
        };
        std.decode(pad(t)).or_else(|_| url.decode(pad(t))).ok()?
    };
    if bytes.len() < 12 {
        return None;
    }
    let printable = bytes
        .iter()
        .filter(|&&b| b == b'\n' || b == b'\t' || (0x20..0x7f).contains(&b))
        .count();
    (printable * 100 >= bytes.len() * 95).then(|| String::from_utf8_lossy(&bytes).into_owned())
}

pub(super) fn decode_hex(h: &str) -> Option<Vec<u8>> {
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(h.get(i..i + 2)?, 16).ok())
        .collect()
}

pub(super) fn blob_rule(ctx: &mut Ctx<'_>, text: &str, line0: u32, place: Place<'_>) {
    for (i, l) in text.lines().enumerate() {
        if l.contains("data:image/") || l.contains("data:font/") || l.contains("sha256-") {
            continue;
        }
        let line = line0 + u32::try_from(i).unwrap_or(0);
        for m in B64.find_iter(l).chain(HEX.find_iter(l)) {
            let Some(decoded) = decode_blob(m.as_str()) else {
                continue;
            };
            if let Some(d) = DECODED_DANGER.find(&decoded) {
                ctx.emit(
                    OBF_BLOB,
                    0.85,
                    line,
                    &format!("{} → {}", m.as_str(), decoded),
                    format!(
                        "an encoded blob decodes to text with `{}` in it",
                        d.as_str()
                    ),
                    Vec::new(),
                    place,
                    0,
                );
                // The decoded text is read again as shell and as instructions.
                let before = ctx.out.len();
                shell_rules(ctx, &decoded, line, place);
                instruction_rules(ctx, &decoded, line, place);
                for f in &mut ctx.out[before..] {
                    f.line = line;
                    f.context.push("raised: found in decoded base64/hex".into());
                }
            }
        }
    }
}
