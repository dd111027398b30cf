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
        /// blake3 of the bytes read (for content hashing).
        digest: blake3::Hash,
        issues: Vec<ReadIssue>,
    },
    /// NUL bytes: not text.
    Binary {
        size: u64,
        digest: blake3::Hash,
    },
    Unreadable(std::io::Error),
}

/// The flag that raises the limit a package's files are read under.
pub(crate) const FILE_FLAG: &str = "--max-file-bytes";

/// Reads at most `max_bytes` of `path` (the bytes are hashed, then decoded in place); `flag`
/// is the option a cut file's diagnostic tells the user to raise.
pub(crate) fn read_text(path: &Path, max_bytes: u64, flag: &str) -> TextFile {
    match read_bytes(path, max_bytes) {
        Ok((raw, size)) => text_from_bytes(raw, size, max_bytes, flag),
        Err(e) => TextFile::Unreadable(e),
    }
}

/// Whether a file's first bytes hold a NUL: the probe that calls a file binary (its first 8 KiB).
pub(crate) fn looks_binary(raw: &[u8]) -> bool {
    memchr::memchr(0, &raw[..raw.len().min(8192)]).is_some()
}

/// The bytes read of a file (`size` on disk) as a [`TextFile`].
pub(crate) fn text_from_bytes(raw: Vec<u8>, size: u64, max_bytes: u64, flag: &str) -> TextFile {
    let digest = blake3::hash(&raw);
    if looks_binary(&raw) {
        return TextFile::Binary { size, digest };
    }
    let (text, issues) = decode(raw, size, max_bytes, flag);
    TextFile::Text {
        text,
        size,
        digest,
        issues,
    }
}

/// Where a registry's files are read from: the disk, or memory (fuzzing, tests).
pub(crate) trait Files: Sync {
    /// At most `max_bytes` of the registry-relative file `rel`, and its full size.
    fn bytes(&self, rel: &str, max_bytes: u64) -> std::io::Result<(Vec<u8>, u64)>;

    /// Whether a file or folder exists at the registry-relative path `rel` (walked or not).
    fn exists(&self, rel: &str) -> bool;

    /// The file as text (see [`read_text`]).
    fn text(&self, rel: &str, max_bytes: u64) -> TextFile {
        match self.bytes(rel, max_bytes) {
            Ok((raw, size)) => text_from_bytes(raw, size, max_bytes, FILE_FLAG),
            Err(e) => TextFile::Unreadable(e),
        }
    }
}

/// A registry folder on disk; paths that are not UTF-8 are read by their real names.
#[derive(Debug)]
pub(crate) struct Disk<'a> {
    pub(crate) root: &'a Path,
    pub(crate) real_paths: &'a std::collections::HashMap<String, std::path::PathBuf>,
}

impl Files for Disk<'_> {
    fn bytes(&self, rel: &str, max_bytes: u64) -> std::io::Result<(Vec<u8>, u64)> {
        match self.real_paths.get(rel) {
            Some(path) => read_bytes(path, max_bytes),
            None => read_bytes(&crate::walk::abs(self.root, rel), max_bytes),
        }
    }

    fn exists(&self, rel: &str) -> bool {
        self.real_paths.contains_key(rel) || crate::walk::abs(self.root, rel).exists()
    }
}

/// A registry held in memory: registry-relative path → bytes.
#[derive(Debug, Default)]
pub(crate) struct Memory(pub(crate) std::collections::BTreeMap<String, Vec<u8>>);

impl Files for Memory {
    fn exists(&self, rel: &str) -> bool {
        let dir = format!("{}/", rel.trim_end_matches('/'));
        self.0.contains_key(rel)
            || self
                .0
                .range(dir.clone()..)
                .next()
                .is_some_and(|(k, _)| k.starts_with(&dir))
    }

    fn bytes(&self, rel: &str, max_bytes: u64) -> std::io::Result<(Vec<u8>, u64)> {
        let b = self
            .0
            .get(rel)
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))?;
        let n = usize::try_from(max_bytes)
            .unwrap_or(usize::MAX)
            .min(b.len());
        Ok((b[..n].to_vec(), b.len() as u64))
    }
}

/// At most `max_bytes` of a file, and its size on disk.
pub(crate) fn read_bytes(path: &Path, max_bytes: u64) -> std::io::Result<(Vec<u8>, u64)> {
    let f = std::fs::File::open(path)?;
    let size = f.metadata()?.len();
    let want = usize::try_from(size.min(max_bytes)).unwrap_or(usize::MAX);
    let mut raw = Vec::with_capacity(want.saturating_add(1));
    f.take(max_bytes).read_to_end(&mut raw)?;
    Ok((raw, size))
}

/// Bytes → normalized text plus what had to be done to them (reusing the buffer when it can).
pub(crate) fn decode(
    mut raw: Vec<u8>,
    size: u64,
    max_bytes: u64,
    flag: &str,
) -> (String, Vec<ReadIssue>) {
    let mut issues = Vec::new();
    if size > max_bytes {
        // Cut at the last complete line so no half line or half character is kept.
        if let Some(nl) = memchr::memrchr(b'\n', &raw) {
            raw.truncate(nl + 1);
        }
        issues.push(ReadIssue {
            code: DiagnosticCode::FileTooLarge,
            severity: Severity::Warning,
            line: None,
            message: format!(
                "file is {size} bytes, over the {max_bytes}-byte limit: only the first {} bytes were read (raise {flag})",
                raw.len()
            ),
        });
    }
    if raw.starts_with(b"\xEF\xBB\xBF") {
        raw.drain(..3);
    }
    let text = match String::from_utf8(raw) {
        Ok(s) => s,
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let bytes = e.into_bytes();
            let line = 1 + memchr::memchr_iter(b'\n', &bytes[..valid]).count();
            issues.push(ReadIssue {
                code: DiagnosticCode::InvalidUtf8,
                severity: Severity::Warning,
                line: u32::try_from(line).ok(),
                message: "bytes that are not UTF-8 were replaced by U+FFFD".into(),
            });
            String::from_utf8_lossy(&bytes).into_owned()
        }
    };
    let text = match line_ends(&text) {
        std::borrow::Cow::Borrowed(_) => text,
        std::borrow::Cow::Owned(t) => t,
    };
    (text, issues)
}

/// `text` with every line end written `\n`: a CRLF pair and a lone CR (old Mac files, and JSON
/// strings, which may hold either) end a line as they do for a markdown reader, so every reader
/// after extract counts the same lines.
pub(crate) fn line_ends(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains('\r') {
        std::borrow::Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bom_crlf_and_invalid_utf8() {
        let (t, issues) = decode(b"\xEF\xBB\xBFa\r\nb\rc\n".to_vec(), 10, 100, FILE_FLAG);
        assert_eq!(t, "a\nb\nc\n");
        assert!(issues.is_empty());
        let (t, issues) = decode(b"ok\nbad \xFF here\n".to_vec(), 15, 100, FILE_FLAG);
        assert_eq!(t, "ok\nbad \u{FFFD} here\n");
        assert_eq!(issues.len(), 1);
        assert_eq!(issues[0].code, DiagnosticCode::InvalidUtf8);
        assert_eq!(issues[0].line, Some(2));
    }

    #[test]
    fn truncation_keeps_whole_lines() {
        let (t, issues) = decode(b"line one\nline two\nline th".to_vec(), 40, 25, FILE_FLAG);
        assert_eq!(t, "line one\nline two\n");
        assert_eq!(issues[0].code, DiagnosticCode::FileTooLarge);
    }
}
