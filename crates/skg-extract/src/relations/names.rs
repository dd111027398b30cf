//! Lookup tables over all loaded skills: names, files, exported functions, Python modules.

use std::collections::{BTreeMap, HashMap};

use crate::{RegistrySource, load::Loaded};

/// Names shorter than this are never matched in prose (`ci`, `pr` are everywhere).
const MIN_NAME_LEN: usize = 3;

/// Hyphenated English compounds: a skill named like this is ambiguous when mentioned.
const COMMON_COMPOUNDS: &[&str] = &[
    "step-by-step",
    "real-time",
    "end-to-end",
    "open-source",
    "follow-up",
    "how-to",
    "built-in",
    "well-known",
    "up-to-date",
    "front-end",
    "back-end",
    "full-stack",
    "e-mail",
    "one-time",
    "long-term",
    "short-term",
    "high-level",
    "low-level",
    "read-only",
    "opt-in",
    "opt-out",
    "check-in",
    "sign-in",
    "log-in",
    "set-up",
    "to-do",
    "todo-list",
    "best-practices",
    "self-review",
    "user-friendly",
    "day-to-day",
    "out-of-the-box",
    "non-trivial",
    "multi-step",
    "re-run",
    "pre-commit",
    "co-author",
    "third-party",
    "cross-platform",
];

#[derive(Debug)]
pub(crate) struct NameIndex {
    /// Longest name, in bytes.
    max_len: usize,
    /// Pattern id → the name.
    pub(crate) names: Vec<String>,
    /// Pattern id → skills with that slug or folder name.
    pub(crate) skills_by_pattern: Vec<Vec<usize>>,
    name_to_pattern: HashMap<String, usize, foldhash::fast::RandomState>,
    /// Namespace (registry short name or folder) → registry index.
    namespaces: HashMap<String, usize>,
    /// Per registry: registry-relative file path → owning skill.
    pub(crate) files: Vec<BTreeMap<String, usize>>,
    /// Per registry: exported function name → skills exporting it.
    pub(crate) exports: Vec<HashMap<String, Vec<usize>>>,
    /// Per registry: Python module stem → skills with a module of that stem.
    pub(crate) py_modules: Vec<HashMap<String, Vec<usize>>>,
    /// Skill → registry index.
    pub(crate) registry_of: Vec<usize>,
    /// Skill → root (for proximity tie-breaks).
    roots: Vec<String>,
    /// Skill → its folder is named like its slug.
    folder_is_slug: Vec<bool>,
}

impl NameIndex {
    pub(crate) fn build(loaded: &[Loaded], sources: &[RegistrySource]) -> Self {
        let mut name_to_pattern: HashMap<String, usize, foldhash::fast::RandomState> =
            HashMap::default();
        let mut names: Vec<String> = Vec::new();
        let mut skills_by_pattern: Vec<Vec<usize>> = Vec::new();
        let n_reg = sources.len();
        let mut files = vec![BTreeMap::new(); n_reg];
        let mut exports: Vec<HashMap<String, Vec<usize>>> = vec![HashMap::new(); n_reg];
        let mut py_modules: Vec<HashMap<String, Vec<usize>>> = vec![HashMap::new(); n_reg];
        for (i, l) in loaded.iter().enumerate() {
            let mut own = vec![l.skill.slug.to_ascii_lowercase()];
            if l.skill.folder != "." {
                own.push(l.skill.folder.to_ascii_lowercase());
            }
            own.sort();
            own.dedup();
            for n in own {
                if n.len() < MIN_NAME_LEN || !n.bytes().any(|b| b.is_ascii_alphabetic()) {
                    continue;
                }
                let pid = *name_to_pattern.entry(n.clone()).or_insert_with(|| {
                    names.push(n.clone());
                    skills_by_pattern.push(Vec::new());
                    names.len() - 1
                });
                skills_by_pattern[pid].push(i);
            }
            let r = l.registry;
            files[r].insert(l.skill.path.clone(), i);
            for f in &l.skill.files {
                files[r].insert(l.file_path(f), i);
            }
            for s in &l.scripts {
                for e in &s.facts.exports {
                    exports[r].entry(e.clone()).or_default().push(i);
                }
                if let Some(stem) = s
                    .path
                    .strip_suffix(".py")
                    .map(|p| p.rsplit('/').next().unwrap_or(p))
                {
                    py_modules[r].entry(stem.to_owned()).or_default().push(i);
                }
            }
        }
        for v in exports
            .iter_mut()
            .flat_map(|m| m.values_mut())
            .chain(py_modules.iter_mut().flat_map(|m| m.values_mut()))
        {
            v.sort_unstable();
            v.dedup();
        }
        let mut namespaces = HashMap::new();
        for (ri, s) in sources.iter().enumerate() {
            let full = s.name.as_str().to_ascii_lowercase();
            let short = full.rsplit('/').next().unwrap_or(&full).to_owned();
            namespaces.insert(full.clone(), ri);
            namespaces.entry(short).or_insert(ri);
            if let Some(folder) = s.local_path.file_name() {
                namespaces
                    .entry(folder.to_string_lossy().to_ascii_lowercase())
                    .or_insert(ri);
            }
        }
        let max_len = names.iter().map(String::len).max().unwrap_or(0);
        Self {
            max_len,
            names,
            skills_by_pattern,
            name_to_pattern,
            namespaces,
            files,
            exports,
            py_modules,
            registry_of: loaded.iter().map(|l| l.registry).collect(),
            roots: loaded.iter().map(|l| l.skill.root.clone()).collect(),
            folder_is_slug: loaded
                .iter()
                .map(|l| l.skill.folder == l.skill.slug)
                .collect(),
        }
    }

