//! Tenants and access: API keys stored hashed in a TOML file the gateway watches; each key's view
//! of the catalog (allow and deny glob patterns over skill ids, its quarantine policy), its rate
//! limit (a token bucket) and its defaults.
//!
//! A key reads `skg_<id>_<secret>`: `id` (12 hex digits) is public and names the entry; the file
//! keeps only the BLAKE3 hash of the whole key, compared in constant time. Keys are 32 random
//! bytes from the operating system, so a fast hash is enough (there is nothing to brute-force).
//!
//! What a key sees: a skill whose id (`registry:path`) matches an `allow` pattern and no `deny`
//! pattern; quarantined skills only when the entry says `quarantined = true`; skills the security
//! scan found unsafe never (the index withholds them from everyone). Patterns are globs (`*` and
//! `?` match across `/`; `{a,b}` alternatives; `[...]` classes).

use std::{
    collections::HashMap,
    num::NonZeroU32,
    path::Path,
    sync::Arc,
    time::{Duration, SystemTime},
};

use globset::{Glob, GlobSet, GlobSetBuilder};
use governor::{Quota, RateLimiter, clock::Clock as _};
use serde::{Deserialize, Serialize};
use skg_index::SkillEntry;

/// The keys file's format version.
pub const KEYS_FORMAT: u32 = 1;

/// How a key begins.
const KEY_PREFIX: &str = "skg_";

/// The keys file (TOML), written by `skg keys` and watched by `skg serve --keys`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeysFile {
    /// Format version ([`KEYS_FORMAT`]).
    pub format: u32,
    /// The keys, revoked ones included (they stay listed with their revocation time).
    #[serde(default, rename = "key", skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<KeyEntry>,
}

impl Default for KeysFile {
    fn default() -> KeysFile {
        KeysFile {
            format: KEYS_FORMAT,
            keys: Vec::new(),
        }
    }
}

fn everything() -> Vec<String> {
    vec!["*".to_owned()]
}

/// One key: who holds it, what it may see, how often it may ask.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyEntry {
    /// The key's public id (12 hex digits; the key reads `skg_<id>_<secret>`).
    pub id: String,
    /// The tenant holding it (metrics and logs are labelled with it).
    pub tenant: String,
    /// `blake3:<hex>` of the whole key.
    pub hash: String,
    /// When it was created (seconds since the Unix epoch).
    pub created: u64,
    /// When it was revoked (seconds since the Unix epoch); a revoked key is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked: Option<u64>,
    /// Skill-id patterns the key may see (default: every skill).
    #[serde(default = "everything")]
    pub allow: Vec<String>,
    /// Skill-id patterns it may not see (they win over `allow`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
    /// Whether it may see quarantined skills (by id, and with `include_quarantined`).
    #[serde(default)]
    pub quarantined: bool,
    /// Requests per second it may make on average (none: unlimited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_per_second: Option<f64>,
    /// Requests it may make at once above the average (default: one second's worth, at least 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst: Option<u32>,
    /// `k` when a request does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k: Option<usize>,
    /// `token_budget` when a route request does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_budget: Option<u64>,
}

/// A new key's policy (what `skg keys add` asks for).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Policy {
    /// Allowed skill-id patterns (empty: every skill).
    pub allow: Vec<String>,
    /// Denied skill-id patterns.
    pub deny: Vec<String>,
    /// May see quarantined skills.
    pub quarantined: bool,
    /// Average requests per second.
    pub rate_per_second: Option<f64>,
    /// Burst above the average.
    pub burst: Option<u32>,
    /// Default `k`.
    pub k: Option<usize>,
    /// Default token budget.
    pub token_budget: Option<u64>,
}

/// Errors reading, checking or changing keys.
#[derive(Debug, thiserror::Error)]
pub enum KeysError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a keys file (line and column of the first problem).
    #[error("{path}:{line}:{column}: {message}")]
    Parse {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// An entry is invalid (bad pattern, rate, duplicate id …).
    #[error("{path}: key {id}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// The entry's id.
        id: String,
        /// What is wrong.
        message: String,
    },
    /// The operating system gave no random bytes.
    #[error("no random bytes for a new key: {0}")]
    Random(String),
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn key_hash(key: &str) -> String {
    format!("blake3:{}", blake3::hash(key.as_bytes()).to_hex())
}

