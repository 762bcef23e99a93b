//! Formations (docs/behaviour.md, "Formations"): the slots of a shape, which unit takes which
//! slot, and where a slot lies on the map as its anchor moves and turns.
//!
//! A formation is drawn in its own frame: `x` across (to the right of its facing), `y`
//! along its facing (ahead). [`to_world`] turns a slot's offset into a world offset for a
//! facing; [`squeeze`] pulls a slot in from behind a wall toward the anchor, which is how a
//! formation narrows through a gap and widens again after it.

use glam::Vec2;

use crate::terrain::WALL;
use crate::{CostField, Direction, Grid};

/// The shape of a formation.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    /// Ranks of `width` units side by side, one behind the other (the last rank centred).
    Line {
        /// Units a rank (at least 1).
        width: u32,
    },
    /// A square block: ranks as wide as the block is deep (the width is the ceiling of the
    /// square root of the number of units).
    Box,
    /// A filled wedge: one unit at the point, then ranks one unit wider each, the point
    /// ahead.
    Wedge,
    /// The caller's own slots: offsets from the anchor in cells of the formation's frame
    /// (`x` to the right, `y` ahead). A unit past the last slot has none and moves as a
    /// plain member of its group.
    Custom(Vec<Vec2>),
}

/// A formation order for a group.
#[derive(Clone, Debug, PartialEq)]
pub struct FormationOrder {
    /// Its shape.
    pub shape: Shape,
    /// World distance between neighbouring slots; `None`: from the units' radii (the
    /// largest diameter, times [`SPACING_MARGIN`]).
    pub spacing: Option<f32>,
    /// The way the formation faces once it has arrived (a vector, normalised when used);
    /// `None`: the way it was walking as it arrived.
    pub facing: Option<Vec2>,
}

/// The default spacing between slots is the largest member's diameter times this: bodies a
/// little apart, so that a unit can take its slot without pushing its neighbours.
pub const SPACING_MARGIN: f32 = 1.2;

/// What is wrong with a [`FormationOrder`].
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum FormationError {
    /// A line of width 0.
    #[error("a line formation needs a width of at least 1")]
    ZeroWidth,
    /// A spacing that is not a finite positive number.
    #[error("a formation's spacing must be finite and above 0, not {0}")]
    Spacing(f32),
    /// A facing that is not a finite non-zero vector.
    #[error("a formation's facing must be a finite non-zero vector, not ({0}, {1})")]
    Facing(f32, f32),
    /// Custom slots that are empty or too many.
    #[error("a custom formation needs 1 to {max} slots, not {0}", max = MAX_SLOTS)]
    SlotCount(usize),
    /// A target distance that is not finite, negative or too far.
    #[error("a target distance must be finite and within 0 to {max}, not {0}", max = MAX_OFFSET)]
    Distance(f32),
    /// A custom slot that is not finite or too far from the anchor.
    #[error("custom slot {index} is ({x}, {y}): each must be finite and within {max} cells of the anchor", max = MAX_OFFSET)]
    Slot {
        /// Its index.
        index: usize,
        /// Its offset.
        x: f32,
        /// See `x`.
        y: f32,
    },
}

/// A unit a group follows (docs/behaviour.md, "Unit targets"): its goal moves with the unit,
/// and the group stops `distance` from it (a formation's anchor; a blob gathers within that
/// distance).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UnitTarget {
    /// The unit followed.
    pub unit: crate::UnitId,
    /// How far from it the group stops (world units, `0..=MAX_OFFSET`).
    pub distance: f32,
}

impl UnitTarget {
    /// Checks the distance.
    pub fn validate(&self) -> Result<(), FormationError> {
        if self.distance.is_finite() && (0.0..=MAX_OFFSET).contains(&self.distance) {
            Ok(())
        } else {
            Err(FormationError::Distance(self.distance))
        }
    }
}

/// The most slots a custom formation may have.
pub const MAX_SLOTS: usize = 1 << 20;

/// How far (in spacings for the built-in shapes, in cells for custom ones) a slot may lie
/// from the anchor.
pub const MAX_OFFSET: f32 = 4096.0;

impl FormationOrder {
    /// Checks the order's numbers (see [`FormationError`]).
    pub fn validate(&self) -> Result<(), FormationError> {
        if let Some(s) = self.spacing
            && !(s.is_finite() && s > 0.0 && s <= MAX_OFFSET)
        {
            return Err(FormationError::Spacing(s));
        }
        if let Some(f) = self.facing
            && !(f.is_finite() && f.length_squared() > 1e-12)
        {
            return Err(FormationError::Facing(f.x, f.y));
        }
        match &self.shape {
            Shape::Line { width: 0 } => Err(FormationError::ZeroWidth),
            Shape::Custom(slots) if slots.is_empty() || slots.len() > MAX_SLOTS => {
                Err(FormationError::SlotCount(slots.len()))
            }
            Shape::Custom(slots) => match slots
                .iter()
                .position(|s| !(s.is_finite() && s.abs().max_element() <= MAX_OFFSET))
            {
                Some(index) => Err(FormationError::Slot {
                    index,
                    x: slots[index].x,
                    y: slots[index].y,
                }),
                None => Ok(()),
            },
            _ => Ok(()),
        }
    }

