//! Round trips and the publish protocol.

use std::collections::BTreeMap;

use polars::prelude::*;
use skg_model::{
    Diagnostic, DiagnosticCode, Edge, EdgeKind, EdgeSource, Evidence, RegistryName, Severity,
    SkillId,
};

use crate::{Manifest, Staging, Tool, read_manifest, read_ndjson, tables};

fn manifest() -> Manifest {
    Manifest {
        schema_version: skg_model::SCHEMA_VERSION,
        stage: skg_model::Stage::Extract,
        tool: Tool {
            name: "skg".into(),
            version: "0".into(),
        },
        inputs: Vec::new(),
        counts: BTreeMap::new(),
        tables: Vec::new(),
        options: serde_json::json!({}),
    }
}

fn edge() -> Edge {
    let ev = |line| Evidence {
        extractor: "required-prose".into(),
        confidence: 0.7,
        source: EdgeSource::Inferred,
        path: "a/SKILL.md".into(),
        line,
        snippet: "REQUIRED: use b".into(),
    };
    Edge {
        src: SkillId("r:a".into()),
        dst: SkillId("r:b".into()),
        kind: EdgeKind::DependsOn,
        confidence: 0.7,
        source: EdgeSource::Inferred,
        extractor: "required-prose".into(),
        evidence: vec![ev(7), ev(9)],
    }
}

fn diag(line: Option<u32>) -> Diagnostic {
    Diagnostic {
        registry: RegistryName("r".into()),
        path: "a/SKILL.md".into(),
        line,
        severity: Severity::Error,
        code: DiagnosticCode::YamlUnquotedColon,
        message: "m".into(),
    }
}

#[test]
fn parquet_and_ndjson_round_trip_with_declared_types() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dest = dir.path().join("out");
    let mut s = Staging::begin(&dest).unwrap_or_else(|e| panic!("{e}"));
    s.write_table(&tables::EDGES, &[edge()])
        .unwrap_or_else(|e| panic!("{e}"));
    s.write_table(&tables::DIAGNOSTICS, &[diag(Some(3)), diag(None)])
        .unwrap_or_else(|e| panic!("{e}"));
    s.commit(manifest()).unwrap_or_else(|e| panic!("{e}"));

    let f = std::fs::File::open(dest.join("edges.parquet")).unwrap_or_else(|e| panic!("{e}"));
    let df = ParquetReader::new(f)
        .finish()
        .unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = df.get_column_names().iter().map(|n| n.as_str()).collect();
    let declared: Vec<&str> = tables::EDGES.columns.iter().map(|c| c.name).collect();
    assert_eq!(names, declared);
    assert_eq!(
        df.column("confidence").map(|c| c.dtype().clone()).ok(),
        Some(DataType::Float64)
    );
    assert_eq!(
        df.column("evidence_line")
            .and_then(|c| c.u32().map(|ca| ca.get(0)))
            .ok()
            .flatten(),
        Some(7)
    );
    let ev = df
        .column("evidence")
        .and_then(|c| c.str().map(|ca| ca.get(0).map(str::to_owned)))
        .ok()
        .flatten()
        .unwrap_or_default();
    let parsed: Vec<Evidence> = serde_json::from_str(&ev).expect("parse JSON");
    assert_eq!(parsed.len(), 2);

    let f = std::fs::File::open(dest.join("diagnostics.parquet")).unwrap_or_else(|e| panic!("{e}"));
    let df = ParquetReader::new(f)
        .finish()
        .unwrap_or_else(|e| panic!("{e}"));
    let lines: Vec<Option<u32>> = df
        .column("line")
        .and_then(|c| c.u32().map(|ca| (0..ca.len()).map(|i| ca.get(i)).collect()))
        .unwrap_or_default();
    assert_eq!(lines, vec![Some(3), None]);

    let back: Vec<Edge> = read_ndjson(&dest, "edges").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back, vec![edge()]);
    let m = read_manifest(&dest).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        m.tables
            .iter()
            .map(|t| (t.name.as_str(), t.rows))
            .collect::<Vec<_>>(),
        vec![("edges", 1), ("diagnostics", 2)]
    );
}