/// The keys file's text.
///
/// # Errors
/// The file cannot be read.
#[allow(
    clippy::disallowed_methods,
    reason = "the keys file is the gateway's own configuration, read here only"
)]
pub fn read_text(path: &Path) -> Result<String, KeysError> {
    std::fs::read_to_string(path).map_err(|source| KeysError::Io {
        path: path.display().to_string(),
        source,
    })
}

impl KeysFile {
    /// Parses a keys file's text; `path` names it in errors (`path:line:column: …`).
    ///
    /// # Errors
    /// Not TOML, unknown fields, another format version, or an invalid entry.
    pub fn parse(text: &str, path: &Path) -> Result<KeysFile, KeysError> {
        let shown = path.display().to_string();
        let file: KeysFile = toml::from_str(text).map_err(|e| {
            let (line, column) = e.span().map_or((1, 1), |span| {
                let before = &text[..span.start.min(text.len())];
                let line = before.matches('\n').count() + 1;
                let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
                (line, column)
            });
            KeysError::Parse {
                path: shown.clone(),
                line,
                column,
                message: e.message().to_owned(),
            }
        })?;
        if file.format != KEYS_FORMAT {
            return Err(KeysError::Parse {
                path: shown,
                line: 1,
                column: 1,
                message: format!(
                    "format {} is not supported (this skg reads format {KEYS_FORMAT})",
                    file.format
                ),
            });
        }
        // Every entry must compile; the same check the gateway makes on load.
        Keys::compile(&file, None, path)?;
        Ok(file)
    }

    /// Reads and parses the file at `path`.
    ///
    /// # Errors
    /// As [`KeysFile::parse`], or the file cannot be read.
    pub fn read(path: &Path) -> Result<KeysFile, KeysError> {
        KeysFile::parse(&read_text(path)?, path)
    }

    /// The file's text (what `skg keys` writes).
    pub fn to_toml(&self) -> String {
        let body = toml::to_string_pretty(self).unwrap_or_default();
        format!(
            "# skg gateway keys (skg keys add/list/revoke). Keys are stored as BLAKE3 hashes;\n# the gateway re-reads this file when it changes.\n{body}"
        )
    }

    /// Adds a key for `tenant` with `policy`; returns the key (shown once, never stored) and
    /// its entry (added to the file).
    ///
    /// # Errors
    /// No random bytes, or the policy does not compile (bad pattern or rate).
    pub fn add(&mut self, tenant: &str, policy: Policy) -> Result<(String, KeyEntry), KeysError> {
        let mut id_bytes = [0u8; 6];
        let mut secret = [0u8; 32];
        loop {
            getrandom::fill(&mut id_bytes).map_err(|e| KeysError::Random(e.to_string()))?;
            if !self.keys.iter().any(|k| k.id == hex(&id_bytes)) {
                break;
            }
        }
        getrandom::fill(&mut secret).map_err(|e| KeysError::Random(e.to_string()))?;
        let id = hex(&id_bytes);
        let key = format!("{KEY_PREFIX}{id}_{}", hex(&secret));
        let entry = KeyEntry {
            id,
            tenant: tenant.to_owned(),
            hash: key_hash(&key),
            created: now(),
            revoked: None,
            allow: if policy.allow.is_empty() {
                everything()
            } else {
                policy.allow
            },
            deny: policy.deny,
            quarantined: policy.quarantined,
            rate_per_second: policy.rate_per_second,
            burst: policy.burst,
            k: policy.k,
            token_budget: policy.token_budget,
        };
        Tenant::compile(&entry, None).map_err(|message| KeysError::Invalid {
            path: "(new key)".to_owned(),
            id: entry.id.clone(),
            message,
        })?;
        self.keys.push(entry.clone());
        Ok((key, entry))
    }

    /// Marks the key `id` revoked now; false when there is no such key or it was revoked.
    pub fn revoke(&mut self, id: &str) -> bool {
        match self.keys.iter_mut().find(|k| k.id == id) {
            Some(k) if k.revoked.is_none() => {
                k.revoked = Some(now());
                true
            }
            _ => false,
        }
    }
}