    /// The facing as a unit vector, if one was given and it can be normalised.
    #[must_use]
    pub fn unit_facing(&self) -> Option<Vec2> {
        self.facing.and_then(Vec2::try_normalize)
    }
}

/// The slots of `shape` for `units` units at `spacing`, in the formation's frame (`x`
/// right, `y` ahead), front rank first and each rank from left to right. The built-in shapes
/// are centred on their slots' mean, so that the anchor is the middle of the formation and
/// a turn about it moves no slot farther than it must. Custom slots are taken as given (at
/// most `units` of them, the first ones).
#[must_use]
pub fn slot_offsets(shape: &Shape, units: usize, spacing: f32) -> Vec<Vec2> {
    let ranks = |width: usize| -> Vec<Vec2> {
        let width = width.max(1);
        (0..units)
            .map(|i| {
                let (rank, file) = (i / width, i % width);
                let in_rank = width.min(units - rank * width);
                let x = file as f32 - (in_rank - 1) as f32 * 0.5;
                Vec2::new(x, -(rank as f32)) * spacing
            })
            .collect()
    };
    let slots = match shape {
        Shape::Line { width } => ranks(*width as usize),
        Shape::Box => ranks((units as f64).sqrt().ceil() as usize),
        Shape::Wedge => {
            // Rank r holds r + 1 units, `sqrt(3)/2` of a spacing behind the one before: each
            // unit one spacing from the two ahead of it.
            let mut slots = Vec::with_capacity(units);
            let mut rank = 0usize;
            while slots.len() < units {
                let in_rank = (rank + 1).min(units - slots.len());
                for file in 0..in_rank {
                    let x = file as f32 - rank as f32 * 0.5;
                    slots.push(Vec2::new(x, -(rank as f32) * 0.866_025_4) * spacing);
                }
                rank += 1;
            }
            slots
        }
        Shape::Custom(slots) => return slots.iter().copied().take(units).collect(),
    };
    let n = slots.len().max(1) as f32;
    let mean = slots.iter().fold(Vec2::ZERO, |a, &s| a + s) / n;
    slots.into_iter().map(|s| s - mean).collect()
}

/// A slot's world offset from the anchor for a formation facing `facing` (a unit vector):
/// `y` along the facing, `x` to its right (world `+y` points down the map, so the right of
/// east is south).
#[must_use]
pub fn to_world(offset: Vec2, facing: Vec2) -> Vec2 {
    facing * offset.y + facing.perp() * offset.x
}

/// Which slot each unit takes: `units` are `(id, position)`, `offsets` the slots in the
/// formation's frame, laid about `centre` facing `facing`. Returns `(id, slot)` sorted by
/// id; units past the number of slots get none.
///
/// The units are ranked front to back by how far ahead they stand along the facing, and
/// the slots' ranks (equal `y`) are filled in that order; within a rank both are matched
/// left to right. Units already in formation keep their places, a crowd takes the slots
/// nearest its own layout, and no two units of one rank cross to reach theirs. Ties go by
/// id, so the result depends only on the input, never on its order.
#[must_use]
pub fn assign_slots(
    units: &[(u32, Vec2)],
    offsets: &[Vec2],
    centre: Vec2,
    facing: Vec2,
) -> Vec<(u32, u32)> {
    let ranked: Vec<(u32, Vec2, f32)> = (units.iter())
        .map(|&(id, p)| (id, p, (p - centre).dot(facing)))
        .collect();
    assign_slots_ranked(&ranked, offsets, centre, facing)
}

