//! Units as solid discs against the grid (docs/behaviour.md, "Bodies and crowds"): a centre that
//! moves is swept cell by cell, so no speed, time step or force carries it across a blocked cell; a
//! disc that overlaps blocked cells is pushed out of them; a unit caught inside a new wall steps
//! out through that wall only, and only a few cells.
//!
//! Rules, in one place:
//! - A centre never enters a blocked cell (or leaves the map). [`sweep`] walks every cell the
//!   segment of a move passes through (Amanatides and Woo's traversal); at the first blocked
//!   one it stops just inside the last open cell and slides along the face it met with what
//!   is left of the move.
//! - Two blocked cells that touch only at a corner close the way: a move through that corner
//!   point is stopped, as the fields' move masks stop paths there.
//! - A disc may overlap a blocked cell by at most [`WALL_TOLERANCE`] of its radius after
//!   [`push_out_of_walls`]: the deepest overlap is removed first, each push swept like a move,
//!   so pushes never carry a centre through a wall either.
//! - A unit whose centre is in a blocked cell (a wall placed on it) moves to the nearest
//!   point of an open cell that touches the wall it stands in, no more than [`ESCAPE_REACH`]
//!   cells away, through that wall only ([`escape_wall`]); when there is none it stays put.

use glam::Vec2;

use crate::cost_field::CostField;
use crate::grid::Grid;
use crate::terrain::WALL;

/// How deep, as a fraction of its radius, a disc may overlap blocked cells after
/// [`push_out_of_walls`]: at most 5% (docs/behaviour.md, "Bodies and crowds"); pushes aim well
/// inside that.
pub const WALL_TOLERANCE: f32 = 0.05;

/// How far past the overlap a push out of a wall goes, as a fraction of the radius, so the
/// next frame's rounding does not put the disc back in.
const PUSH_MARGIN: f32 = 0.002;

/// How many deepest-overlap pushes [`push_out_of_walls`] makes at most (a disc in a corner
/// of two faces needs two; three walls around a narrow dead end, three).
const MAX_PUSHES: usize = 4;

/// The farthest (in cells, Chebyshev) a unit caught inside a wall is moved to get out.
pub const ESCAPE_REACH: i64 = 2;

/// Which axes a move was stopped on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Blocked {
    /// A face across the x axis (a vertical face) stopped the move.
    pub x: bool,
    /// A face across the y axis stopped it.
    pub y: bool,
}

impl Blocked {
    /// Stopped on both axes.
    pub const BOTH: Self = Self { x: true, y: true };
}

/// `velocity` without its part along `-normal` (into whatever `normal`, a unit vector,
/// points away from): a body is not driven into what it touches.
#[must_use]
#[inline]
pub fn without_part_into(velocity: Vec2, normal: Vec2) -> Vec2 {
    let into = velocity.dot(normal);
    if into < 0.0 {
        velocity - normal * into
    } else {
        velocity
    }
}

/// `velocity` with its part into `normal`'s surface (against `normal`) limited to
/// `allowed` (>= 0): what may close a gap of `allowed * dt` in a frame of `dt`.
#[must_use]
#[inline]
pub fn limit_approach(velocity: Vec2, normal: Vec2, allowed: f32) -> Vec2 {
    let into = -velocity.dot(normal);
    if into > allowed {
        velocity + normal * (into - allowed)
    } else {
        velocity
    }
}

/// The cell (possibly outside the map) that holds world position `pos`, by the same
/// arithmetic as [`Grid::cell_at`].
#[must_use]
#[inline]
pub fn cell_coords(grid: &Grid, pos: Vec2) -> (i64, i64) {
    let local = grid.local(pos);
    (
        crate::steering::floor(local.x),
        crate::steering::floor(local.y),
    )
}

#[inline]
fn open(cost: &CostField, x: i64, y: i64) -> bool {
    cost.get_or_wall(x, y) != WALL
}

/// Whether a disc of `radius` moving by up to `moving` (world units, per axis) from
/// anywhere in a cell of clearance `clearance` (see [`crate::Clearance`]) stays clear of
/// every blocked cell: its cells reach at most `ceil(radius + moving)` cells from its own,
/// and the nearest blocked cell is `clearance` cells away.
#[must_use]
#[inline]
pub fn clear_of_walls(grid: &Grid, clearance: u8, radius: f32, moving: f32) -> bool {
    let reach = (radius + moving) / grid.cell_size();
    f32::from(clearance) > reach.ceil()
}