/// Why a request's key was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// No key was sent.
    Missing,
    /// The key is not one of the file's (malformed, unknown id or wrong secret).
    Unknown,
    /// The key was revoked.
    Revoked,
}

impl Refusal {
    /// The refusal as a metric label.
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::Missing => "missing",
            Refusal::Unknown => "unknown",
            Refusal::Revoked => "revoked",
        }
    }
}

type Limiter = RateLimiter<
    governor::state::NotKeyed,
    governor::state::InMemoryState,
    governor::clock::DefaultClock,
>;

/// A key, compiled: its patterns, its bucket, its defaults.
#[derive(Debug)]
pub struct Tenant {
    /// The key's id.
    pub id: String,
    /// The tenant's name.
    pub name: String,
    hash: blake3::Hash,
    revoked: bool,
    allow: GlobSet,
    deny: GlobSet,
    /// May see quarantined skills.
    pub quarantined: bool,
    limiter: Option<(Quota, Arc<Limiter>)>,
    /// Default `k`.
    pub k: Option<usize>,
    /// Default token budget.
    pub token_budget: Option<u64>,
    /// Identifies what the key may see (allow, deny, quarantine policy): keys with the same
    /// view share one cached scope per index revision.
    pub view: u64,
}

fn globs(patterns: &[String]) -> Result<GlobSet, String> {
    let mut b = GlobSetBuilder::new();
    for p in patterns {
        b.add(Glob::new(p).map_err(|e| format!("pattern {p:?}: {e}"))?);
    }
    b.build().map_err(|e| e.to_string())
}

fn quota(rate: f64, burst: Option<u32>) -> Result<Quota, String> {
    if !(rate.is_finite() && rate > 0.0) {
        return Err(format!(
            "rate_per_second must be a positive number, got {rate}"
        ));
    }
    // A rate so small that its period overflows a Duration (below about 5e-20 a second) is
    // refused, not a panic.
    let period = Duration::try_from_secs_f64(1.0 / rate)
        .map_err(|_| format!("rate_per_second {rate} is too small"))?;
    let burst = burst.unwrap_or_else(|| {
        // One second's worth, at least one request.
        let per_second = rate.ceil().clamp(1.0, f64::from(u32::MAX));
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "clamped to 1..=u32::MAX above"
        )]
        let b = per_second as u32;
        b
    });
    let burst = NonZeroU32::new(burst).ok_or("burst must be at least 1")?;
    Quota::with_period(period)
        .map(|q| q.allow_burst(burst))
        .ok_or_else(|| format!("rate_per_second {rate} is too large"))
}

impl Tenant {
    /// Compiles an entry; `previous` (the same id from the last load) keeps its bucket when the
    /// quota did not change, so re-reading the file does not refill anyone's bucket.
    fn compile(entry: &KeyEntry, previous: Option<&Tenant>) -> Result<Tenant, String> {
        let hex = entry
            .hash
            .strip_prefix("blake3:")
            .ok_or("hash must read blake3:<64 hex digits>")?;
        let hash = blake3::Hash::from_hex(hex).map_err(|e| format!("hash: {e}"))?;
        let limiter = match entry.rate_per_second {
            None => None,
            Some(rate) => {
                let q = quota(rate, entry.burst)?;
                Some(match previous.and_then(|p| p.limiter.as_ref()) {
                    Some((old, l)) if *old == q => (q, Arc::clone(l)),
                    _ => (q, Arc::new(RateLimiter::direct(q))),
                })
            }
        };
        if entry.k == Some(0) {
            return Err("k must be at least 1".to_owned());
        }
        let view = {
            let mut h = blake3::Hasher::new();
            for p in &entry.allow {
                h.update(b"a\0").update(p.as_bytes()).update(b"\0");
            }
            for p in &entry.deny {
                h.update(b"d\0").update(p.as_bytes()).update(b"\0");
            }
            h.update(&[u8::from(entry.quarantined)]);
            let b = h.finalize();
            u64::from_le_bytes(b.as_bytes()[..8].try_into().unwrap_or([0; 8]))
        };
        Ok(Tenant {
            id: entry.id.clone(),
            name: entry.tenant.clone(),
            hash,
            revoked: entry.revoked.is_some(),
            allow: globs(&entry.allow)?,
            deny: globs(&entry.deny)?,
            quarantined: entry.quarantined,
            limiter,
            k: entry.k,
            token_budget: entry.token_budget,
            view,
        })
    }