/// [`assign_slots`] with the units ranked front to back by a key of the caller's (the third
/// field, larger is further ahead) instead of by how far ahead they stand along the facing:
/// a formation walking as a column through a bent corridor ranks its units by how far along
/// the way they are, since they cannot pass one another there. Within a rank they are
/// matched left to right as before.
#[must_use]
pub fn assign_slots_ranked(
    units: &[(u32, Vec2, f32)],
    offsets: &[Vec2],
    centre: Vec2,
    facing: Vec2,
) -> Vec<(u32, u32)> {
    let local = |p: Vec2, ahead: f32| Vec2::new((p - centre).dot(facing.perp()), ahead);
    let mut order: Vec<(Vec2, u32)> = (units.iter())
        .map(|&(id, p, ahead)| (local(p, ahead), id))
        .collect();
    // Front (largest key) first.
    order.sort_unstable_by(|a, b| b.0.y.total_cmp(&a.0.y).then(a.1.cmp(&b.1)));
    let mut slots: Vec<(Vec2, u32)> = (offsets.iter().enumerate())
        .map(|(i, &o)| (o, i as u32))
        .collect();
    slots.sort_by(|a, b| b.0.y.total_cmp(&a.0.y).then(a.0.x.total_cmp(&b.0.x)));
    let mut out = Vec::with_capacity(units.len().min(offsets.len()));
    let mut next = 0;
    let mut start = 0;
    while start < slots.len() && next < order.len() {
        // One rank: the slots with (nearly) the same `y`.
        let y = slots[start].0.y;
        let end = (start..slots.len())
            .find(|&i| (slots[i].0.y - y).abs() > 1e-4)
            .unwrap_or(slots.len());
        let take = (end - start).min(order.len() - next);
        let mut rank: Vec<(Vec2, u32)> = order[next..next + take].to_vec();
        rank.sort_unstable_by(|a, b| a.0.x.total_cmp(&b.0.x).then(a.1.cmp(&b.1)));
        // A short rank (more slots than units left) takes the slots nearest its middle.
        let skip = (end - start - take) / 2;
        for (unit, slot) in rank.iter().zip(&slots[start + skip..start + skip + take]) {
            out.push((unit.1, slot.1));
        }
        next += take;
        start = end;
    }
    out.sort_unstable();
    out
}

/// The slot of unit `id` in an assignment from [`assign_slots`].
#[must_use]
pub fn slot_of(assignment: &[(u32, u32)], id: u32) -> Option<u32> {
    assignment
        .binary_search_by_key(&id, |&(u, _)| u)
        .ok()
        .map(|i| assignment[i].1)
}

/// Where a slot at world point `slot` can be reached from `anchor` in a straight line on
/// `cost` (a size class's cost field: cells the body does not fit are walls), lone rocks
/// aside ([`open_reach`]: units walk round them): the slot itself when the way is clear,
/// pushed out of a rock it lies on; else the point `margin` short of the first wall on the
/// way (the anchor itself when the wall is nearer). Slots beyond a gap's sides fall in
/// toward the anchor, so a formation narrows to pass the gap and widens again after it.
#[must_use]
pub fn squeeze(cost: &CostField, grid: &Grid, anchor: Vec2, slot: Vec2, margin: f32) -> Vec2 {
    let d = slot - anchor;
    let length = d.length();
    if length <= 1e-6 {
        return slot;
    }
    let dir = d / length;
    let reach = open_reach(cost, grid, anchor, dir, length + margin);
    if reach >= length + margin {
        if crate::centre_is_open(cost, grid, slot) {
            slot
        } else {
            // On a rock: the nearest open point with room for the body.
            crate::escape_wall(cost, grid, slot, margin).unwrap_or(anchor)
        }
    } else {
        anchor + dir * (reach - margin).clamp(0.0, length)
    }
}

/// Slots nearer than this many spacings to another are on top of it ([`spread_slots`]).
pub const SLOTS_APART: f32 = 0.9;

/// The most cells [`spread_slots`] looks through for each slot it moves.
const SPREAD_CELLS_PER_SLOT: usize = 64;

