//! What a registry holds, hashed without extracting it: a content fingerprint (the audit's
//! extract key) and a cheap change stamp (what `skg serve --watch` polls).

use std::{
    hash::{Hash as _, Hasher as _},
    path::Path,
    time::SystemTime,
};

use crate::{Error, RegistrySource, Result};

/// blake3 of what the registries hold: every file under each local source (relative path,
/// length and bytes, in sorted order; symbolic links as their target; `.git` left out), and the
/// git URL and revision of git sources. A git source whose revision is not a full commit id can
/// move without its spec changing, so its fingerprint is never the same twice.
pub fn content_fingerprint(sources: &[RegistrySource]) -> Result<String> {
    let mut h = blake3::Hasher::new();
    for s in sources {
        h.update(s.name.as_str().as_bytes());
        h.update(format!("{:?}", s.kind).as_bytes());
        if let Some(git) = &s.git {
            h.update(git.as_bytes());
            let rev = s.rev.clone().unwrap_or_default();
            h.update(rev.as_bytes());
            if !(rev.len() == 40 && rev.bytes().all(|b| b.is_ascii_hexdigit())) {
                h.update(format!("{:?}", SystemTime::now()).as_bytes());
            }
            continue;
        }
        hash_tree(&s.local_path, &s.local_path, &mut h)?;
    }
    Ok(h.finalize().to_hex().to_string())
}

fn hash_tree(root: &Path, path: &Path, h: &mut blake3::Hasher) -> Result<()> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| Error::io(path, e))?;
    let rel = path.strip_prefix(root).unwrap_or(path);
    if meta.is_dir() {
        let mut entries: Vec<std::path::PathBuf> = std::fs::read_dir(path)
            .map_err(|e| Error::io(path, e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.file_name().is_none_or(|n| n != ".git"))
            .collect();
        entries.sort();
        for e in entries {
            hash_tree(root, &e, h)?;
        }
    } else if meta.is_symlink() {
        h.update(rel.as_os_str().as_encoded_bytes());
        if let Ok(t) = std::fs::read_link(path) {
            h.update(b"->");
            h.update(t.as_os_str().as_encoded_bytes());
        }
    } else if meta.is_file() {
        h.update(rel.as_os_str().as_encoded_bytes());
        h.update(&meta.len().to_le_bytes());
        // An unreadable file is a diagnostic for the extraction, not an error here.
        if let Ok(mut f) = std::fs::File::open(path) {
            let _ = h.update_reader(&mut f);
        }
    }
    Ok(())
}

/// A cheap stamp of the files under `paths`: every file's path, size and modification time
/// (no content read). Equal stamps mean nothing was visibly written in between.
pub fn change_stamp(paths: &[impl AsRef<Path>]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for p in paths {
        for e in walkdir::WalkDir::new(p)
            .sort_by_file_name()
            .into_iter()
            .flatten()
        {
            let Ok(meta) = e.metadata() else { continue };
            if !meta.is_file() {
                continue;
            }
            e.path().hash(&mut h);
            meta.len().hash(&mut h);
            meta.modified()
                .ok()
                .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos())
                .hash(&mut h);
        }
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fingerprint_follows_content_not_timestamps() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| Error::io(Path::new("tmp"), e))?;
        let root = dir.path().join("reg");
        std::fs::create_dir_all(root.join("a")).map_err(|e| Error::io(&root, e))?;
        let file = root.join("a/SKILL.md");
        std::fs::write(&file, "x").map_err(|e| Error::io(&file, e))?;
        let sources = crate::resolve_inputs(std::slice::from_ref(&root))?;
        let f0 = content_fingerprint(&sources)?;
        let s0 = change_stamp(&[&root]);
        // Rewriting the same bytes later: same fingerprint (content), maybe another stamp.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&file, "x").map_err(|e| Error::io(&file, e))?;
        assert_eq!(content_fingerprint(&sources)?, f0);
        std::fs::write(&file, "y").map_err(|e| Error::io(&file, e))?;
        assert_ne!(content_fingerprint(&sources)?, f0);
        assert_ne!(change_stamp(&[&root]), s0);
        // `.git` is not content.
        let f1 = content_fingerprint(&sources)?;
        std::fs::create_dir_all(root.join(".git")).map_err(|e| Error::io(&root, e))?;
        std::fs::write(root.join(".git/HEAD"), "ref").map_err(|e| Error::io(&root, e))?;
        assert_eq!(content_fingerprint(&sources)?, f1);
        Ok(())
    }
}
