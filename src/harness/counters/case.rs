//! A counted case: the label a chapter gives a launch (or a run of launches) and what its
//! model predicts, one line each in the labels file the child writes and the parent reads.

use std::path::Path;

use anyhow::Context;

use super::Quantity;

/// A launch (or a run of launches) a chapter wants counted: its label and what the chapter's
/// model predicts for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    pub label: String,
    pub predictions: Vec<(Quantity, f64)>,
}

impl Case {
    pub fn new(label: impl Into<String>) -> Self {
        Self { label: label.into(), predictions: Vec::new() }
    }

    /// Adds a prediction.
    pub fn predict(mut self, q: Quantity, value: f64) -> Self {
        self.predictions.push((q, value));
        self
    }

    /// One line of the labels file: `label<TAB>quantity=value<TAB>…`.
    pub(super) fn to_line(&self) -> String {
        let mut line = self.label.replace(['\t', '\n'], " ");
        for (q, v) in &self.predictions {
            line.push('\t');
            line.push_str(&format!("{}={v}", q.name()));
        }
        line
    }

    fn from_line(line: &str) -> anyhow::Result<Case> {
        let mut parts = line.split('\t');
        let mut case = Case::new(parts.next().unwrap_or_default());
        for p in parts {
            let (q, v) = p.split_once('=').context("a prediction without `=`")?;
            let q = Quantity::from_name(q)
                .with_context(|| format!("unknown quantity {q}"))?;
            case.predictions.push((q, v.parse()?));
        }
        Ok(case)
    }
}

/// Reads the labels a counting child wrote.
pub fn read_cases(path: &Path) -> anyhow::Result<Vec<Case>> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines().filter(|l| !l.is_empty()).map(Case::from_line).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_round_trip() {
        let case = Case::new("transpose 8192\u{b2}")
            .predict(Quantity::DramBytes, 536_870_912.0)
            .predict(Quantity::L2HitPercent, 0.5);
        assert_eq!(Case::from_line(&case.to_line()).unwrap(), case);
    }

    #[test]
    fn every_quantity_is_read_back_by_its_name() {
        let case =
            Quantity::ALL.iter().fold(Case::new("all"), |c, &q| c.predict(q, 1.5));
        assert_eq!(Case::from_line(&case.to_line()).unwrap(), case);
        let e = Case::from_line("x\tbytes moved=3").unwrap_err().to_string();
        assert!(e.contains("unknown quantity bytes moved"), "{e}");
    }
}