/// Moves the slots that squeezing ([`squeeze`]) left on top of another (nearer than
/// [`SLOTS_APART`] spacings) to free cells: a formation whose shape does not fit where it
/// stops (its goal in a pocket or a corridor's end) would otherwise hold slots no two units
/// can share, and its members would jostle for them for ever. Slots are taken nearest the
/// anchor first (their `offsets` from it, then their index); each slot left on top of a
/// taken one moves to the centre of the first cell, in breadth-first order over `cost`'s open
/// cells from the anchor's, that is clear of every slot taken. A slot for which no such cell
/// turns up stays where it was. Deterministic: it depends only on its inputs.
pub fn spread_slots(
    cost: &CostField,
    grid: &Grid,
    anchor: Vec2,
    offsets: &[Vec2],
    targets: &mut [Vec2],
    spacing: f32,
) {
    use std::collections::{HashMap, HashSet, VecDeque};
    let apart = spacing * SLOTS_APART;
    if targets.is_empty() || !apart.is_finite() || apart <= 0.0 || !anchor.is_finite() {
        return;
    }
    let key = |p: Vec2| ((p.x / apart).floor() as i64, (p.y / apart).floor() as i64);
    let mut taken: HashMap<(i64, i64), Vec<Vec2>> = HashMap::new();
    let clear = |taken: &HashMap<(i64, i64), Vec<Vec2>>, p: Vec2| {
        let (kx, ky) = key(p);
        (-1..=1).all(|dy| {
            (-1..=1).all(|dx| {
                taken
                    .get(&(kx + dx, ky + dy))
                    .is_none_or(|v| v.iter().all(|q| q.distance(p) >= apart))
            })
        })
    };
    let mut order: Vec<usize> = (0..targets.len()).collect();
    let reach = |i: usize| offsets.get(i).map_or(f32::INFINITY, |o| o.length_squared());
    order.sort_by(|&a, &b| reach(a).total_cmp(&reach(b)).then(a.cmp(&b)));
    let mut on_top = Vec::new();
    for i in order {
        if clear(&taken, targets[i]) {
            taken.entry(key(targets[i])).or_default().push(targets[i]);
        } else {
            on_top.push(i);
        }
    }
    if on_top.is_empty() {
        return;
    }
    let (w, h) = (i64::from(grid.width()), i64::from(grid.height()));
    let start = crate::cell_coords(grid, anchor);
    if cost.get_or_wall(start.0, start.1) == WALL {
        return;
    }
    let budget = on_top.len() * SPREAD_CELLS_PER_SLOT;
    let mut seen = HashSet::from([start]);
    let mut queue = VecDeque::from([start]);
    let mut next = on_top.into_iter();
    let mut slot = next.next();
    while let (Some(i), Some((x, y))) = (slot, queue.pop_front()) {
        let centre = grid.cell_centre(crate::Cell::new(x as u32, y as u32));
        if clear(&taken, centre) {
            targets[i] = centre;
            taken.entry(key(centre)).or_default().push(centre);
            slot = next.next();
        }
        if seen.len() >= budget {
            continue;
        }
        for (dx, dy) in [(1, 0), (-1, 0), (0, 1), (0, -1)] {
            let n = (x + dx, y + dy);
            let inside = (0..w).contains(&n.0) && (0..h).contains(&n.1);
            if inside && cost.get_or_wall(n.0, n.1) != WALL && seen.insert(n) {
                queue.push_back(n);
            }
        }
    }
}

/// The way from `from` toward `to` over open cells: the direction to the centre of the
/// next cell on a shortest walk (eight neighbours, no corner cut past a wall) between their
/// cells, searched within `reach` cells of `to`'s cell; `None` when no such walk stays that
/// near, or either end is off the map or in a wall. From `to`'s own cell, straight to `to`.
/// For a unit whose straight line to a point nearby crosses a wall and that has no field
/// leading there (a formation's slot on its goal point: the goal's field runs out from the
/// goal in every direction).
#[must_use]
pub fn step_toward(
    cost: &CostField,
    grid: &Grid,
    from: Vec2,
    to: Vec2,
    reach: u32,
) -> Option<Vec2> {
    use std::collections::VecDeque;
    let (start, end) = (crate::cell_coords(grid, from), crate::cell_coords(grid, to));
    if start == end {
        return (to - from).try_normalize();
    }
    let r = i64::from(reach);
    let in_box = |c: (i64, i64)| (c.0 - end.0).abs() <= r && (c.1 - end.1).abs() <= r;
    let open = |c: (i64, i64)| in_box(c) && cost.get_or_wall(c.0, c.1) != WALL;
    if !open(start) || !open(end) {
        return None;
    }
    // Steps from `end`, over the box of side 2 * reach + 1 about it, along the cost field's
    // legal moves (no corner cut past a wall; a diagonal's side cells lie in the box too).
    let side = 2 * r + 1;
    let index = |c: (i64, i64)| ((c.1 - end.1 + r) * side + (c.0 - end.0 + r)) as usize;
    let mut steps = vec![u32::MAX; (side * side) as usize];
    steps[index(end)] = 0;
    let moves = |c: (i64, i64)| {
        let legal = cost.moves(crate::Cell::new(c.0 as u32, c.1 as u32));
        SCAN.into_iter()
            .filter(move |&d| legal & (1 << d as u8) != 0)
            .map(move |d| (c.0 + i64::from(d.offset().0), c.1 + i64::from(d.offset().1)))
            .filter(move |&n| in_box(n))
    };
    let mut queue = VecDeque::from([end]);
    while let Some(c) = queue.pop_front() {
        if c == start {
            break;
        }
        let next = steps[index(c)] + 1;
        for n in moves(c) {
            if steps[index(n)] == u32::MAX {
                steps[index(n)] = next;
                queue.push_back(n);
            }
        }
    }
    if steps[index(start)] == u32::MAX {
        return None;
    }
    // The neighbour one step nearer (the first in scan order on a tie).
    let next = moves(start)
        .filter(|&n| steps[index(n)] < steps[index(start)])
        .min_by_key(|&n| steps[index(n)])?;
    let centre = grid.cell_centre(crate::Cell::new(next.0 as u32, next.1 as u32));
    (centre - from).try_normalize()
}

/// The order [`step_toward`] tries a cell's neighbours in: row by row, up the map first.
const SCAN: [Direction; 8] = [
    Direction::NW,
    Direction::N,
    Direction::NE,
    Direction::W,
    Direction::E,
    Direction::SW,
    Direction::S,
    Direction::SE,
];

