//! Table `fields`: horde's integration field (bucket-queue Dijkstra, one thread) against a
//! textbook `BinaryHeap` Dijkstra (`horde::fields::reference`) and `pathfinding::dijkstra_all`
//! on the same graph (entered-cell cost, no corner cutting), toward one goal near the centre.

use horde::fields::{CostField, IntegrationField, UNREACHABLE, reference};
use horde::{Cell, Layer};

use super::scenario::{Level, generated};
use super::{Ctx, Row, median_ms, ratio, round, row};
use crate::AppError;

/// `pathfinding::dijkstra_all` over horde's graph; returns the number of cells reached
/// (the goal excluded).
fn pathfinding_dijkstra_all(cost: &CostField, goal: Cell) -> usize {
    pathfinding::prelude::dijkstra_all(&goal, |&c| cost.steps_from(c).collect::<Vec<_>>()).len()
}

/// Runs the table.
pub fn run(ctx: &Ctx) -> Result<Vec<Row>, AppError> {
    let small;
    let level: &Level = match (&ctx.cauldron, ctx.quick) {
        (_, true) => {
            small = generated(7, 64)?;
            &small
        }
        (Some(c), false) => c,
        (None, false) => &ctx.clustered,
    };
    let reps = 5;
    let cost = level.map.cost_field(Layer::Ground);
    let goal = level.goal;
    let failed = |e: horde::FieldError| AppError::Failed(e.to_string());

    ctx.status(format!("fields: horde on {}", level.name));
    let mut field = IntegrationField::build(cost, &[goal]).map_err(failed)?;
    let mut error = None;
    let horde = median_ms(reps, || {
        if let Err(e) = field.rebuild(cost, &[goal]) {
            error = Some(e);
        }
    });
    if let Some(e) = error {
        return Err(failed(e));
    }
    let values = field.to_values();
    let reached = values.iter().filter(|&&v| v != UNREACHABLE).count();

    ctx.status(format!("fields: BinaryHeap Dijkstra on {}", level.name));
    let mut heap_values = Vec::new();
    let heap = median_ms(reps, || {
        heap_values = reference::dijkstra_binary_heap(cost, &[goal]);
    });
    let heap_agrees = heap_values == values;

    ctx.status(format!(
        "fields: pathfinding::dijkstra_all on {}",
        level.name
    ));
    let mut pf_reached = 0;
    let pf = median_ms(if ctx.quick { reps } else { 3 }, || {
        pf_reached = pathfinding_dijkstra_all(cost, goal) + 1;
    });

    let size = format!("{}x{}", level.map.width(), level.map.height());
    let line = |method: &str, ms: f64, agrees: bool| {
        row([
            ("map", level.name.as_str().into()),
            ("size", size.as_str().into()),
            ("reached_cells", reached.into()),
            ("method", method.into()),
            ("ms", round(ms).into()),
            ("ratio_over_horde", ratio(ms, horde)),
            ("same_result", agrees.into()),
        ])
    };
    Ok(vec![
        line("horde integration field", horde, true),
        line("BinaryHeap Dijkstra", heap, heap_agrees),
        line("pathfinding::dijkstra_all", pf, pf_reached == reached),
    ])
}