#[test]
fn empty_tables_keep_their_schema() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dest = dir.path().join("out");
    let mut s = Staging::begin(&dest).unwrap_or_else(|e| panic!("{e}"));
    s.write_table::<skg_model::Skill>(&tables::SKILLS, &[])
        .unwrap_or_else(|e| panic!("{e}"));
    s.commit(manifest()).unwrap_or_else(|e| panic!("{e}"));
    let f = std::fs::File::open(dest.join("skills.parquet")).unwrap_or_else(|e| panic!("{e}"));
    let df = ParquetReader::new(f)
        .finish()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(df.height(), 0);
    assert_eq!(df.width(), tables::SKILLS.columns.len());
    assert_eq!(
        df.column("tags").map(|c| c.dtype().clone()).ok(),
        Some(DataType::List(Box::new(DataType::String)))
    );
}

#[test]
fn an_abandoned_run_leaves_the_previous_output_intact() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dest = dir.path().join("out");
    let mut s = Staging::begin(&dest).unwrap_or_else(|e| panic!("{e}"));
    s.write_table(&tables::DIAGNOSTICS, &[diag(Some(1))])
        .unwrap_or_else(|e| panic!("{e}"));
    s.commit(manifest()).unwrap_or_else(|e| panic!("{e}"));

    // A second run fails half-way (dropped without commit).
    let mut s = Staging::begin(&dest).unwrap_or_else(|e| panic!("{e}"));
    s.write_table(&tables::DIAGNOSTICS, &[diag(Some(1)), diag(Some(2))])
        .unwrap_or_else(|e| panic!("{e}"));
    drop(s);
    let rows: Vec<Diagnostic> = read_ndjson(&dest, "diagnostics").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rows.len(), 1, "the old output is still there");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .map(|d| d.filter_map(Result::ok).map(|e| e.file_name()).collect())
        .expect("read a file the run wrote");
    assert_eq!(
        leftovers,
        vec![std::ffi::OsString::from("out")],
        "no temporary folder left behind"
    );

    // A third run replaces it.
    let mut s = Staging::begin(&dest).unwrap_or_else(|e| panic!("{e}"));
    s.write_table(&tables::DIAGNOSTICS, &[diag(Some(1)), diag(Some(2))])
        .unwrap_or_else(|e| panic!("{e}"));
    s.commit(manifest()).unwrap_or_else(|e| panic!("{e}"));
    let rows: Vec<Diagnostic> = read_ndjson(&dest, "diagnostics").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rows.len(), 2);
}

#[test]
fn unfinished_folders_are_refused() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(
        read_manifest(dir.path()),
        Err(crate::Error::Unfinished(_))
    ));
    assert!(read_ndjson::<Edge>(dir.path(), "edges").is_err());
}

#[test]
fn schema_markdown_lists_every_column() {
    let md = tables::markdown(tables::STAGES);
    for t in tables::EXTRACT_TABLES {
        for c in t.columns() {
            assert!(md.contains(&format!("| `{}` |", c.name)), "{}", c.name);
        }
    }
}

fn dtype(t: crate::ColumnType) -> DataType {
    use crate::ColumnType as T;
    match t {
        T::Str | T::OptStr | T::Json => DataType::String,
        T::U32 | T::OptU32 => DataType::UInt32,
        T::U64 => DataType::UInt64,
        T::F64 | T::OptF64 => DataType::Float64,
        T::Bool => DataType::Boolean,
        T::StrList => DataType::List(Box::new(DataType::String)),
    }
}

#[test]
fn written_parquet_types_are_the_declared_types() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dest = dir.path().join("out");
    let mut s = Staging::begin(&dest).unwrap_or_else(|e| panic!("{e}"));
    s.write_table::<skg_model::Skill>(&tables::SKILLS, &[])
        .unwrap_or_else(|e| panic!("{e}"));
    s.write_table::<skg_model::Document>(&tables::DOCUMENTS, &[])
        .unwrap_or_else(|e| panic!("{e}"));
    s.write_table(&tables::EDGES, &[edge()])
        .unwrap_or_else(|e| panic!("{e}"));
    s.write_table(&tables::DIAGNOSTICS, &[diag(None)])
        .unwrap_or_else(|e| panic!("{e}"));
    s.commit(manifest()).unwrap_or_else(|e| panic!("{e}"));
    for t in tables::EXTRACT_TABLES {
        let f = std::fs::File::open(dest.join(format!("{}.parquet", t.name())))
            .unwrap_or_else(|e| panic!("{e}"));
        let df = ParquetReader::new(f)
            .finish()
            .unwrap_or_else(|e| panic!("{e}"));
        let got: Vec<(String, DataType)> = df
            .columns()
            .iter()
            .map(|c| (c.name().to_string(), c.dtype().clone()))
            .collect();
        let want: Vec<(String, DataType)> = t
            .columns()
            .iter()
            .map(|c| (c.name.to_owned(), dtype(c.ty)))
            .collect();
        assert_eq!(got, want, "{}", t.name());
    }
}