/// How far a ray from `from` along `dir` goes (at most `length`) before it meets a wall
/// that is not a lone rock: units walk round rocks, so a formation does not narrow for them.
/// A rock is one or two wall cells touching no other wall cell.
#[must_use]
pub fn open_reach(cost: &crate::CostField, grid: &Grid, from: Vec2, dir: Vec2, length: f32) -> f32 {
    let size = grid.cell_size();
    let mut gone = 0.0;
    for _ in 0..MAX_ROCKS {
        let start = from + dir * gone;
        let Some(hit) = crate::cast_ray(cost, grid, start, dir, length - gone) else {
            return length;
        };
        let cell = crate::cell_coords(grid, start + dir * (hit.distance + size * 1e-3));
        if !is_rock(cost, cell) {
            return gone + hit.distance;
        }
        // A rock: on from past it (a ray crosses a cell in at most 1.5 of its sides).
        gone += hit.distance + 1.5 * size;
        if gone >= length {
            return length;
        }
    }
    gone.min(length)
}

/// Whether the wall cell `cell` is a lone rock: it and its wall neighbours (among the eight
/// round it) are at most [`ROCK_CELLS`] wall cells with no other wall cell touching them.
/// The end of a wall line is not a rock.
fn is_rock(cost: &CostField, cell: (i64, i64)) -> bool {
    let walls_round = |c: (i64, i64), skip: (i64, i64)| -> Vec<(i64, i64)> {
        (-1..=1)
            .flat_map(|dy| (-1..=1).map(move |dx| (c.0 + dx, c.1 + dy)))
            .filter(|&n| n != c && n != skip && cost.get_or_wall(n.0, n.1) == WALL)
            .collect()
    };
    match walls_round(cell, cell).as_slice() {
        [] => true,
        [other] => ROCK_CELLS >= 2 && walls_round(*other, cell).is_empty(),
        _ => false,
    }
}

/// See [`is_rock`].
const ROCK_CELLS: usize = 2;

/// The most rocks a ray of [`open_reach`] passes.
const MAX_ROCKS: usize = 8;

