//! Reading one file as text, within limits, never failing on its content.

use std::{io::Read, path::Path};

use skg_model::{DiagnosticCode, Severity};

/// A problem found while reading, before any parsing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReadIssue {
    pub(crate) code: DiagnosticCode,
    pub(crate) severity: Severity,
    pub(crate) line: Option<u32>,
    pub(crate) message: String,
}

/// A file read as text: BOM removed, line endings normalized to `\n`.
#[derive(Debug)]
pub(crate) enum TextFile {
    Text {
        text: String,
        /// Bytes on disk (before truncation).
        size: u64,
        /// The raw bytes read (for content hashing).
        raw: Vec<u8>,
        issues: Vec<ReadIssue>,
    },
    /// NUL bytes: not text.
    Binary {
        size: u64,
        raw: Vec<u8>,
    },
    Unreadable(std::io::Error),
}

/// Reads at most `max_bytes` of `path`.
pub(crate) fn read_text(path: &Path, max_bytes: u64) -> TextFile {
    let mut raw = Vec::new();
    let size = match std::fs::File::open(path).and_then(|f| {
        let size = f.metadata()?.len();
        f.take(max_bytes).read_to_end(&mut raw)?;
        Ok(size)
    }) {
        Ok(s) => s,
        Err(e) => return TextFile::Unreadable(e),
    };
    let probe = &raw[..raw.len().min(8192)];
    if memchr::memchr(0, probe).is_some() {
        return TextFile::Binary { size, raw };
    }
    let (text, issues) = decode(&raw, size, max_bytes);
    TextFile::Text {
        text,
        size,
        raw,
        issues,
    }
}

/// Bytes → normalized text plus what had to be done to them.
pub(crate) fn decode(raw: &[u8], size: u64, max_bytes: u64) -> (String, Vec<ReadIssue>) {
    let mut issues = Vec::new();
    let mut bytes = raw;
    if size > max_bytes {
        // Cut at the last complete line so no half line or half character is kept.
        if let Some(nl) = memchr::memrchr(b'\n', bytes) {
            bytes = &bytes[..=nl];
        }
        issues.push(ReadIssue {
            code: DiagnosticCode::FileTooLarge,
            severity: Severity::Warning,
            line: None,
            message: format!(
                "file is {size} bytes, over the {max_bytes}-byte limit: only the first {} bytes were read (raise --max-file-bytes)",
                bytes.len()
            ),
        });
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let text = match std::str::from_utf8(bytes) {
        Ok(s) => s.to_owned(),
        Err(e) => {
            let line = 1 + memchr::memchr_iter(b'\n', &bytes[..e.valid_up_to()]).count();
            issues.push(ReadIssue {
                code: DiagnosticCode::InvalidUtf8,
                severity: Severity::Warning,
                line: u32::try_from(line).ok(),
                message: "bytes that are not UTF-8 were replaced by U+FFFD".into(),
            });
            String::from_utf8_lossy(bytes).into_owned()
        }
    };
    let text = if text.contains('\r') {
        text.replace("\r\n", "\n").replace('\r', "\n")
    } else {
        text
    };
    (text, issues)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bom_crlf_and_invalid_utf8() {
        let (t, issues) = decode(b"\xEF\xBB\xBFa\r\nb\rc\n", 10, 100);
        assert_eq!(t, "a\nb\nc\n");
        assert!(issues.is_empty());
        let (t, issues) = decode(b"ok\nbad \xFF here\n", 15, 100);
        assert_eq!(t, "ok\nbad \u{FFFD} here\n");
        assert_eq!(issues.len(), 1);
        assert_eq!(issues[0].code, DiagnosticCode::InvalidUtf8);
        assert_eq!(issues[0].line, Some(2));
    }

    #[test]
    fn truncation_keeps_whole_lines() {
        let (t, issues) = decode(b"line one\nline two\nline th", 40, 25);
        assert_eq!(t, "line one\nline two\n");
        assert_eq!(issues[0].code, DiagnosticCode::FileTooLarge);
    }
}
