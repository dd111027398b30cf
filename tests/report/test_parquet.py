"""The audit's Parquet tables read by polars, pyarrow (pandas' reader) and DuckDB, with the row
counts the manifest states and the column types `skg schema` documents."""

import duckdb
import polars as pl
import pyarrow.parquet as pq
import pytest

TABLES = [
    "skills",
    "documents",
    "edges",
    "diagnostics",
    "members",
    "clusters",
    "aliases",
    "canonical_skills",
    "capabilities",
    "scores",
    "metrics",
    "communities",
    "findings",
    "verdicts",
]

# Column → (polars dtype, DuckDB type) for a sample of each documented column type.
TYPES = {
    ("scores", "slop_score"): (pl.Float64, "DOUBLE"),
    ("scores", "quarantined"): (pl.Boolean, "BOOLEAN"),
    ("scores", "reasons"): (pl.List(pl.String), "VARCHAR[]"),
    ("scores", "contributions"): (pl.String, "VARCHAR"),
    ("skills", "id"): (pl.String, "VARCHAR"),
    ("skills", "bytes"): (pl.UInt64, "UBIGINT"),
    ("diagnostics", "line"): (pl.UInt32, "UINTEGER"),
    ("clusters", "size"): (pl.UInt32, "UINTEGER"),
    ("metrics", "rscore"): (pl.Float64, "DOUBLE"),
    ("communities", "members"): (pl.List(pl.String), "VARCHAR[]"),
    ("findings", "line"): (pl.UInt32, "UINTEGER"),
    ("findings", "acknowledged"): (pl.Boolean, "BOOLEAN"),
    ("verdicts", "score"): (pl.Float64, "DOUBLE"),
    ("verdicts", "rules"): (pl.List(pl.String), "VARCHAR[]"),
    ("capabilities", "confidence"): (pl.Float64, "DOUBLE"),
}


def test_manifest_lists_every_table(manifest):
    assert manifest["stage"] == "audit"
    assert sorted(t["name"] for t in manifest["tables"]) == sorted(TABLES)


@pytest.mark.parametrize("table", TABLES)
def test_table_reads_the_same_in_polars_pyarrow_and_duckdb(audit, manifest, table):
    path = audit / f"{table}.parquet"
    rows = next(t["rows"] for t in manifest["tables"] if t["name"] == table)
    df = pl.read_parquet(path)
    at = pq.read_table(path)
    n = (
        duckdb.connect()
        .execute(f"SELECT count(*) FROM read_parquet('{path}')")
        .fetchone()[0]
    )
    assert len(df) == at.num_rows == n == rows
    assert df.columns == at.column_names
    # The NDJSON twin holds the same rows.
    with open(audit / f"{table}.ndjson", encoding="utf-8") as f:
        assert sum(1 for line in f if line.strip()) == rows


@pytest.mark.parametrize(("table", "column"), sorted(TYPES))
def test_documented_types(audit, table, column):
    want_pl, want_duck = TYPES[(table, column)]
    path = audit / f"{table}.parquet"
    assert pl.read_parquet_schema(path)[column] == want_pl
    rows = (
        duckdb.connect()
        .execute(f"DESCRIBE SELECT * FROM read_parquet('{path}')")
        .fetchall()
    )
    got = {r[0]: r[1] for r in rows}
    assert got[column] == want_duck


def test_tables_agree_with_each_other(audit):
    skills = pl.read_parquet(audit / "skills.parquet")
    scores = pl.read_parquet(audit / "scores.parquet")
    members = pl.read_parquet(audit / "members.parquet")
    assert set(skills["id"]) == set(scores["id"]) == set(members["id"])
    aliases = pl.read_parquet(audit / "aliases.parquet")
    assert len(aliases) == (members["role"] == "duplicate").sum()
    # Every canonical named by a member is itself a member.
    assert set(members["cluster_id"]) <= set(members["id"])