/// `heading` turned toward `want` (both unit vectors) by at most `max_angle` radians.
#[must_use]
pub fn turn_toward(heading: Vec2, want: Vec2, max_angle: f32) -> Vec2 {
    let angle = libm::atan2f(heading.perp_dot(want), heading.dot(want));
    if angle.abs() <= max_angle {
        return want;
    }
    let a = max_angle.copysign(angle);
    let (s, c) = (libm::sinf(a), libm::cosf(a));
    Vec2::new(heading.x * c - heading.y * s, heading.x * s + heading.y * c).normalize_or(want)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assignment_is_a_matching(a: &[(u32, u32)], units: usize, slots: usize) {
        assert_eq!(a.len(), units.min(slots));
        let mut taken: Vec<u32> = a.iter().map(|&(_, s)| s).collect();
        taken.sort_unstable();
        taken.dedup();
        assert_eq!(taken.len(), a.len(), "a slot taken twice: {a:?}");
        assert!(taken.iter().all(|&s| (s as usize) < slots));
    }

    #[test]
    fn built_in_shapes_have_one_slot_a_unit_a_spacing_apart() {
        for n in [1usize, 2, 7, 25, 100, 401] {
            for shape in [Shape::Line { width: 10 }, Shape::Box, Shape::Wedge] {
                let slots = slot_offsets(&shape, n, 1.5);
                assert_eq!(slots.len(), n, "{shape:?}");
                let mean = slots.iter().fold(Vec2::ZERO, |a, &s| a + s) / n as f32;
                assert!(mean.length() < 1e-3, "{shape:?} {n}: centred, not {mean}");
                for (i, a) in slots.iter().enumerate() {
                    for b in &slots[i + 1..] {
                        assert!(a.distance(*b) >= 1.5 - 1e-3, "{shape:?} {n}: {a} {b}");
                    }
                }
            }
        }
        let line = slot_offsets(&Shape::Line { width: 4 }, 10, 1.0);
        // Ranks of 4, 4 and a centred 2, front rank ahead; the mean rank is 0.8 behind the
        // front.
        assert!(line[0].distance(Vec2::new(-1.5, 0.8)) < 1e-5, "{}", line[0]);
        assert!(
            line[8].distance(Vec2::new(-0.5, -1.2)) < 1e-5,
            "{}",
            line[8]
        );
        let wedge = slot_offsets(&Shape::Wedge, 3, 1.0);
        assert!(wedge[0].y > wedge[1].y && wedge[1].y == wedge[2].y);
    }

    #[test]
    fn to_world_turns_the_frame_with_the_facing() {
        let east = Vec2::X;
        // Ahead is east, right is south (+y).
        assert_eq!(to_world(Vec2::new(0.0, 2.0), east), Vec2::new(2.0, 0.0));
        assert_eq!(to_world(Vec2::new(1.0, 0.0), east), Vec2::new(0.0, 1.0));
        let south = Vec2::Y;
        assert_eq!(to_world(Vec2::new(1.0, 0.0), south), Vec2::new(-1.0, 0.0));
    }

    #[test]
    fn units_in_formation_keep_their_slots_in_any_input_order() {
        // Units standing exactly on a box's slots, facing any way, take them back.
        for (k, facing) in [Vec2::X, Vec2::Y, Vec2::new(0.6, -0.8), -Vec2::X]
            .into_iter()
            .enumerate()
        {
            let offsets = slot_offsets(&Shape::Box, 30, 1.0);
            let centre = Vec2::new(50.0, 40.0);
            let mut units: Vec<(u32, Vec2)> = (offsets.iter().enumerate())
                .map(|(i, &o)| (100 + i as u32 * 3, centre + to_world(o, facing)))
                .collect();
            let a = assign_slots(&units, &offsets, centre, facing);
            assignment_is_a_matching(&a, 30, 30);
            for &(id, slot) in &a {
                assert_eq!((id - 100) / 3, slot, "facing {k}");
            }
            units.reverse();
            assert_eq!(assign_slots(&units, &offsets, centre, facing), a);
        }
    }

    #[test]
    fn a_crowd_takes_slots_without_crossing_within_a_rank() {
        // Units scattered at random take a line; within each rank, left to right order of
        // the units is the order of their slots.
        let mut seed = 7u32;
        let mut rand = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1 << 24) as f32
        };
        for n in [5usize, 40, 99] {
            let units: Vec<(u32, Vec2)> = (0..n as u32)
                .map(|i| (i, Vec2::new(rand() * 20.0, rand() * 20.0)))
                .collect();
            let offsets = slot_offsets(&Shape::Line { width: 10 }, n, 1.0);
            let a = assign_slots(&units, &offsets, Vec2::splat(10.0), Vec2::Y);
            assignment_is_a_matching(&a, n, n);
            for &(i, si) in &a {
                for &(j, sj) in &a {
                    let (oi, oj) = (offsets[si as usize], offsets[sj as usize]);
                    if (oi.y - oj.y).abs() < 1e-4 && oi.x < oj.x {
                        // Right of the facing +y is -x.
                        let right = |id: u32| -units[id as usize].1.x;
                        assert!(right(i) <= right(j), "{n}: {i} and {j} cross");
                    }
                }
            }
        }
        // More units than custom slots: the front ones get them.
        let custom = [Vec2::ZERO, Vec2::new(1.0, 0.0)];
        let units = [
            (1, Vec2::new(0.0, 5.0)),
            (2, Vec2::ZERO),
            (3, Vec2::new(1.0, 5.0)),
        ];
        let a = assign_slots(&units, &custom, Vec2::ZERO, Vec2::Y);
        // Facing +y, the right is -x: unit 3 (x = 1) is the left one.
        assert_eq!(a, vec![(1, 1), (3, 0)]);
        assert_eq!(slot_of(&a, 3), Some(0));
        assert_eq!(slot_of(&a, 2), None);
    }

    #[test]
    fn slots_behind_a_wall_fall_in_toward_the_anchor() {
        let grid = Grid::new(20, 20).unwrap();
        let mut cost = CostField::filled(&grid, crate::OPEN);
        for y in 0..20 {
            if !(9..=10).contains(&y) {
                cost.set(crate::Cell::new(10, y), WALL);
            }
        }
        // Anchor in the gap; a slot beyond the wall's side comes in short of it.
        let anchor = Vec2::new(10.5, 10.0);
        let s = squeeze(&cost, &grid, anchor, Vec2::new(10.5, 16.0), 0.5);
        assert!((s.y - 10.5).abs() < 1e-4, "{s}");
        // A slot in open ground stays.
        let free = Vec2::new(15.0, 10.0);
        assert_eq!(squeeze(&cost, &grid, anchor, free, 0.5), free);
        // A lone rock (one cell, then two) on the way does not pull the slot in: units walk
        // round it. A slot on the rock is pushed off it.
        for rock in [&[(14, 10)][..], &[(14, 10), (14, 11)]] {
            let mut rocky = cost.clone();
            for &(x, y) in rock {
                rocky.set(crate::Cell::new(x, y), WALL);
            }
            let behind = Vec2::new(17.5, 10.5);
            assert_eq!(squeeze(&rocky, &grid, anchor, behind, 0.5), behind);
            let on = squeeze(&rocky, &grid, anchor, Vec2::new(14.5, 10.5), 0.4);
            assert!(crate::centre_is_open(&rocky, &grid, on), "{on}");
        }
        // Three cells in a row are a wall, not a rock.
        let mut wall = cost.clone();
        for y in 9..12 {
            wall.set(crate::Cell::new(14, y), WALL);
        }
        let s = squeeze(&wall, &grid, anchor, Vec2::new(17.5, 10.5), 0.5);
        assert!(s.x < 14.0, "{s}");
    }

    #[test]
    fn slots_squeezed_onto_one_place_spread_to_free_cells_of_a_pocket() {
        // A pocket 5 cells wide and 6 deep, opening south into a corridor 3 wide, on maps of
        // several sizes: a box of up to 20 slots laid about an anchor deep in the pocket
        // squeezes many onto the pocket's walls; spread, no two are nearer than
        // `SLOTS_APART` spacings, each stands on an open cell, the nearest slot to the
        // anchor stays, and the result is the same every time.
        for (side, units, spacing) in [(20u32, 9usize, 1.08f32), (24, 20, 1.08), (30, 16, 1.5)] {
            let grid = Grid::new(side, side).unwrap();
            let mut cost = CostField::filled(&grid, WALL);
            let open = |cost: &mut CostField, x: u32, y: u32| cost.set(crate::Cell::new(x, y), 0);
            for y in 2..8 {
                for x in 5..10 {
                    open(&mut cost, x, y);
                }
            }
            for y in 8..side {
                for x in 6..9 {
                    open(&mut cost, x, y);
                }
            }
            let anchor = Vec2::new(7.5, 3.5);
            let offsets = slot_offsets(&Shape::Box, units, spacing);
            let mut targets: Vec<Vec2> = (offsets.iter())
                .map(|&o| squeeze(&cost, &grid, anchor, anchor + to_world(o, Vec2::Y), 0.45))
                .collect();
            let nearest = (0..units)
                .min_by(|&a, &b| offsets[a].length().total_cmp(&offsets[b].length()))
                .unwrap();
            let kept = targets[nearest];
            let squeezed = targets.clone();
            let mut again = targets.clone();
            spread_slots(&cost, &grid, anchor, &offsets, &mut targets, spacing);
            let moved = (targets.iter().zip(&squeezed))
                .filter(|(a, b)| a != b)
                .count();
            assert!(
                units < 16 || moved > 0,
                "{side}, {units}: the case spreads nothing"
            );
            spread_slots(&cost, &grid, anchor, &offsets, &mut again, spacing);
            assert_eq!(targets, again, "deterministic");
            assert_eq!(targets[nearest], kept);
            for (i, a) in targets.iter().enumerate() {
                assert!(
                    crate::centre_is_open(&cost, &grid, *a),
                    "{side}: slot {i} at {a}"
                );
                for b in &targets[i + 1..] {
                    assert!(
                        a.distance(*b) >= SLOTS_APART * spacing - 1e-4,
                        "{side}, {units}: {a} and {b}"
                    );
                }
            }
        }
    }

    #[test]
    fn step_toward_walks_open_cells_to_the_point_or_says_there_is_no_walk() {
        // Maps of several sizes with a fifth to a third of their cells walled at random:
        // from every open cell within the reach of a point, stepping the way it gives
        // (from cell centre to cell centre) moves to a neighbouring open cell without
        // cutting a corner and reaches the point's cell in fewer steps than the box has
        // cells; where it gives no way, a flood over open cells inside the box never
        // reaches the point's cell.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut no_way = 0;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for (side, walls, reach) in [(12u32, 5u64, 4u32), (20, 4, 6), (16, 3, 16)] {
            let grid = Grid::new(side, side).unwrap();
            let mut cost = CostField::filled(&grid, crate::OPEN);
            for y in 0..side {
                for x in 0..side {
                    if next() % walls == 0 {
                        cost.set(crate::Cell::new(x, y), WALL);
                    }
                }
            }
            let to = (i64::from(side) / 2, i64::from(side) / 2);
            cost.set(crate::Cell::new(to.0 as u32, to.1 as u32), crate::OPEN);
            let open = |x: i64, y: i64| cost.get_or_wall(x, y) != WALL;
            let centre = |c: (i64, i64)| grid.cell_centre(crate::Cell::new(c.0 as u32, c.1 as u32));
            let point = centre(to) + Vec2::new(0.2, -0.1);
            let r = i64::from(reach);
            let in_box = |c: (i64, i64)| (c.0 - to.0).abs() <= r && (c.1 - to.1).abs() <= r;
            let (mut walked, mut none) = (0, 0);
            for y in 0..i64::from(side) {
                for x in 0..i64::from(side) {
                    if !open(x, y) || !in_box((x, y)) || (x, y) == to {
                        continue;
                    }
                    let mut at = (x, y);
                    let mut steps = 0;
                    match step_toward(&cost, &grid, centre(at), point, reach) {
                        None => {
                            // Flood from the start within the box: the point is not in it.
                            let mut seen = vec![at];
                            let mut i = 0;
                            while i < seen.len() {
                                let c = seen[i];
                                i += 1;
                                for (dx, dy) in [(1, 0), (-1, 0), (0, 1), (0, -1)] {
                                    let n = (c.0 + dx, c.1 + dy);
                                    if open(n.0, n.1) && in_box(n) && !seen.contains(&n) {
                                        seen.push(n);
                                    }
                                }
                            }
                            assert!(!seen.contains(&to), "{side}: no way from {at:?}");
                            none += 1;
                        }
                        Some(_) => {
                            while at != to {
                                let way = step_toward(&cost, &grid, centre(at), point, reach)
                                    .expect("a way once found stays found");
                                let n = crate::cell_coords(&grid, centre(at) + way * 1.2);
                                let (dx, dy) = (n.0 - at.0, n.1 - at.1);
                                assert!(dx.abs() <= 1 && dy.abs() <= 1 && open(n.0, n.1));
                                assert!(
                                    dx == 0
                                        || dy == 0
                                        || (open(at.0 + dx, at.1) && open(at.0, at.1 + dy))
                                );
                                at = n;
                                steps += 1;
                                assert!(steps <= (2 * r + 1) * (2 * r + 1), "{side}: loops");
                            }
                            walked += 1;
                        }
                    }
                }
            }
            assert!(walked > 10, "{side}: {walked} walked");
            no_way += none;
        }
        assert!(no_way > 0, "the family has cells with no way");
        // From the point's own cell, straight to it; off the map or in a wall, no way.
        let grid = Grid::new(8, 8).unwrap();
        let mut cost = CostField::filled(&grid, crate::OPEN);
        let p = Vec2::new(3.5, 3.5);
        assert_eq!(
            step_toward(&cost, &grid, Vec2::new(3.2, 3.5), p, 4),
            Some(Vec2::X)
        );
        assert_eq!(step_toward(&cost, &grid, Vec2::new(-3.0, 3.5), p, 4), None);
        cost.set(crate::Cell::new(6, 6), WALL);
        assert_eq!(step_toward(&cost, &grid, Vec2::new(6.5, 6.5), p, 4), None);
    }

    #[test]
    fn a_column_ranks_its_units_by_the_callers_order() {
        // A column of three facing +y; units ranked by a key that runs against the facing
        // (a corridor bent back on itself): the unit with the largest key takes the front.
        let offsets = slot_offsets(&Shape::Line { width: 1 }, 3, 1.0);
        let units = [
            (7, Vec2::new(0.0, 5.0), -3.0),
            (8, Vec2::new(0.0, 0.0), -1.0),
            (9, Vec2::new(0.0, -5.0), -2.0),
        ];
        let a = assign_slots_ranked(&units, &offsets, Vec2::ZERO, Vec2::Y);
        assignment_is_a_matching(&a, 3, 3);
        assert_eq!(a, vec![(7, 2), (8, 0), (9, 1)]);
        // Ranked by the facing, the same units take the slots the other way round.
        let plain: Vec<(u32, Vec2)> = units.iter().map(|&(id, p, _)| (id, p)).collect();
        let b = assign_slots(&plain, &offsets, Vec2::ZERO, Vec2::Y);
        assert_eq!(b, vec![(7, 0), (8, 1), (9, 2)]);
    }

    #[test]
    fn turning_is_bounded() {
        let h = turn_toward(Vec2::X, Vec2::Y, 0.1);
        assert!((libm::atan2f(h.y, h.x) - 0.1).abs() < 1e-5);
        let h = turn_toward(Vec2::X, -Vec2::Y, 0.1);
        assert!((libm::atan2f(h.y, h.x) + 0.1).abs() < 1e-5);
        assert_eq!(
            turn_toward(Vec2::X, Vec2::new(1.0, 0.01).normalize(), 0.1),
            Vec2::new(1.0, 0.01).normalize()
        );
    }

    #[test]
    fn orders_with_bad_numbers_are_refused() {
        let order = |shape, spacing, facing| FormationOrder {
            shape,
            spacing,
            facing,
        };
        assert!(order(Shape::Box, None, None).validate().is_ok());
        assert_eq!(
            order(Shape::Line { width: 0 }, None, None).validate(),
            Err(FormationError::ZeroWidth)
        );
        assert!(order(Shape::Box, Some(f32::NAN), None).validate().is_err());
        assert!(order(Shape::Box, Some(0.0), None).validate().is_err());
        assert!(
            order(Shape::Box, None, Some(Vec2::ZERO))
                .validate()
                .is_err()
        );
        assert!(order(Shape::Custom(vec![]), None, None).validate().is_err());
        assert!(matches!(
            order(Shape::Custom(vec![Vec2::ZERO, Vec2::INFINITY]), None, None).validate(),
            Err(FormationError::Slot { index: 1, .. })
        ));
    }
}