    /// Every whole-token occurrence of a name in `text`: `(start, end, pattern)`. A token is a
    /// maximal run of `[A-Za-z0-9_-]` without trailing hyphens, so a name never matches inside
    /// a longer name (`my-pdf`, `pdf-tools`, `pdf_x`) and matching is one hash lookup per token.
    pub(crate) fn find_names(&self, text: &str) -> Vec<(usize, usize, usize)> {
        let bytes = text.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            if !is_token_byte(bytes[i]) {
                i += 1;
                continue;
            }
            let start = i;
            while i < bytes.len() && is_token_byte(bytes[i]) {
                i += 1;
            }
            let mut end = i;
            while end > start && bytes[end - 1] == b'-' {
                end -= 1;
            }
            let len = end - start;
            if (MIN_NAME_LEN..=self.max_len).contains(&len)
                && let Some(&pid) = self.name_to_pattern.get(&text[start..end])
            {
                out.push((start, end, pid));
            }
        }
        out
    }

    /// Could pattern `pid` found in skill `src` resolve to another skill at all (in any registry)?
    pub(crate) fn may_resolve(&self, pid: usize, src: usize) -> bool {
        self.skills_by_pattern[pid].iter().any(|&c| c != src)
    }

    /// Does pattern `pid` name a skill of registry `registry` other than `src`?
    pub(crate) fn in_registry(&self, pid: usize, registry: usize, src: usize) -> bool {
        self.skills_by_pattern[pid]
            .iter()
            .any(|&c| c != src && self.registry_of[c] == registry)
    }

    /// Is the mention of this name ambiguous (a plain word or a common compound)?
    pub(crate) fn is_ambiguous(name: &str) -> bool {
        !name.contains('-') && name.bytes().all(|b| b.is_ascii_alphabetic())
            || COMMON_COMPOUNDS.contains(&name)
    }

    /// Registry index for a namespace like `superpowers` in `superpowers:brainstorming`.
    pub(crate) fn namespace(&self, ns: &str) -> Option<usize> {
        self.namespaces.get(&ns.to_ascii_lowercase()).copied()
    }

    /// Resolves the skills matched by pattern `pid` as seen from skill `src`: same registry
    /// first (nearest by path when several), else — only if `cross` — the one skill elsewhere
    /// with that name (preferring the registry `prefer`). Returns the skill and whether it is in
    /// another registry.
    pub(crate) fn resolve_pattern(
        &self,
        pid: usize,
        src: usize,
        cross: bool,
        prefer: Option<usize>,
    ) -> Option<(usize, bool)> {
        let cands = &self.skills_by_pattern[pid];
        let reg = self.registry_of[src];
        let target_reg = prefer.unwrap_or(reg);
        let in_reg: Vec<usize> = cands
            .iter()
            .copied()
            .filter(|&c| self.registry_of[c] == target_reg)
            .collect();
        if !in_reg.is_empty() {
            let best = self.nearest(src, &in_reg);
            return Some((best, self.registry_of[best] != reg));
        }
        if prefer.is_some() && prefer != Some(reg) {
            // The namespace named a registry that has no such skill: try the source's own.
            let own: Vec<usize> = cands
                .iter()
                .copied()
                .filter(|&c| self.registry_of[c] == reg)
                .collect();
            if !own.is_empty() {
                return Some((self.nearest(src, &own), false));
            }
        }
        if !cross {
            return None;
        }
        let mut regs: Vec<usize> = cands.iter().map(|&c| self.registry_of[c]).collect();
        regs.sort_unstable();
        regs.dedup();
        (regs.len() == 1 && !cands.is_empty()).then(|| (self.nearest(src, cands), true))
    }

    /// Resolves pattern `pid` in registry `registry` only.
    pub(crate) fn resolve_in(
        &self,
        pid: usize,
        src: usize,
        registry: usize,
    ) -> Option<(usize, bool)> {
        let cands: Vec<usize> = self.skills_by_pattern[pid]
            .iter()
            .copied()
            .filter(|&c| self.registry_of[c] == registry)
            .collect();
        (!cands.is_empty()).then(|| {
            let best = self.nearest(src, &cands);
            (best, registry != self.registry_of[src])
        })
    }

    /// Resolves a name (case-insensitive, namespace stripped by the caller).
    pub(crate) fn resolve_name(
        &self,
        name: &str,
        src: usize,
        cross: bool,
        prefer: Option<usize>,
    ) -> Option<(usize, bool)> {
        let pid = *self.name_to_pattern.get(&name.to_ascii_lowercase())?;
        self.resolve_pattern(pid, src, cross, prefer)
    }

    /// The candidate sharing the longest path prefix with `src` (ties: lowest index).
    fn nearest(&self, src: usize, cands: &[usize]) -> usize {
        let from = &self.roots[src];
        // Longest shared path first (same author or plugin), then the copy whose folder carries
        // the name it was found by (the canonical-looking one), then the lowest index.
        let key = |c: usize| {
            let common = from
                .split('/')
                .zip(self.roots[c].split('/'))
                .take_while(|(a, b)| a == b)
                .count();
            (common, self.folder_is_slug[c])
        };
        let mut best = cands[0];
        let mut best_key = key(best);
        for &c in &cands[1..] {
            let k = key(c);
            if k > best_key {
                best = c;
                best_key = k;
            }
        }
        best
    }

    /// The skill owning a registry-relative path (a file of it, its folder, or anything inside it).
    pub(crate) fn owner(&self, registry: usize, path: &str) -> Option<usize> {
        let files = &self.files[registry];
        if let Some(&s) = files.get(path) {
            return Some(s);
        }
        // A folder: the owner of the first file inside it, if that file is in one package
        // whose root is this folder or above it.
        let prefix = format!("{}/", path.trim_end_matches('/'));
        let (f, &s) = files.range(prefix.clone()..).next()?;
        if !f.starts_with(&prefix) {
            return None;
        }
        let root = &self.roots[s];
        (path == root || path.starts_with(&format!("{root}/")) || root == ".").then_some(s)
    }

    /// Does any file exist at or below this registry-relative path?
    pub(crate) fn exists(&self, registry: usize, path: &str) -> bool {
        let files = &self.files[registry];
        files.contains_key(path) || {
            let prefix = format!("{}/", path.trim_end_matches('/'));
            files
                .range(prefix.clone()..)
                .next()
                .is_some_and(|(f, _)| f.starts_with(&prefix))
        }
    }
}

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Normalizes `a/b/../c/./d` to `a/c/d`; `None` if it climbs above the root.
pub(crate) fn normalize_path(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    Some(if parts.is_empty() {
        ".".to_owned()
    } else {
        parts.join("/")
    })
}

/// Folder of a registry-relative file path (`.` at the top).
pub(crate) fn parent(path: &str) -> &str {
    path.rfind('/').map_or(".", |i| &path[..i])
}

/// Joins a registry-relative folder and a relative path.
pub(crate) fn join_rel(dir: &str, rel: &str) -> Option<String> {
    if dir == "." {
        normalize_path(rel)
    } else {
        normalize_path(&format!("{dir}/{rel}"))
    }
}
