//! `skg keys add | list | revoke`: the gateway's keys file (skg_serve::access).

use std::{io::Write as _, path::Path};

use anyhow::Context as _;
use serde::Serialize;
use skg_serve::access::{KeyEntry, KeysError, KeysFile, Policy};

use crate::{
    ExitStatus,
    args::{KeysAddArgs, KeysCommand, KeysFileArgs, KeysRevokeArgs},
    commands::emit,
};

pub(crate) fn run(cmd: &KeysCommand) -> anyhow::Result<ExitStatus> {
    match cmd {
        KeysCommand::Add(a) => add(a),
        KeysCommand::List(a) => list(a),
        KeysCommand::Revoke(a) => revoke(a),
    }
}

/// The file, or an empty one when `missing_ok` and it does not exist yet.
fn read(path: &Path, missing_ok: bool) -> anyhow::Result<KeysFile> {
    match KeysFile::read(path) {
        Err(KeysError::Io { source, .. })
            if missing_ok && source.kind() == std::io::ErrorKind::NotFound =>
        {
            Ok(KeysFile::default())
        }
        other => other.map_err(anyhow::Error::from),
    }
}

fn write(path: &Path, file: &KeysFile) -> anyhow::Result<()> {
    skg_artifact::write_file(path, file.to_toml().as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))
}

#[derive(Serialize)]
struct Added<'a> {
    /// The key: shown once, never stored.
    key: &'a str,
    entry: &'a KeyEntry,
    file: String,
}

fn add(a: &KeysAddArgs) -> anyhow::Result<ExitStatus> {
    let path = &a.file.file;
    let mut file = read(path, true)?;
    let (key, entry) = file.add(
        &a.tenant,
        Policy {
            allow: a.allow.clone(),
            deny: a.deny.clone(),
            quarantined: a.quarantined,
            rate_per_second: a.rate,
            burst: a.burst,
            k: a.k,
            token_budget: a.token_budget,
        },
    )?;
    write(path, &file)?;
    let shown = Added {
        key: &key,
        entry: &entry,
        file: path.display().to_string(),
    };
    emit(a.file.format, &shown, |o| {
        writeln!(o, "{key}")?;
        let _ = writeln!(
            std::io::stderr(),
            "skg keys: added key {} for tenant {} to {} — the key above is shown once; only its hash is stored",
            entry.id,
            entry.tenant,
            path.display()
        );
        Ok(())
    })?;
    Ok(ExitStatus::Success)
}

fn when(secs: u64) -> String {
    humantime::format_rfc3339_seconds(
        std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(secs),
    )
    .to_string()
}

fn list(a: &KeysFileArgs) -> anyhow::Result<ExitStatus> {
    let file = read(&a.file, false)?;
    emit(a.format, &file.keys, |o| {
        writeln!(
            o,
            "{:<12}  {:<16}  {:<20}  {:<20}  {:<10}  policy",
            "id", "tenant", "created", "revoked", "rate"
        )?;
        for k in &file.keys {
            let policy = [
                Some(format!("allow {}", k.allow.join(" "))),
                (!k.deny.is_empty()).then(|| format!("deny {}", k.deny.join(" "))),
                k.quarantined.then(|| "sees quarantined".to_owned()),
                k.k.map(|kk| format!("k {kk}")),
                k.token_budget.map(|b| format!("budget {b}")),
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join("; ");
            writeln!(
                o,
                "{:<12}  {:<16}  {:<20}  {:<20}  {:<10}  {policy}",
                k.id,
                k.tenant,
                when(k.created),
                k.revoked.map_or_else(|| "-".to_owned(), when),
                k.rate_per_second.map_or_else(
                    || "-".to_owned(),
                    |r| format!(
                        "{r}/s×{}",
                        k.burst.map_or_else(|| "1s".to_owned(), |b| b.to_string())
                    )
                ),
            )?;
        }
        Ok(())
    })?;
    Ok(ExitStatus::Success)
}

fn revoke(a: &KeysRevokeArgs) -> anyhow::Result<ExitStatus> {
    let path = &a.file.file;
    let mut file = read(path, false)?;
    let Some(entry) = file.keys.iter().find(|k| k.id == a.id) else {
        anyhow::bail!("{}: no key with id {}", path.display(), a.id);
    };
    if entry.revoked.is_some() {
        let _ = writeln!(
            std::io::stderr(),
            "skg keys: key {} was already revoked",
            a.id
        );
        return Ok(ExitStatus::Success);
    }
    file.revoke(&a.id);
    write(path, &file)?;
    let entry = file.keys.iter().find(|k| k.id == a.id);
    emit(a.file.format, &entry, |o| writeln!(o, "revoked {}", a.id))?;
    Ok(ExitStatus::Success)
}
