//! `skg gate`: metric rows checked against thresholds and a baseline.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use skg_model::{ALL_SCOPE, MetricRow, limits};

use crate::Error;

/// Thresholds as a gate config file or the command line gives them: every field optional
/// (flags override the file, the file overrides [`GateOptions::default`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GateConfig {
    /// Fail when RScore is below this.
    pub min_rscore: Option<f64>,
    /// Fail when TLIS is above this.
    pub max_tlis: Option<f64>,
    /// Fail when GNCI is above this.
    pub max_gnci: Option<f64>,
    /// Fail when CFI is above this.
    pub max_cfi: Option<f64>,
    /// Allowed RScore drop against a baseline.
    pub tolerance: Option<f64>,
    /// The scope gated: `(all)`, a registry's name, or `each` (the union and every registry).
    pub scope: Option<String>,
}

impl GateConfig {
    /// `self`'s values, the missing ones from `other` (ruff/uv `Combine`: `self` wins).
    #[must_use]
    pub fn combine(self, other: GateConfig) -> GateConfig {
        GateConfig {
            min_rscore: self.min_rscore.or(other.min_rscore),
            max_tlis: self.max_tlis.or(other.max_tlis),
            max_gnci: self.max_gnci.or(other.max_gnci),
            max_cfi: self.max_cfi.or(other.max_cfi),
            tolerance: self.tolerance.or(other.tolerance),
            scope: self.scope.or(other.scope),
        }
    }
}

/// The resolved thresholds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateOptions {
    /// Fail when RScore is below this (default: the seed's high routing risk, 0.4).
    pub min_rscore: f64,
    /// Fail when TLIS is above this (not checked by default).
    pub max_tlis: Option<f64>,
    /// Fail when GNCI is above this (not checked by default).
    pub max_gnci: Option<f64>,
    /// Fail when CFI is above this (not checked by default).
    pub max_cfi: Option<f64>,
    /// Allowed RScore drop against a baseline (default 0.02).
    pub tolerance: f64,
    /// `(all)` (default), a registry's name, or `each`.
    pub scope: String,
}

impl GateOptions {
    /// The scope that gates the union and every registry.
    pub const EACH: &str = "each";
    /// The default allowed RScore drop against a baseline.
    pub const DEFAULT_TOLERANCE: f64 = 0.02;

    /// `config`'s values over the defaults.
    pub fn resolve(config: GateConfig) -> GateOptions {
        let d = GateOptions::default();
        GateOptions {
            min_rscore: config.min_rscore.unwrap_or(d.min_rscore),
            max_tlis: config.max_tlis.or(d.max_tlis),
            max_gnci: config.max_gnci.or(d.max_gnci),
            max_cfi: config.max_cfi.or(d.max_cfi),
            tolerance: config.tolerance.unwrap_or(d.tolerance),
            scope: config.scope.unwrap_or(d.scope),
        }
    }
}

impl Default for GateOptions {
    fn default() -> Self {
        GateOptions {
            min_rscore: limits::RSCORE,
            max_tlis: None,
            max_gnci: None,
            max_cfi: None,
            tolerance: GateOptions::DEFAULT_TOLERANCE,
            scope: ALL_SCOPE.to_owned(),
        }
    }
}

/// One check of one scope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// The scope checked.
    pub scope: String,
    /// `min_rscore`, `max_tlis`, `max_gnci`, `max_cfi`, `no_regression`, `max_unsafe` or
    /// `scanned_whole` (the tool catalogs the scan did not read whole).
    #[serde(rename = "check")]
    pub name: String,
    /// The measured value (`None` for an empty graph).
    pub value: Option<f64>,
    /// The limit.
    pub limit: f64,
    /// Whether it held.
    pub passed: bool,
}

/// The gate's verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateReport {
    /// Every check held.
    pub passed: bool,
    /// Every check, scope by scope.
    pub checks: Vec<Check>,
}

impl GateReport {
    /// Adds the security check: at most `limit` packages the scan found unsafe (`count`),
    /// acknowledged findings already left out of the verdicts.
    pub fn check_unsafe(&mut self, count: usize, limit: u64) {
        let passed = count as u64 <= limit;
        self.checks.push(Check {
            scope: skg_model::ALL_SCOPE.to_owned(),
            name: "max_unsafe".to_owned(),
            value: Some(count as f64),
            limit: limit as f64,
            passed,
        });
        self.passed &= passed;
    }

    /// Adds the check that goes with [`GateReport::check_unsafe`]: the scan read every tool
    /// catalog whole (`incomplete` catalogs were not, so tools of theirs may be unscanned and a
    /// count of unsafe packages would vouch for what was never read).
    pub fn check_scanned_whole(&mut self, incomplete: u64) {
        let passed = incomplete == 0;
        self.checks.push(Check {
            scope: skg_model::ALL_SCOPE.to_owned(),
            name: "scanned_whole".to_owned(),
            value: Some(incomplete as f64),
            limit: 0.0,
            passed,
        });
        self.passed &= passed;
    }

    /// The checks that failed.
    pub fn failed(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|c| !c.passed)
    }
}

/// A check's value as printed.
fn value(v: Option<f64>) -> String {
    v.map_or_else(|| "none".to_owned(), |v| format!("{v:.3}"))
}

impl Check {
    /// The GitHub Actions annotation of a failed check.
    pub fn annotation(&self) -> String {
        format!(
            "::error title=skg gate::{} {} = {} (limit {:.3})",
            self.scope,
            self.name,
            value(self.value),
            self.limit
        )
    }
}

