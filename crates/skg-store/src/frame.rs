//! Rows → a polars `DataFrame`, one typed column at a time (columns built in parallel).

use polars::prelude::*;
use rayon::prelude::*;

use crate::{
    Error, Result,
    tables::{Get, Table},
};

fn column<T: Sync>(name: &'static str, get: &Get<T>, rows: &[T]) -> Series {
    let n: PlSmallStr = name.into();
    match get {
        Get::Str(f) => StringChunked::from_iter_values(n, rows.iter().map(f)).into_series(),
        Get::OptStr(f) => StringChunked::from_iter_options(n, rows.iter().map(f)).into_series(),
        Get::Json(f) => StringChunked::from_iter_values(n, rows.iter().map(f)).into_series(),
        Get::U32(f) => UInt32Chunked::from_iter_values(n, rows.iter().map(f)).into_series(),
        Get::OptU32(f) => UInt32Chunked::from_iter_options(n, rows.iter().map(f)).into_series(),
        Get::U64(f) => UInt64Chunked::from_iter_values(n, rows.iter().map(f)).into_series(),
        Get::F64(f) => Float64Chunked::from_iter_values(n, rows.iter().map(f)).into_series(),
        Get::OptF64(f) => Float64Chunked::from_iter_options(n, rows.iter().map(f)).into_series(),
        Get::Bool(f) => BooleanChunked::from_iter_values(n, rows.iter().map(f)).into_series(),
        Get::StrList(f) => {
            let mut b = ListStringChunkedBuilder::new(n, rows.len(), rows.len() * 2);
            for r in rows {
                b.append_values_iter(f(r).into_iter());
            }
            b.finish().into_series()
        }
    }
}

/// Builds the table's `DataFrame` from `rows`.
pub(crate) fn build<T: Sync>(table: &Table<T>, rows: &[T]) -> Result<DataFrame> {
    let columns: Vec<Column> = table
        .columns
        .par_iter()
        .map(|c| column(c.name, &c.get, rows).into_column())
        .collect();
    DataFrame::new(rows.len(), columns).map_err(|e| Error::Table {
        table: table.name.to_owned(),
        message: e.to_string(),
    })
}

/// Writes `df` as Parquet (zstd, statistics on) to `w`.
pub(crate) fn write_parquet(table: &str, df: &mut DataFrame, w: &mut std::fs::File) -> Result<()> {
    ParquetWriter::new(w)
        .with_compression(ParquetCompression::Zstd(None))
        .with_statistics(StatisticsOptions::default())
        .finish(df)
        .map(|_| ())
        .map_err(|e| Error::Table {
            table: table.to_owned(),
            message: e.to_string(),
        })
}
