use std::path::Path;

use super::*;

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            e.unwrap_or_else(|e| panic!("{e}"))
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    v.sort();
    v
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn publish_replaces_the_old_folder_whole_and_leaves_nothing_beside_it() -> Result<()> {
    let root = tempdir();
    let dest = root.path().join("out");
    std::fs::create_dir(&dest).map_err(|e| Error::io(&dest, e))?;
    std::fs::write(dest.join("stale.txt"), "old").map_err(|e| Error::io(&dest, e))?;

    let s = Staged::beside(&dest)?;
    assert!(s.write_file("a/b.txt", b"new").is_err(), "no parent folder");
    s.create_dir("a")?;
    s.write_file("a/b.txt", b"new")?;
    s.write_json(MANIFEST_FILE, &serde_json::json!({"n": 1}))?;
    // Nothing is visible at the destination before publishing.
    assert_eq!(names(&dest), ["stale.txt"]);
    assert_eq!(s.publish()?, dest);

    assert_eq!(names(&dest), ["_SUCCESS", "a", "manifest.json"]);
    assert_eq!(names(root.path()), ["out"]);
    require_finished(&dest)?;
    let m: serde_json::Value = read_json(&dest.join(MANIFEST_FILE))?;
    assert_eq!(m["n"], 1);
    Ok(())
}

#[test]
fn a_dropped_folder_is_removed_and_the_old_one_kept() -> Result<()> {
    let root = tempdir();
    let dest = root.path().join("out");
    std::fs::create_dir(&dest).map_err(|e| Error::io(&dest, e))?;
    {
        let s = Staged::beside(&dest)?;
        s.write_file("x", b"1")?;
    }
    assert_eq!(names(root.path()), ["out"]);
    assert!(names(&dest).is_empty());
    assert!(matches!(require_finished(&dest), Err(Error::Unfinished(_))));
    Ok(())
}

#[test]
fn ndjson_round_trips_and_a_bad_row_names_its_line() -> Result<()> {
    let root = tempdir();
    let s = Staged::beside(&root.path().join("t"))?;
    let bytes = s.write_ndjson("rows.ndjson", &[1, 2, 3])?;
    assert_eq!(bytes, b"1\n2\n3\n");
    let dest = s.publish()?;
    let rows: Vec<u32> = read_ndjson(&dest.join("rows.ndjson"))?;
    assert_eq!(rows, [1, 2, 3]);

    let bad = root.path().join("bad.ndjson");
    std::fs::write(&bad, "1\n\n{oops\n").map_err(|e| Error::io(&bad, e))?;
    let err = read_ndjson::<u32>(&bad).err().map(|e| e.to_string());
    assert!(
        err.as_deref().is_some_and(|e| e.contains("line 3")),
        "{err:?}"
    );
    Ok(())
}

#[test]
fn hash_files_sees_content_and_names_and_skips_caches() -> Result<()> {
    let root = tempdir();
    let d = root.path();
    let w = |n: &str, t: &str| std::fs::write(d.join(n), t).map_err(|e| Error::io(d, e));
    w("a", "1")?;
    w("cache", "x")?;
    let h1 = hash_files(d, &["cache"])?;
    w("cache", "y")?;
    assert_eq!(
        hash_files(d, &["cache"])?,
        h1,
        "a skipped file is not hashed"
    );
    assert_ne!(hash_files(d, &[])?, h1);
    w("a", "2")?;
    assert_ne!(hash_files(d, &["cache"])?, h1, "content is hashed");
    w("a", "1")?;
    std::fs::rename(d.join("a"), d.join("b")).map_err(|e| Error::io(d, e))?;
    assert_ne!(hash_files(d, &["cache"])?, h1, "names are hashed");
    Ok(())
}

#[test]
fn keys_change_with_every_part_and_key_files_round_trip() -> Result<()> {
    let base = || key::KeyBuilder::new("f1", "skg 1", "score");
    let k0 = base().options(&serde_json::json!({"t": 0.4}))?.finish();
    assert_eq!(k0, base().options(&serde_json::json!({"t": 0.4}))?.finish());
    assert_ne!(k0, base().options(&serde_json::json!({"t": 0.5}))?.finish());
    assert_ne!(
        k0,
        key::KeyBuilder::new("f1", "skg 2", "score")
            .options(&serde_json::json!({"t": 0.4}))?
            .finish()
    );
    // Length prefixes: moving a byte from one part to the next is another key.
    assert_ne!(
        base().part("a", b"xy").part("b", b"z").finish(),
        base().part("a", b"x").part("b", b"yz").finish()
    );

    let root = tempdir();
    let path = root.path().join("score.key");
    assert_eq!(key::read(&path), None);
    let k = key::KeyFile {
        key: k0,
        output: "o".into(),
    };
    key::write(&path, &k)?;
    assert_eq!(key::read(&path), Some(k));
    key::remove(&path)?;
    key::remove(&path)?;
    assert_eq!(key::read(&path), None);
    Ok(())
}

#[test]
fn write_file_replaces_a_file_whole_and_leaves_nothing_beside_it() -> Result<()> {
    let root = tempdir();
    let path = root.path().join("model.json");
    write_file(&path, b"old")?;
    write_file(&path, b"new")?;
    assert_eq!(
        std::fs::read(&path).map_err(|e| Error::io(&path, e))?,
        b"new"
    );
    assert_eq!(names(root.path()), ["model.json"]);
    // A destination that cannot be replaced is an error naming it, and no temporary is left.
    let dir = root.path().join("a-folder");
    std::fs::create_dir(&dir).map_err(|e| Error::io(&dir, e))?;
    std::fs::write(dir.join("x"), "x").map_err(|e| Error::io(&dir, e))?;
    let err = write_file(&dir, b"x").expect_err("a non-empty folder is not replaced");
    assert!(err.to_string().contains("a-folder"), "{err}");
    assert_eq!(names(root.path()), ["a-folder", "model.json"]);
    Ok(())
}

#[test]
fn write_with_streams_a_file_into_the_staged_folder_and_names_a_failure() -> Result<()> {
    let root = tempdir();
    let dest = root.path().join("out");
    let staged = Staged::beside(&dest)?;
    // More than the writer's 1 MiB buffer, in pieces: what arrives is what was written.
    let piece: Vec<u8> = (0..=255u8).collect();
    staged.write_with("big.bin", |w| {
        for _ in 0..5000 {
            w.write_all(&piece)?;
        }
        Ok(())
    })?;
    let path = staged.path().join("big.bin");
    let got = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
    assert_eq!(got.len(), 5000 * 256);
    assert!(got.chunks(256).all(|c| c == piece.as_slice()));
    // A writer's error is the build's, naming the file; nothing is published when the folder
    // is dropped.
    let err = staged
        .write_with("broken.bin", |w| {
            w.write_all(b"half")?;
            Err(std::io::Error::other("the source failed"))
        })
        .expect_err("the writer failed");
    assert!(err.to_string().contains("broken.bin"), "{err}");
    drop(staged);
    assert!(names(root.path()).is_empty(), "{:?}", names(root.path()));
    Ok(())
}