/// Every check, then the verdict, as `skg gate` prints them.
impl std::fmt::Display for GateReport {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for c in &self.checks {
            writeln!(
                out,
                "{} {:<38} {:<14} {:>8} (limit {:.3})",
                if c.passed { "pass" } else { "FAIL" },
                c.scope,
                c.name,
                value(c.value),
                c.limit
            )?;
        }
        writeln!(
            out,
            "gate {}: {} of {} checks failed",
            if self.passed { "passed" } else { "FAILED" },
            self.failed().count(),
            self.checks.len()
        )
    }
}

/// Checks `metrics` against `options` and, when given, the `baseline`'s RScore per scope (a
/// drop by more than the tolerance fails). A scope with no row is an error, not a pass.
pub fn gate(
    metrics: &[MetricRow],
    baseline: Option<&[MetricRow]>,
    options: &GateOptions,
) -> Result<GateReport, Error> {
    let gated: Vec<&MetricRow> = metrics
        .iter()
        .filter(|m| options.scope == GateOptions::EACH || m.scope == options.scope)
        .collect();
    if gated.is_empty() {
        return Err(Error::NoScope(options.scope.clone()));
    }
    let before: BTreeMap<&str, Option<f64>> = baseline
        .unwrap_or_default()
        .iter()
        .map(|m| (m.scope.as_str(), m.rscore))
        .collect();
    let mut checks = Vec::new();
    for m in gated {
        let mut check = |name: &str, value: Option<f64>, limit: f64, ok: fn(f64, f64) -> bool| {
            checks.push(Check {
                scope: m.scope.clone(),
                name: name.to_owned(),
                value,
                limit,
                passed: value.is_some_and(|v| ok(v, limit)),
            });
        };
        let at_least = |v: f64, l: f64| v >= l;
        let at_most = |v: f64, l: f64| v <= l;
        check("min_rscore", m.rscore, options.min_rscore, at_least);
        if let Some(l) = options.max_tlis {
            check("max_tlis", m.tlis, l, at_most);
        }
        if let Some(l) = options.max_gnci {
            check("max_gnci", m.gnci, l, at_most);
        }
        if let Some(l) = options.max_cfi {
            check("max_cfi", m.cfi, l, at_most);
        }
        if let Some(Some(b)) = before.get(m.scope.as_str()) {
            check("no_regression", m.rscore, b - options.tolerance, at_least);
        }
    }
    Ok(GateReport {
        passed: checks.iter().all(|c| c.passed),
        checks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(scope: &str, rscore: Option<f64>, cfi: Option<f64>) -> MetricRow {
        MetricRow {
            scope: scope.into(),
            nodes: 1,
            edges: 0,
            isolated: 0,
            isolated_nodes: Vec::new(),
            tlis: Some(0.1),
            max_degree: 0,
            mean_degree: None,
            gnci: Some(1.0),
            communities: 1,
            named_communities: 1,
            cfi,
            rscore,
            risk: "ok".into(),
            failure_modes: Vec::new(),
            god_nodes: Vec::new(),
        }
    }

    #[test]
    #[expect(clippy::float_cmp, reason = "the values are copied, not computed")]
    fn flags_override_the_file_which_overrides_the_defaults() {
        let file = GateConfig {
            min_rscore: Some(0.6),
            max_cfi: Some(5.0),
            scope: Some("each".into()),
            ..GateConfig::default()
        };
        let flags = GateConfig {
            min_rscore: Some(0.5),
            ..GateConfig::default()
        };
        let o = GateOptions::resolve(flags.combine(file));
        assert_eq!(o.min_rscore, 0.5);
        assert_eq!(o.max_cfi, Some(5.0));
        assert_eq!(o.scope, "each");
        assert_eq!(o.tolerance, 0.02);
        assert_eq!(
            GateOptions::resolve(GateConfig::default()),
            GateOptions::default()
        );
    }

    #[test]
    fn checks_limits_scopes_and_the_baseline() {
        let now = [
            row(ALL_SCOPE, Some(0.45), Some(12.0)),
            row("r", None, Some(3.0)),
        ];
        let options = GateOptions {
            max_cfi: Some(10.0),
            ..GateOptions::default()
        };
        // The union: RScore 0.45 ≥ 0.4 passes, CFI 12 > 10 fails.
        let r = gate(&now, None, &options).unwrap_or_else(|e| panic!("{e}"));
        let got: Vec<(&str, bool)> = r
            .checks
            .iter()
            .map(|c| (c.name.as_str(), c.passed))
            .collect();
        assert_eq!(got, [("min_rscore", true), ("max_cfi", false)]);
        assert!(!r.passed);
        // Every scope: an empty graph (no RScore) fails its check rather than passing.
        let each = GateOptions {
            scope: "each".into(),
            ..GateOptions::default()
        };
        let r = gate(&now, None, &each).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            r.failed().map(|c| c.scope.as_str()).collect::<Vec<_>>(),
            ["r"]
        );
        // Baseline 0.48, tolerance 0.02: 0.45 < 0.46 is a regression.
        let before = [row(ALL_SCOPE, Some(0.48), None)];
        let r =
            gate(&now, Some(&before), &GateOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        let reg = r.checks.iter().find(|c| c.name == "no_regression");
        assert!(reg.is_some_and(|c| !c.passed && (c.limit - 0.46).abs() < 1e-12));
        // A scope with no row is an error.
        let missing = GateOptions {
            scope: "nowhere".into(),
            ..GateOptions::default()
        };
        assert!(matches!(gate(&now, None, &missing), Err(Error::NoScope(_))));
    }
}
