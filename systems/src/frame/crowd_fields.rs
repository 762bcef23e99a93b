//! Stage `crowd_fields` (docs/behaviour.md, "Crowds in the costs"): every [`CROWD_EVERY`]
//! frames, for every army with at least [`CROWD_FROM`] units on their way, packed (at least
//! [`PACKED_FROM`] cells half covered by them), its way to its goal
//! with its crowd in the costs (`horde_core::CrowdField`), per layer and size class of its
//! units, over a box round those units and its goal. The densities come from the frame-start
//! snapshot: the share of each cell that the army's units on their way cover, away from
//! the goal (near it they are the army arriving, not a jam to walk round). Steering sends
//! the army's units on their way along it where it turns off their field's way.
//!
//! What a field is built from (its army's box and densities) is kept, so that a snapshot can
//! save it and a restored run build the same fields. Fields built on costs the terrain has
//! changed since, or for a goal the army no longer has, are not used.

use horde_core::{Cell, CrowdField, Layer, MAX_SIZE_CLASSES, Map, Navigation};

// Fields per army in the fills' `(layer, size class)` slots.
use crate::frame::fill_goals::{CellBox, SLOTS, army_has, slot};
use crate::frame::{FrameData, Neighbours};
use crate::groups::Groups;
use crate::job_graph::StageContext;

/// Frames between two builds.
pub const CROWD_EVERY: u64 = 15;

/// The fewest units on their way for which an army gets a crowd field: the armies of 20,000
/// on `Cauldron.map` gained from it, those of 2,000 to 4,000 on the Moving AI maps lost
/// (docs/behaviour.md, "Crowds in the costs"), and the rules for gaps and goals were
/// measured without it.
pub const CROWD_FROM: u32 = 10_000;

/// The fewest cells an army's units on their way must cover at least half of for it to get
/// a crowd field: an army spread thin has room round each unit.
const PACKED_FROM: u32 = 500;

/// Cells the box reaches past the army's walking units and its goal.
const BOX_MARGIN: u32 = 16;

/// Cells round the goal's bounding box within which the army's units on their way add no
/// density: there they are the army arriving, which its fill sends to the cells it rests
/// in next. Counted, they turned the streams behind them aside along the goal's face, and
/// the blob grew from several fronts at once (docs/behaviour.md, "Crowds in the costs").
const ARRIVING_WITHIN: u32 = 32;

/// What an army's crowd fields were built from: its box (first cell, width, height) and
/// each box cell's density (the share of the cell its units on their way cover, times
/// 255), row by row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CrowdInput {
    pub min: Cell,
    pub width: u32,
    pub height: u32,
    pub density: Vec<u8>,
}

/// One army's crowd fields.
#[derive(Clone, Debug, Default)]
struct ArmyCrowd {
    /// What they were built from (`None`: none built).
    input: Option<CrowdInput>,
    /// The goal change of the army's first group they were built for.
    built_for: u64,
    /// Per `(layer, class)` slot: the field, and the version of the class's costs it was
    /// built on.
    fields: Vec<Option<(CrowdField, u64)>>,
}

/// Per army (by the index of its first group), layer and size class: its field with the
/// crowd in the costs, while it has at least [`CROWD_FROM`] units on their way.
#[derive(Clone, Debug, Default)]
pub struct CrowdFields {
    per_army: Vec<ArmyCrowd>,
}

impl CrowdFields {
    /// The field army `army` has for its units of size class `class` on `layer`, if it was
    /// built for the goal its first group has now (`goal_changes`).
    #[must_use]
    pub fn get(
        &self,
        army: u16,
        layer: Layer,
        class: u8,
        goal_changes: u64,
    ) -> Option<&CrowdField> {
        let a = self.per_army.get(usize::from(army))?;
        if a.built_for != goal_changes {
            return None;
        }
        a.fields.get(slot(layer, class))?.as_ref().map(|(f, _)| f)
    }