/// The committed sample output of this schema version (`just schema-sample` writes it):
/// every table's Parquet columns and types are the declared ones and its NDJSON rows read back
/// into the row types. A schema change without a version bump and a new sample fails here.
#[test]
fn committed_sample_of_this_schema_version_reads_back() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let dir = root.join(format!("schema-v{}", skg_model::SCHEMA_VERSION));
    assert!(
        dir.join("manifest.json").is_file(),
        "no sample for schema version {} in {}: run `just schema-sample` and commit it",
        skg_model::SCHEMA_VERSION,
        dir.display()
    );
    let m = crate::read_manifest(&dir).unwrap_or_else(|e| panic!("{e}"));
    let specs: std::collections::BTreeMap<&str, &dyn crate::TableSpec> = tables::STAGES
        .iter()
        .flat_map(|(_, ts)| ts.iter().map(|t| (t.name(), *t)))
        .collect();
    assert_eq!(
        m.tables
            .iter()
            .map(|t| t.name.as_str())
            .collect::<std::collections::BTreeSet<_>>(),
        specs.keys().copied().collect(),
        "the sample holds every table"
    );
    for info in &m.tables {
        let spec = specs[info.name.as_str()];
        let f = std::fs::File::open(dir.join(&info.parquet)).unwrap_or_else(|e| panic!("{e}"));
        let df = ParquetReader::new(f)
            .finish()
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(df.height() as u64, info.rows, "{} rows", info.name);
        let got: Vec<(String, DataType)> = df
            .columns()
            .iter()
            .map(|c| (c.name().to_string(), c.dtype().clone()))
            .collect();
        let want: Vec<(String, DataType)> = spec
            .columns()
            .iter()
            .map(|c| (c.name.to_owned(), dtype(c.ty)))
            .collect();
        assert_eq!(got, want, "{}", info.name);
        let n = match info.name.as_str() {
            "skills" | "canonical_skills" => {
                read_ndjson::<skg_model::Skill>(&dir, &info.name).map(|r| r.len())
            }
            "documents" => read_ndjson::<skg_model::Document>(&dir, &info.name).map(|r| r.len()),
            "edges" => read_ndjson::<skg_model::Edge>(&dir, &info.name).map(|r| r.len()),
            "diagnostics" => {
                read_ndjson::<skg_model::Diagnostic>(&dir, &info.name).map(|r| r.len())
            }
            "members" | "aliases" => {
                read_ndjson::<skg_model::Member>(&dir, &info.name).map(|r| r.len())
            }
            "clusters" => read_ndjson::<skg_model::Cluster>(&dir, &info.name).map(|r| r.len()),
            "scores" => read_ndjson::<skg_model::Score>(&dir, &info.name).map(|r| r.len()),
            "metrics" => read_ndjson::<skg_model::MetricRow>(&dir, &info.name).map(|r| r.len()),
            "communities" => {
                read_ndjson::<skg_model::CommunityRow>(&dir, &info.name).map(|r| r.len())
            }
            "findings" => {
                read_ndjson::<skg_model::security::Finding>(&dir, &info.name).map(|r| r.len())
            }
            "verdicts" => {
                read_ndjson::<skg_model::security::Verdict>(&dir, &info.name).map(|r| r.len())
            }
            "capabilities" => {
                read_ndjson::<skg_model::CapabilityRow>(&dir, &info.name).map(|r| r.len())
            }
            other => panic!("a table the compat test does not know: {other}"),
        }
        .unwrap_or_else(|e| panic!("{}: {e}", info.name));
        assert_eq!(n as u64, info.rows, "{} NDJSON rows", info.name);
    }
}