/// Moves a centre at `pos` by `delta` without entering a blocked cell: stopped just inside
/// the last open cell at the first blocked one the segment meets, then slid along that face
/// (up to two slides). A centre that starts in a blocked cell, or a move that is not finite,
/// stays where it is (blocked on both axes).
#[must_use]
pub fn sweep(cost: &CostField, grid: &Grid, pos: Vec2, delta: Vec2) -> (Vec2, Blocked) {
    let start = cell_coords(grid, pos);
    if !delta.is_finite() || !pos.is_finite() || !open(cost, start.0, start.1) {
        return (pos, Blocked::BOTH);
    }
    let mut blocked = Blocked::default();
    let (mut p, mut cell, mut d) = (pos, start, delta);
    for _ in 0..3 {
        if d == Vec2::ZERO {
            break;
        }
        match first_wall(cost, grid, p, cell, d) {
            Traverse::Clear(last) => {
                let end = p + d;
                p = if cell_coords(grid, end) == last {
                    end
                } else {
                    // Rounding put the end across a face the traversal did not cross.
                    snap_into(grid, end, last)
                };
                break;
            }
            Traverse::Hit {
                t,
                cell: last,
                x,
                y,
            } => {
                p = snap_into(grid, p + d * t, last);
                cell = last;
                d *= 1.0 - t;
                if x {
                    blocked.x = true;
                    d.x = 0.0;
                }
                if y {
                    blocked.y = true;
                    d.y = 0.0;
                }
            }
        }
    }
    (p, blocked)
}

/// What a traversal of a move's segment found.
enum Traverse {
    /// No blocked cell: the segment ends in this cell.
    Clear((i64, i64)),
    /// At parameter `t` of the move the segment leaves open cell `cell` across a face that
    /// blocks x and/or y.
    Hit {
        t: f32,
        cell: (i64, i64),
        x: bool,
        y: bool,
    },
}

/// The cells a segment from `p` (in cell `cell`) along `d` passes through, in order, until
/// the first blocked one. Exact ties (the segment through a cell corner) count the two
/// cells beside the corner: either one blocked blocks that axis.
fn first_wall(cost: &CostField, grid: &Grid, p: Vec2, cell: (i64, i64), d: Vec2) -> Traverse {
    let inv = 1.0 / f64::from(grid.cell_size());
    let local = |v: f32, o: f32| (f64::from(v) - f64::from(o)) * inv;
    let (lx, ly) = (local(p.x, grid.origin().x), local(p.y, grid.origin().y));
    let (dx, dy) = (f64::from(d.x) * inv, f64::from(d.y) * inv);
    let (mut x, mut y) = cell;
    let (sx, sy) = (if dx > 0.0 { 1 } else { -1 }, if dy > 0.0 { 1 } else { -1 });
    // Parameter of the first crossing of a vertical / horizontal face, and per cell.
    let first = |l: f64, c: i64, dl: f64| {
        if dl > 0.0 {
            ((c + 1) as f64 - l) / dl
        } else if dl < 0.0 {
            (l - c as f64) / -dl
        } else {
            f64::INFINITY
        }
        .max(0.0)
    };
    let (mut tx, mut ty) = (first(lx, x, dx), first(ly, y, dy));
    let (step_x, step_y) = (1.0 / dx.abs(), 1.0 / dy.abs());
    loop {
        let t = tx.min(ty);
        if t >= 1.0 {
            return Traverse::Clear((x, y));
        }
        let hit = |x_axis: bool, y_axis: bool| Traverse::Hit {
            t: t as f32,
            cell: (x, y),
            x: x_axis,
            y: y_axis,
        };
        if tx < ty {
            if !open(cost, x + sx, y) {
                return hit(true, false);
            }
            x += sx;
            tx += step_x;
        } else if ty < tx {
            if !open(cost, x, y + sy) {
                return hit(false, true);
            }
            y += sy;
            ty += step_y;
        } else {
            // Through the corner point.
            let side_x = open(cost, x + sx, y);
            let side_y = open(cost, x, y + sy);
            let diagonal = open(cost, x + sx, y + sy);
            if !(side_x && side_y && diagonal) {
                return if side_x && side_y {
                    // Only the diagonal cell is blocked: slide along the longer component.
                    if dx.abs() >= dy.abs() {
                        hit(false, true)
                    } else {
                        hit(true, false)
                    }
                } else {
                    hit(!side_x, !side_y)
                };
            }
            x += sx;
            y += sy;
            tx += step_x;
            ty += step_y;
        }
    }
}

