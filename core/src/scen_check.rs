//! Checks horde's integration fields against Moving AI scenario files, whose lines give the
//! optimal length between two cells (8 neighbours, diagonal `sqrt(2)`, no corner cutting).

use crate::cost_field::CostField;
use crate::integration::{FieldError, IntegrationField};
use crate::map::Map;
use crate::map_format::ScenLine;
use crate::terrain::{Layer, OPEN, WALL};

/// Relative tolerance of the check (docs/behaviour.md, "Integration field"), on top of the file's
/// printed precision.
pub const RELATIVE_TOLERANCE: f64 = 1e-4;

/// One scenario line whose distance did not match.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenMismatch {
    /// The line number in the scenario file.
    pub line_number: usize,
    /// The optimal length the file gives.
    pub expected: f64,
    /// horde's distance, or `None` when horde found no path.
    pub found: Option<f64>,
}

/// Outcome of [`check_scen_lines`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScenReport {
    /// Lines checked.
    pub lines: usize,
    /// Lines whose distance matched within the tolerance.
    pub matched: usize,
    /// Largest `|found - expected| / expected` over the lines (a line with no path counts 1).
    pub max_rel_error: f64,
    /// The lines that did not match, in file order.
    pub mismatches: Vec<ScenMismatch>,
}

/// The Moving AI view of a map: every cell that ground units can enter costs 1.
#[must_use]
pub fn uniform_cost_field(map: &Map) -> CostField {
    let ground = map.cost_field(Layer::Ground).to_costs();
    let uniform: Vec<u8> = ground
        .iter()
        .map(|&c| if c == WALL { WALL } else { OPEN })
        .collect();
    CostField::from_costs(map.grid(), &uniform).expect("costs are 1 or 255")
}

/// Measures the start-to-goal distance of every line with horde's integration field over
/// [`uniform_cost_field`] and compares it with the line's optimal length. A line matches
/// when `|found - expected| <= RELATIVE_TOLERANCE * expected + line.length_tolerance()`
/// (the second term is the file's printed precision: one unit in the last decimal).
///
/// Each line stops its Dijkstra as soon as the start's distance is final, so checking a
/// whole file costs far less than one full field per line.
pub fn check_scen_lines<'a>(
    map: &Map,
    lines: impl IntoIterator<Item = &'a ScenLine>,
) -> Result<ScenReport, FieldError> {
    let cost = uniform_cost_field(map);
    let mut field = IntegrationField::unreachable(&cost);
    let mut report = ScenReport::default();
    for line in lines {
        field.rebuild_until(&cost, &[line.goal], Some(line.start))?;
        let found = field.distance(line.start);
        let expected = line.optimal_length;
        let error = found.map_or(f64::INFINITY, |f| (f - expected).abs());
        let rel = if expected > 0.0 {
            error / expected
        } else {
            error
        };
        report.lines += 1;
        report.max_rel_error = report.max_rel_error.max(rel.min(1.0));
        if error <= RELATIVE_TOLERANCE * expected + line.length_tolerance() {
            report.matched += 1;
        } else {
            report.mismatches.push(ScenMismatch {
                line_number: line.line_number,
                expected,
                found,
            });
        }
    }
    Ok(report)
}