    /// What a snapshot saves: per army whose fields are current (built for its goal, on the
    /// costs as they are), what they were built from.
    pub(crate) fn saved(&self, groups: &Groups, map: &Map) -> Vec<(u16, CrowdInput)> {
        (self.per_army.iter().enumerate())
            .filter_map(|(a, army)| {
                let group = groups.get(a as u16)?;
                let input = army.input.as_ref()?;
                let current = army.built_for == group.goal_changes && is_current(army, map);
                current.then(|| (a as u16, input.clone()))
            })
            .collect()
    }

    /// Builds army `army`'s fields again from what a snapshot saved (restored groups start
    /// with no goal changes).
    pub(crate) fn restore(&mut self, army: u16, input: CrowdInput, groups: &Groups, map: &Map) {
        let a = usize::from(army);
        if self.per_army.len() <= a {
            self.per_army.resize_with(a + 1, ArmyCrowd::default);
        }
        let entry = &mut self.per_army[a];
        entry.built_for = 0;
        build_army(army, entry, input, groups, map);
    }
}

/// Whether every field of `army` was built on its class's costs as they are now.
fn is_current(army: &ArmyCrowd, map: &Map) -> bool {
    army.fields.iter().enumerate().all(|(s, f)| {
        f.as_ref().is_none_or(|(_, version)| {
            let (layer, class) = (Layer::ALL[s % Layer::COUNT], (s / Layer::COUNT) as u8);
            map.prepared_class_cost_field(layer, class)
                .is_some_and(|c| c.version() == *version)
        })
    })
}

/// Builds `army`'s fields from `input`, for each (layer, class) the army has units of.
fn build_army(a: u16, army: &mut ArmyCrowd, input: CrowdInput, groups: &Groups, map: &Map) {
    army.fields.clear();
    army.fields.resize(SLOTS, None);
    if let Some(group) = groups.get(a) {
        for class in 0..MAX_SIZE_CLASSES {
            for layer in Layer::ALL {
                if !army_has(groups, a, layer, class) {
                    continue;
                }
                let Some(cost) = map.prepared_class_cost_field(layer, class) else {
                    continue;
                };
                let bounds = (input.min, input.width, input.height);
                army.fields[slot(layer, class)] =
                    CrowdField::build(cost, group.goal.cells(), bounds, &input.density)
                        .map(|f| (f, cost.version()));
            }
        }
    }
    army.input = Some(input);
}

pub(crate) fn crowd_fields(data: &FrameData, ctx: &StageContext<'_>) {
    let groups = data.groups.read();
    let map = data.map.read();
    let mut crowd = data.crowd_fields.write();
    crowd.per_army.resize_with(groups.len(), ArmyCrowd::default);
    // Fields built on costs the terrain has changed since are dropped (until the next
    // build), so that no unit follows a way through a new wall.
    for army in &mut crowd.per_army {
        if !is_current(army, &map) {
            *army = ArmyCrowd::default();
        }
    }
    if data.config.navigation != Navigation::Flat || data.clock.frame % CROWD_EVERY != 0 {
        return;
    }
    let neighbours = data.neighbours.read();
    let (groups, map, neighbours) = (&*groups, &*map, &*neighbours);
    ctx.for_each_chunk_mut(&mut crowd.per_army, 1, |a, _, army| {
        let army = &mut army[0];
        *army = ArmyCrowd::default();
        let a = a as u16;
        let Some(group) = groups.get(a).filter(|_| groups.army(a) == a) else {
            return;
        };
        let coming = neighbours.coming.get(usize::from(a)).copied().unwrap_or(0);
        if coming < CROWD_FROM {
            return;
        }
        let input = input_of(a, group.goal.cells(), neighbours, map);
        if let Some(input) = input.filter(|i| packed_cells(i) >= PACKED_FROM) {
            army.built_for = group.goal_changes;
            build_army(a, army, input, groups, map);
        }
    });
}

/// How many cells of the box the army's units on their way cover at least half of: an army
/// spread thin (each unit with room round it) gets no field.
fn packed_cells(input: &CrowdInput) -> u32 {
    let packed = input.density.iter().filter(|&&d| d >= 128).count();
    u32::try_from(packed).unwrap_or(u32::MAX)
}