/// A world point inside cell `cell` near `p`: `p` clamped a hair inside the cell's faces
/// (by the same arithmetic [`cell_coords`] uses, so it maps back to `cell`).
fn snap_into(grid: &Grid, p: Vec2, cell: (i64, i64)) -> Vec2 {
    let size = grid.cell_size();
    let min = grid.origin() + Vec2::new(cell.0 as f32, cell.1 as f32) * size;
    let mut inset = 1e-4 * size;
    for _ in 0..8 {
        let q = p.clamp(min + inset, min + (size - inset));
        if cell_coords(grid, q) == cell {
            return q;
        }
        inset *= 8.0;
    }
    min + size * 0.5
}

/// The first and last cell (x, y) of the square of cells a disc at `pos` reaching `reach`
/// touches, clipped to the map and the ring of cells just outside it. Every cell beyond the
/// ring is blocked (outside the map) and farther from a centre in the map than the ring cell
/// between them, so a disc's deepest overlap is never there; a disc reaching more than a
/// cell past the map's edge slides along the ring's faces alone. The clip bounds the work of
/// a huge disc (a radius of thousands of cells) by the map's size, not by its radius squared.
fn cells_within(grid: &Grid, pos: Vec2, reach: f32) -> ((i64, i64), (i64, i64)) {
    let (x0, y0) = cell_coords(grid, pos - reach);
    let (x1, y1) = cell_coords(grid, pos + reach);
    let (w, h) = (i64::from(grid.width()), i64::from(grid.height()));
    ((x0.max(-1), y0.max(-1)), (x1.min(w), y1.min(h)))
}

/// The deepest overlap of a disc at `pos` of `radius` with a blocked cell near it: depth
/// (world units) and the point of that cell nearest the centre. `None` when it overlaps none.
fn deepest_overlap(cost: &CostField, grid: &Grid, pos: Vec2, radius: f32) -> Option<(f32, Vec2)> {
    let size = grid.cell_size();
    let ((x0, y0), (x1, y1)) = cells_within(grid, pos, radius);
    let mut best: Option<(f32, Vec2)> = None;
    for y in y0..=y1 {
        for x in x0..=x1 {
            if open(cost, x, y) {
                continue;
            }
            let min = grid.origin() + Vec2::new(x as f32, y as f32) * size;
            let q = pos.clamp(min, min + size);
            let depth = radius - pos.distance(q);
            if depth > 0.0 && best.is_none_or(|(b, _)| depth > b) {
                best = Some((depth, q));
            }
        }
    }
    best
}

/// How deep a disc at `pos` of `radius` overlaps blocked cells, as a fraction of the radius
/// (0 when it overlaps none; at least 1 when its centre is in one).
#[must_use]
pub fn wall_depth(cost: &CostField, grid: &Grid, pos: Vec2, radius: f32) -> f32 {
    let (x, y) = cell_coords(grid, pos);
    if !open(cost, x, y) {
        return 1.0;
    }
    deepest_overlap(cost, grid, pos, radius).map_or(0.0, |(depth, _)| depth / radius)
}

/// Pushes a disc at `pos` of `radius` (its centre in an open cell) out of the blocked cells
/// it overlaps, deepest first, each push swept so the centre never crosses a wall. Where the
/// disc cannot fit (a gap narrower than the body) it ends as far out as the pushes got it.
#[must_use]
pub fn push_out_of_walls(cost: &CostField, grid: &Grid, pos: Vec2, radius: f32) -> Vec2 {
    let mut p = pos;
    for _ in 0..MAX_PUSHES {
        let Some((depth, q)) = deepest_overlap(cost, grid, p, radius) else {
            break;
        };
        let away = p - q;
        let len = away.length();
        // The nearest point is the centre itself only on a face: leave straight across it.
        let normal = if len > 0.0 {
            away / len
        } else {
            let c = cell_coords(grid, p);
            let centre =
                grid.origin() + (Vec2::new(c.0 as f32, c.1 as f32) + 0.5) * grid.cell_size();
            let to = centre - p;
            if to.x.abs() >= to.y.abs() {
                Vec2::new(to.x.signum(), 0.0)
            } else {
                Vec2::new(0.0, to.y.signum())
            }
        };
        let (moved, _) = sweep(cost, grid, p, normal * (depth + radius * PUSH_MARGIN));
        if moved == p {
            break;
        }
        p = moved;
    }
    p
}