    /// Whether this key may see the skill (the index withholds unsafe skills from everyone).
    pub fn sees(&self, s: &SkillEntry) -> bool {
        let id = s.id.as_str();
        !s.r#unsafe
            && (self.quarantined || !s.quarantined)
            && self.allow.is_match(id)
            && !self.deny.is_match(id)
    }

    /// Takes one request from the bucket; `Err(wait)` when it is empty (retry after `wait`).
    ///
    /// # Errors
    /// The key's rate limit is reached.
    pub fn take(&self) -> Result<(), Duration> {
        match &self.limiter {
            None => Ok(()),
            Some((_, l)) => l
                .check()
                .map_err(|not_until| not_until.wait_time_from(l.clock().now())),
        }
    }
}

/// The keys in force: compiled from the file, looked up by id.
#[derive(Debug, Default)]
pub struct Keys {
    by_id: HashMap<String, Arc<Tenant>>,
}

impl Keys {
    /// Compiles every entry of `file` (`path` names it in errors); `previous` keeps the
    /// buckets of keys whose quota did not change.
    ///
    /// # Errors
    /// A duplicate id, a bad hash, pattern or rate.
    pub fn compile(
        file: &KeysFile,
        previous: Option<&Keys>,
        path: &Path,
    ) -> Result<Keys, KeysError> {
        let mut by_id = HashMap::with_capacity(file.keys.len());
        for entry in &file.keys {
            let invalid = |message: String| KeysError::Invalid {
                path: path.display().to_string(),
                id: entry.id.clone(),
                message,
            };
            if entry.id.is_empty() || !entry.id.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(invalid("the id must be hex digits".to_owned()));
            }
            let old = previous
                .and_then(|p| p.by_id.get(&entry.id))
                .map(Arc::as_ref);
            let tenant = Tenant::compile(entry, old).map_err(invalid)?;
            if by_id.insert(entry.id.clone(), Arc::new(tenant)).is_some() {
                return Err(KeysError::Invalid {
                    path: path.display().to_string(),
                    id: entry.id.clone(),
                    message: "the id appears twice".to_owned(),
                });
            }
        }
        Ok(Keys { by_id })
    }

    /// The tenant of a presented key.
    ///
    /// # Errors
    /// The key is malformed, unknown, wrong or revoked.
    pub fn authenticate(&self, presented: &str) -> Result<Arc<Tenant>, Refusal> {
        let id = presented
            .strip_prefix(KEY_PREFIX)
            .and_then(|rest| rest.split_once('_'))
            .map(|(id, _)| id)
            .ok_or(Refusal::Unknown)?;
        let tenant = self.by_id.get(id).ok_or(Refusal::Unknown)?;
        // blake3::Hash compares in constant time.
        if blake3::hash(presented.as_bytes()) != tenant.hash {
            return Err(Refusal::Unknown);
        }
        if tenant.revoked {
            return Err(Refusal::Revoked);
        }
        Ok(Arc::clone(tenant))
    }

    /// Keys in force (revoked ones included).
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// No key at all.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }
}

/// Who is asking: anyone (the gateway runs open) or the holder of a key.
#[derive(Debug, Clone)]
pub enum Access {
    /// Open mode: every skill but unsafe ones, every request honoured.
    Open,
    /// A key's holder: its view, bucket and defaults.
    Key(Arc<Tenant>),
}

impl Access {
    /// The tenant label of metrics and logs (`open` in open mode).
    pub fn tenant(&self) -> &str {
        match self {
            Access::Open => "open",
            Access::Key(t) => &t.name,
        }
    }

