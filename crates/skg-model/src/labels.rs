//! Hand-label files: CSV with a header row, read by named columns. One reader for every stage
//! that measures itself against labels (duplicate pairs, slop labels, capability types), so a
//! label file's errors always name `file:line`.

/// One record: where it is and the values of the columns asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvRow {
    /// `file:line` (the header is line 1).
    pub at: String,
    /// The `required` columns' values, then the `optional` ones' (`None` when the file lacks
    /// the column), trimmed, in the order they were asked for.
    pub values: Vec<Option<String>>,
}

impl CsvRow {
    /// The value of the `i`-th column asked for (empty when the file lacks it).
    pub fn get(&self, i: usize) -> &str {
        self.values.get(i).and_then(Option::as_deref).unwrap_or("")
    }
}

/// Reads the records of `text` (named `file` in `at` and in errors).
///
/// # Errors
/// A header without every `required` column (`file: needs columns `a` and `b``), or a record
/// that is not CSV (`file:line: …`).
pub fn read_csv_columns(
    text: &str,
    file: &str,
    required: &[&str],
    optional: &[&str],
) -> Result<Vec<CsvRow>, String> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| format!("{file}: {e}"))?
        .clone();
    let col = |name: &str| headers.iter().position(|h| h.trim() == name);
    let need: Option<Vec<usize>> = required.iter().map(|c| col(c)).collect();
    let Some(need) = need else {
        let names: Vec<String> = required.iter().map(|c| format!("`{c}`")).collect();
        let list = match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => names.join(""),
        };
        return Err(format!("{file}: needs columns {list}"));
    };
    let cols: Vec<Option<usize>> = need
        .into_iter()
        .map(Some)
        .chain(optional.iter().map(|c| col(c)))
        .collect();
    let mut out = Vec::new();
    for (n, rec) in reader.records().enumerate() {
        let at = format!("{file}:{}", n + 2);
        let rec = rec.map_err(|e| format!("{at}: not a CSV row: {e}"))?;
        let values = cols
            .iter()
            .map(|c| c.map(|i| rec.get(i).unwrap_or("").trim().to_owned()))
            .collect();
        out.push(CsvRow { at, values });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_by_name_with_locations_and_missing_ones_named() {
        let rows = read_csv_columns("b, a ,x\n 2 ,1,z\n4,3,w\n", "f.csv", &["a", "b"], &["c"])
            .expect("reads");
        assert_eq!(
            rows,
            vec![
                CsvRow {
                    at: "f.csv:2".into(),
                    values: vec![Some("1".into()), Some("2".into()), None]
                },
                CsvRow {
                    at: "f.csv:3".into(),
                    values: vec![Some("3".into()), Some("4".into()), None]
                },
            ]
        );
        assert_eq!(
            read_csv_columns("a\n1\n", "f.csv", &["a", "b", "c"], &[]),
            Err("f.csv: needs columns `a`, `b` and `c`".to_owned())
        );
        assert_eq!(
            read_csv_columns("x\n1\n", "f.csv", &["a"], &[]),
            Err("f.csv: needs columns `a`".to_owned())
        );
        let bad = read_csv_columns("a,b\n1,2\n3\n", "f.csv", &["a"], &[]).expect_err("short row");
        assert!(bad.starts_with("f.csv:3: not a CSV row"), "{bad}");
    }
}