/// `velocity` without the parts that point into blocked cells a disc at `pos` of `radius`
/// touches (within 2% of its radius): a body against a wall is not driven into it.
#[must_use]
pub fn slide_velocity(
    cost: &CostField,
    grid: &Grid,
    pos: Vec2,
    radius: f32,
    velocity: Vec2,
) -> Vec2 {
    let reach = radius * 1.02;
    let size = grid.cell_size();
    let ((x0, y0), (x1, y1)) = cells_within(grid, pos, reach);
    let mut v = velocity;
    for y in y0..=y1 {
        for x in x0..=x1 {
            if open(cost, x, y) {
                continue;
            }
            let min = grid.origin() + Vec2::new(x as f32, y as f32) * size;
            let away = pos - pos.clamp(min, min + size);
            let d = away.length();
            if d > 0.0 && d < reach {
                v = without_part_into(v, away / d);
            }
        }
    }
    v
}

/// Moves a disc at `pos` of `radius` by `delta`: the centre swept ([`sweep`]), then the disc
/// pushed out of walls ([`push_out_of_walls`]).
#[must_use]
pub fn move_body(
    cost: &CostField,
    grid: &Grid,
    pos: Vec2,
    radius: f32,
    delta: Vec2,
) -> (Vec2, Blocked) {
    let (p, blocked) = sweep(cost, grid, pos, delta);
    (push_out_of_walls(cost, grid, p, radius), blocked)
}

/// For a centre at `pos` inside a blocked cell: the nearest point, with the disc of `radius`
/// kept inside the cell where the cell is wide enough, of an open cell that touches the
/// wall the centre stands in (the blocked cells joined to its cell by their faces, at most
/// [`ESCAPE_REACH`] cells away). `None` when there is none: the unit is walled in and stays.
#[must_use]
pub fn escape_wall(cost: &CostField, grid: &Grid, pos: Vec2, radius: f32) -> Option<Vec2> {
    escape_wall_where(cost, grid, pos, radius, |_| true)
}

/// [`escape_wall`] among the open cells (as `(x, y)`) that `accept` takes: a crowd caught in
/// a wall fills the cells that have room for it instead of stacking in the nearest one.
#[must_use]
pub fn escape_wall_where(
    cost: &CostField,
    grid: &Grid,
    pos: Vec2,
    radius: f32,
    mut accept: impl FnMut((i64, i64)) -> bool,
) -> Option<Vec2> {
    if !pos.is_finite() {
        return None;
    }
    let (cx, cy) = cell_coords(grid, pos);
    let side = 2 * ESCAPE_REACH + 1;
    let index =
        |x: i64, y: i64| ((y - cy + ESCAPE_REACH) * side + (x - cx + ESCAPE_REACH)) as usize;
    let within = |x: i64, y: i64| (x - cx).abs() <= ESCAPE_REACH && (y - cy).abs() <= ESCAPE_REACH;
    let mut seen = vec![false; (side * side) as usize];
    let mut stack = vec![(cx, cy)];
    seen[index(cx, cy)] = true;
    let size = grid.cell_size();
    let inset = radius.min(size * 0.5 - 1e-3 * size).max(1e-3 * size);
    let mut best: Option<(f32, Vec2)> = None;
    while let Some((x, y)) = stack.pop() {
        for (nx, ny) in [(x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)] {
            if !within(nx, ny) || seen[index(nx, ny)] {
                continue;
            }
            seen[index(nx, ny)] = true;
            if open(cost, nx, ny) {
                if !accept((nx, ny)) {
                    continue;
                }
                let min = grid.origin() + Vec2::new(nx as f32, ny as f32) * size;
                let q = snap_into(grid, pos.clamp(min + inset, min + (size - inset)), (nx, ny));
                let d = q.distance_squared(pos);
                // Ties go to the lower (row, column), so the choice is the same on any run.
                let better =
                    best.is_none_or(|(bd, bq)| d < bd || (d == bd && (q.y, q.x) < (bq.y, bq.x)));
                if better {
                    best = Some((d, q));
                }
            } else {
                stack.push((nx, ny));
            }
        }
    }
    best.map(|(_, q)| q)
}