    /// The key's compiled policy, when there is one.
    pub fn key(&self) -> Option<&Tenant> {
        match self {
            Access::Open => None,
            Access::Key(t) => Some(t),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "a panic is the test failure")]

    use super::*;

    fn file_with(policy: Policy) -> (KeysFile, String, KeyEntry) {
        let mut f = KeysFile::default();
        let (key, entry) = f.add("research", policy).unwrap();
        (f, key, entry)
    }

    #[test]
    fn a_new_key_authenticates_and_only_its_hash_is_stored() {
        let (f, key, entry) = file_with(Policy::default());
        assert!(key.starts_with(&format!("skg_{}_", entry.id)));
        assert_eq!(key.len(), 4 + 12 + 1 + 64);
        let text = f.to_toml();
        assert!(!text.contains(&key[17..]), "the secret is never written");
        let back = KeysFile::parse(&text, Path::new("keys.toml")).unwrap();
        assert_eq!(back, f);
        let keys = Keys::compile(&back, None, Path::new("keys.toml")).unwrap();
        assert_eq!(keys.authenticate(&key).unwrap().name, "research");
        // The right id with another secret, a malformed key, nothing.
        let wrong = format!("skg_{}_{}", entry.id, "0".repeat(64));
        assert_eq!(keys.authenticate(&wrong).unwrap_err(), Refusal::Unknown);
        assert_eq!(keys.authenticate("hello").unwrap_err(), Refusal::Unknown);
        assert_eq!(keys.authenticate("").unwrap_err(), Refusal::Unknown);
    }

    #[test]
    fn a_revoked_key_is_refused() {
        let (mut f, key, entry) = file_with(Policy::default());
        assert!(f.revoke(&entry.id));
        assert!(!f.revoke(&entry.id), "already revoked");
        assert!(!f.revoke("ffffffffffff"));
        let keys = Keys::compile(&f, None, Path::new("k")).unwrap();
        assert_eq!(keys.authenticate(&key).unwrap_err(), Refusal::Revoked);
    }

    #[test]
    fn parse_errors_name_the_line_and_column() {
        let text = "format = 1\n\n[[key]]\nid = \"ab\"\ntenant = 3\n";
        let e = KeysFile::parse(text, Path::new("keys.toml")).unwrap_err();
        let shown = e.to_string();
        assert!(shown.starts_with("keys.toml:5:10:"), "{shown}");
        let e = KeysFile::parse("format = 2\n", Path::new("k.toml")).unwrap_err();
        assert!(e.to_string().contains("format 2 is not supported"), "{e}");
        let (mut f, _, _) = file_with(Policy::default());
        f.keys[0].allow = vec!["[".to_owned()];
        let e = KeysFile::parse(&f.to_toml(), Path::new("k.toml")).unwrap_err();
        assert!(e.to_string().contains("pattern \"[\""), "{e}");
    }

    #[test]
    fn the_bucket_holds_burst_requests_then_says_how_long_to_wait() {
        let (f, key, _) = file_with(Policy {
            rate_per_second: Some(0.5),
            burst: Some(3),
            ..Policy::default()
        });
        let keys = Keys::compile(&f, None, Path::new("k")).unwrap();
        let t = keys.authenticate(&key).unwrap();
        for _ in 0..3 {
            t.take().unwrap();
        }
        let wait = t.take().unwrap_err();
        // One request every 2 s: the next one is at most 2 s away.
        assert!(
            wait > Duration::ZERO && wait <= Duration::from_secs(2),
            "{wait:?}"
        );
        // Re-reading an unchanged file keeps the empty bucket.
        let again = Keys::compile(&f, Some(&keys), Path::new("k")).unwrap();
        assert!(again.authenticate(&key).unwrap().take().is_err());
    }

    #[test]
    fn bad_rates_are_refused() {
        // 1e-20 and the smallest positive number: periods past what a Duration holds.
        for rate in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e-20, 5e-324] {
            let mut f = KeysFile::default();
            let e = f
                .add(
                    "t",
                    Policy {
                        rate_per_second: Some(rate),
                        ..Policy::default()
                    },
                )
                .unwrap_err();
            assert!(e.to_string().contains("rate_per_second"), "{e}");
        }
    }
}