/// The units of army `a` on their way in the frame-start snapshot.
fn walking(n: &Neighbours, a: u16) -> impl Iterator<Item = &crate::frame::NeighbourInfo> {
    let large = n.large.as_ref().map_or(&[][..], |l| &l.units[..]);
    (n.units.iter())
        .chain(large)
        .filter(move |u| u.army == a && !u.at_rest && !u.asleep)
}

/// Army `a`'s box (round its units on their way and its goal, plus [`BOX_MARGIN`]) and the
/// densities in it: each unit farther than [`ARRIVING_WITHIN`] from the goal's bounding box
/// adds the share of its cell its disc covers, in integers (the sum does not depend on the
/// order).
fn input_of(a: u16, goal: &[Cell], n: &Neighbours, map: &Map) -> Option<CrowdInput> {
    let grid = map.grid();
    let cells = walking(n, a)
        .filter_map(|u| grid.cell_at(u.pos))
        .chain(goal.iter().copied());
    let (lo, hi) = CellBox::of(cells)?.corners();
    let goal_box = CellBox::of(goal.iter().copied());
    let min = Cell::new(
        lo.x.saturating_sub(BOX_MARGIN),
        lo.y.saturating_sub(BOX_MARGIN),
    );
    let max = Cell::new(
        (hi.x + BOX_MARGIN).min(grid.width() - 1),
        (hi.y + BOX_MARGIN).min(grid.height() - 1),
    );
    let (width, height) = (max.x - min.x + 1, max.y - min.y + 1);
    let mut density = vec![0u8; width as usize * height as usize];
    let cell_area = grid.cell_size() * grid.cell_size();
    for u in walking(n, a) {
        let Some(c) = grid.cell_at(u.pos) else {
            continue;
        };
        if goal_box.is_some_and(|b| b.chebyshev(c) <= ARRIVING_WITHIN) {
            continue;
        }
        let i = ((c.y - min.y) * width + (c.x - min.x)) as usize;
        let share = (std::f32::consts::PI * u.radius * u.radius / cell_area * 255.0)
            .round()
            .clamp(0.0, 255.0) as u32;
        density[i] = (u32::from(density[i]) + share).min(255) as u8;
    }
    Some(CrowdInput {
        min,
        width,
        height,
        density,
    })
}

#[cfg(test)]
mod tests {
    use glam::Vec2;
    use horde_core::{Cell, Grid, Map, SpatialGrid};

    use super::{ARRIVING_WITHIN, input_of};
    use crate::frame::{NeighbourInfo, Neighbours};

    /// Units on their way add their share to the density of their cell, except within
    /// `ARRIVING_WITHIN` cells of the goal's bounding box, where they are the army arriving;
    /// the box still reaches round them.
    #[test]
    fn units_arriving_at_the_goal_add_no_density() {
        let map = Map::new(Grid::new(200, 40).unwrap());
        let mut n = Neighbours::new(SpatialGrid::new(map.grid(), 1.0).unwrap());
        let walker = |x: f32| NeighbourInfo {
            pos: Vec2::new(x, 20.5),
            radius: 0.45,
            ..NeighbourInfo::default()
        };
        let goal = [Cell::new(190, 20), Cell::new(191, 21)];
        let near = 190 - ARRIVING_WITHIN;
        // Just inside the margin, just outside it, and far away.
        n.units = [near, near - 1, 20]
            .map(|x| walker(x as f32 + 0.5))
            .to_vec();
        let input = input_of(0, &goal, &n, &map).unwrap();
        let at = |x: u32| {
            let (bx, by) = (x - input.min.x, 20 - input.min.y);
            input.density[(by * input.width + bx) as usize]
        };
        assert_eq!(at(near), 0);
        assert!(at(near - 1) > 0 && at(20) > 0, "{input:?}");
        // The box still reaches round every unit on its way.
        assert!(
            input.min.x <= 20 && input.min.x + input.width > 191,
            "{input:?}"
        );
    }
}
