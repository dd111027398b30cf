//! Rows → a polars `DataFrame`, following a [`TableSpec`].

use polars::prelude::*;
use serde::Serialize;
use serde_json::Value;

use crate::{ColumnType, Error, Result, TableSpec};

fn lookup<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    let mut cur = v;
    for seg in path {
        cur = match cur {
            Value::Object(m) => m.get(*seg)?,
            Value::Array(a) => a.get(seg.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

fn text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// Builds the table's `DataFrame` from `rows`.
pub(crate) fn build<T: Serialize>(spec: &TableSpec, rows: &[T]) -> Result<DataFrame> {
    let err = |message: String| Error::Table {
        table: spec.name.to_owned(),
        message,
    };
    let values: Vec<Value> = rows
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<_, _>>()
        .map_err(|e| err(e.to_string()))?;
    let mut columns = Vec::with_capacity(spec.columns.len());
    for col in spec.columns {
        let path: Vec<&str> = col.path.split('.').collect();
        let cells = values.iter().map(|v| lookup(v, &path));
        let name: PlSmallStr = col.name.into();
        let series = match col.ty {
            ColumnType::Str => Series::new(
                name,
                cells
                    .map(|c| text(c).unwrap_or_default())
                    .collect::<Vec<String>>(),
            ),
            ColumnType::OptStr => {
                Series::new(name, cells.map(text).collect::<Vec<Option<String>>>())
            }
            ColumnType::Json => Series::new(
                name,
                cells
                    .map(|c| c.map_or_else(|| "null".to_owned(), Value::to_string))
                    .collect::<Vec<String>>(),
            ),
            ColumnType::U32 => Series::new(
                name,
                cells
                    .map(|c| {
                        c.and_then(Value::as_u64)
                            .and_then(|n| u32::try_from(n).ok())
                            .unwrap_or(0)
                    })
                    .collect::<Vec<u32>>(),
            ),
            ColumnType::OptU32 => Series::new(
                name,
                cells
                    .map(|c| {
                        c.and_then(Value::as_u64)
                            .and_then(|n| u32::try_from(n).ok())
                    })
                    .collect::<Vec<Option<u32>>>(),
            ),
            ColumnType::U64 => Series::new(
                name,
                cells
                    .map(|c| c.and_then(Value::as_u64).unwrap_or(0))
                    .collect::<Vec<u64>>(),
            ),
            ColumnType::F64 => Series::new(
                name,
                cells
                    .map(|c| c.and_then(Value::as_f64).unwrap_or(0.0))
                    .collect::<Vec<f64>>(),
            ),
            ColumnType::Bool => Series::new(
                name,
                cells
                    .map(|c| c.and_then(Value::as_bool).unwrap_or(false))
                    .collect::<Vec<bool>>(),
            ),
            ColumnType::StrList => {
                let lists: Vec<Series> = cells
                    .map(|c| {
                        let items: Vec<String> = match c {
                            Some(Value::Array(a)) => a
                                .iter()
                                .map(|x| text(Some(x)).unwrap_or_default())
                                .collect(),
                            _ => Vec::new(),
                        };
                        Series::new(PlSmallStr::EMPTY, items)
                    })
                    .collect();
                let mut list = Series::new(name, lists);
                if values.is_empty() {
                    list = Series::new_empty(
                        col.name.into(),
                        &DataType::List(Box::new(DataType::String)),
                    );
                }
                list
            }
        };
        columns.push(series.into_column());
    }
    DataFrame::new(values.len(), columns).map_err(|e| err(e.to_string()))
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