/// Whether the cell of world position `pos` is inside the map and open on `cost`.
#[must_use]
pub fn centre_is_open(cost: &CostField, grid: &Grid, pos: Vec2) -> bool {
    let (x, y) = cell_coords(grid, pos);
    grid.contains(x, y) && open(cost, x, y)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Cell;

    fn field(w: u32, h: u32, walls: &[(u32, u32)]) -> (Grid, CostField) {
        let grid = Grid::new(w, h).unwrap();
        let mut cost = CostField::filled(&grid, 1);
        for &(x, y) in walls {
            cost.set(Cell::new(x, y), WALL);
        }
        (grid, cost)
    }

    #[test]
    fn sweep_stops_at_a_one_cell_wall_at_any_speed() {
        let (grid, cost) = field(20, 5, &[(10, 0), (10, 1), (10, 2), (10, 3), (10, 4)]);
        for speed in [0.3f32, 1.0, 7.0, 100.0, 1e6, 1e30] {
            let (p, b) = sweep(&cost, &grid, Vec2::new(2.5, 2.5), Vec2::new(speed, 0.0));
            assert!(p.x < 10.0, "{speed}: {p}");
            assert_eq!(b.x, speed > 7.0, "{speed}");
        }
        // A slide: the rest of the move goes along the face.
        let (p, b) = sweep(&cost, &grid, Vec2::new(9.5, 1.5), Vec2::new(2.0, 2.0));
        assert!(p.x < 10.0 && (p.y - 3.5).abs() < 1e-3, "{p}");
        assert!(b.x && !b.y);
        // Off the map is a wall.
        let (p, _) = sweep(&cost, &grid, Vec2::new(0.5, 0.5), Vec2::new(-3.0, -9.0));
        assert!(p.x >= 0.0 && p.y >= 0.0, "{p}");
        let (p, b) = sweep(&cost, &grid, Vec2::new(0.5, 0.5), Vec2::new(f32::NAN, 0.0));
        assert_eq!((p, b), (Vec2::new(0.5, 0.5), Blocked::BOTH));
    }

    #[test]
    fn a_closed_diagonal_stops_centres_and_bodies() {
        // (1, 0) and (0, 1) touch at the corner (1, 1): the way from (0, 0) to (1, 1) is shut.
        let (grid, cost) = field(3, 3, &[(1, 0), (0, 1)]);
        for delta in [
            Vec2::new(0.4, 0.4),
            Vec2::new(1.0, 1.0),
            Vec2::new(0.35, 0.45),
        ] {
            let (p, _) = sweep(&cost, &grid, Vec2::new(0.8, 0.8), delta);
            assert_eq!(cell_coords(&grid, p), (0, 0), "{delta}: {p}");
        }
        // A body pressed into that corner is held out of both cells.
        let mut p = Vec2::new(0.5, 0.5);
        for _ in 0..50 {
            p = move_body(&cost, &grid, p, 0.3, Vec2::new(0.2, 0.2)).0;
            assert!(wall_depth(&cost, &grid, p, 0.3) <= WALL_TOLERANCE, "{p}");
        }
        assert_eq!(cell_coords(&grid, p), (0, 0));
    }

    #[test]
    fn bodies_are_pushed_out_of_faces_and_corners() {
        let (grid, cost) = field(10, 10, &[(5, 5), (6, 5), (5, 6)]);
        // A face.
        let p = push_out_of_walls(&cost, &grid, Vec2::new(4.8, 5.5), 0.45);
        assert!((wall_depth(&cost, &grid, p, 0.45)) <= WALL_TOLERANCE, "{p}");
        assert!((p.y - 5.5).abs() < 1e-4 && p.x <= 4.55 + 1e-3, "{p}");
        // A convex corner: pushed along the diagonal.
        let p = push_out_of_walls(&cost, &grid, Vec2::new(4.8, 4.8), 0.45);
        assert!(wall_depth(&cost, &grid, p, 0.45) <= WALL_TOLERANCE, "{p}");
        assert!((p.x - p.y).abs() < 1e-4, "{p}");
        // The inner corner of an L: pushed out of both faces.
        let p = push_out_of_walls(&cost, &grid, Vec2::new(6.2, 6.2), 0.45);
        assert!(wall_depth(&cost, &grid, p, 0.45) <= WALL_TOLERANCE, "{p}");
        // Sliding along a wall keeps the whole body out.
        let mut p = Vec2::new(3.0, 4.6);
        for _ in 0..40 {
            p = move_body(&cost, &grid, p, 0.45, Vec2::new(0.15, 0.05)).0;
            assert!(wall_depth(&cost, &grid, p, 0.45) <= WALL_TOLERANCE, "{p}");
        }
    }

    #[test]
    fn a_unit_in_a_new_wall_steps_out_through_that_wall_only() {
        // A ring of walls around (5, 5) with the unit on the ring's west side.
        let mut walls = Vec::new();
        for i in 3..=7 {
            walls.extend([(i, 3), (i, 7), (3, i), (7, i)]);
        }
        let (grid, cost) = field(11, 11, &walls);
        let p = escape_wall(&cost, &grid, Vec2::new(3.3, 5.5), 0.3).unwrap();
        assert_eq!(cell_coords(&grid, p), (2, 5), "{p}");
        let p = escape_wall(&cost, &grid, Vec2::new(3.8, 5.5), 0.3).unwrap();
        assert_eq!(cell_coords(&grid, p), (4, 5), "{p}");
        // Deep inside a thick wall with no open cell within reach: it stays.
        let (grid, cost) = field(
            20,
            20,
            &(0..20)
                .flat_map(|y| (0..20).map(move |x| (x, y)))
                .filter(|&(x, y)| (x, y) != (0, 0))
                .collect::<Vec<_>>(),
        );
        assert_eq!(escape_wall(&cost, &grid, Vec2::new(10.5, 10.5), 0.3), None);
        assert!(escape_wall(&cost, &grid, Vec2::new(2.5, 1.5), 0.3).is_some());
    }

    /// The deepest overlap over every cell of the disc's square, unclipped.
    fn deepest_overlap_unclipped(
        cost: &CostField,
        grid: &Grid,
        pos: Vec2,
        radius: f32,
    ) -> Option<(f32, Vec2)> {
        let (x0, y0) = cell_coords(grid, pos - radius);
        let (x1, y1) = cell_coords(grid, pos + radius);
        let mut best: Option<(f32, Vec2)> = None;
        for y in y0..=y1 {
            for x in x0..=x1 {
                if open(cost, x, y) {
                    continue;
                }
                let min = Vec2::new(x as f32, y as f32);
                let q = pos.clamp(min, min + 1.0);
                let depth = radius - pos.distance(q);
                if depth > 0.0 && best.is_none_or(|(b, _)| depth > b) {
                    best = Some((depth, q));
                }
            }
        }
        best
    }

    #[test]
    fn the_overlap_search_stops_at_the_ring_outside_the_map() {
        // Discs of up to 5 cells at centres all over a small map with walls: the clipped
        // search finds what the whole square finds.
        let (grid, cost) = field(9, 7, &[(4, 3), (5, 3), (1, 5), (7, 1)]);
        for i in 0..9 * 7 * 4 {
            let pos = Vec2::new((i % 36) as f32 * 0.25 + 0.1, (i / 36) as f32 * 0.25 + 0.1);
            if !open(&cost, cell_coords(&grid, pos).0, cell_coords(&grid, pos).1) {
                continue;
            }
            for radius in [0.3f32, 0.9, 1.6, 2.5, 5.0] {
                assert_eq!(
                    deepest_overlap(&cost, &grid, pos, radius),
                    deepest_overlap_unclipped(&cost, &grid, pos, radius),
                    "{pos} {radius}"
                );
            }
        }
    }

    #[test]
    fn a_disc_far_larger_than_the_map_costs_the_map_not_its_radius() {
        // Radius 1e5 on a 16x16 map: the square of its cells would be 4e10 cells (hours a
        // call); clipped, it is the map and its ring. The disc fits nowhere: it stays deep in
        // the walls, and the walls all round it take (almost) all of its velocity.
        let (grid, cost) = field(16, 16, &[(8, 8)]);
        let pos = Vec2::new(3.5, 3.5);
        let radius = 1e5;
        assert!(wall_depth(&cost, &grid, pos, radius) > 0.99);
        assert!(push_out_of_walls(&cost, &grid, pos, radius).is_finite());
        let (moved, _) = move_body(&cost, &grid, pos, radius, Vec2::new(0.5, 0.0));
        assert!(moved.is_finite());
        let v = slide_velocity(&cost, &grid, pos, radius, Vec2::new(1.0, -2.0));
        assert!(v.length() < 0.01, "{v}");
    }
}
