//! Statistics two stages share.

/// Area under the ROC curve of `scores` for `positive` labels (Mann–Whitney, ties counted half).
/// `None` when one class is absent.
pub fn auc(scores: &[f64], positive: &[bool]) -> Option<f64> {
    let pos: Vec<f64> = scores
        .iter()
        .zip(positive)
        .filter(|p| *p.1)
        .map(|p| *p.0)
        .collect();
    let neg: Vec<f64> = scores
        .iter()
        .zip(positive)
        .filter(|p| !*p.1)
        .map(|p| *p.0)
        .collect();
    if pos.is_empty() || neg.is_empty() {
        return None;
    }
    let mut wins = 0.0;
    for p in &pos {
        for q in &neg {
            wins += if p > q {
                1.0
            } else if (p - q).abs() < f64::EPSILON {
                0.5
            } else {
                0.0
            };
        }
    }
    Some(wins / (pos.len() * neg.len()) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auc_by_hand() {
        // Positives 0.9, 0.4; negatives 0.4, 0.1: 3.5 of 4 pairs ordered (the tie counts half).
        assert_eq!(
            auc(&[0.9, 0.4, 0.4, 0.1], &[true, true, false, false]),
            Some(0.875)
        );
        assert_eq!(auc(&[0.3], &[false]), None);
    }
}
