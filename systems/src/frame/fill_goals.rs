//! Stage `fill_goals` (docs/behaviour.md, "Bodies and crowds"): for every group whose goal is an
//! area (more than one cell), which of its cells to fill next, from where its units rested as the
//! frame began (the rules: `horde_core::GoalFill`). Steering sends the group's units that stand in
//! the area there. A group's units of each size class have a fill of their own, made on
//! their class's ground costs (docs/behaviour.md, "Unit sizes"): a big unit is sent only to
//! cells its body can centre on; every fill counts the army's resting units of all sizes.

use horde_core::{CostField, GoalFill, GoalSet, Layer, MAX_SIZE_CLASSES, Map};

use crate::frame::FrameData;
use crate::groups::Group;
use crate::job_graph::StageContext;

/// Per group (by index) and size class, the fill of its goal area on the ground layer's
/// terrain for that class (`None`: a one-cell goal, or no unit of the class).
#[derive(Clone, Debug, Default)]
pub struct GoalFills {
    /// Per group and class: the goal change it was built for, and the fill.
    per_group: Vec<[(u64, Option<GoalFill>); MAX_SIZE_CLASSES as usize]>,
}

/// The costs class `class`'s fill is made on: the ground layer's class cost field (class 0:
/// the ground layer's own), once the map has it.
fn fill_cost(map: &Map, class: u8) -> Option<&CostField> {
    map.prepared_class_cost_field(Layer::Ground, class)
}

/// A group's fills before any is built: no goal change is built for yet.
fn unbuilt() -> [(u64, Option<GoalFill>); MAX_SIZE_CLASSES as usize] {
    std::array::from_fn(|_| (u64::MAX, None))
}

impl GoalFills {
    /// What a snapshot saves of group `group`'s fills: per size class, the taken cells of
    /// its last search, if the fill is still the one for `group`'s goal and `map`'s terrain
    /// (else the next frame rebuilds it, in the saved run as in the restored one).
    pub(crate) fn saved_searches(
        &self,
        index: usize,
        group: &Group,
        map: &Map,
    ) -> Vec<(u8, Vec<u32>)> {
        let Some(fills) = self.per_group.get(index) else {
            return Vec::new();
        };
        (0..MAX_SIZE_CLASSES)
            .zip(fills)
            .filter_map(|(class, (built_for, fill))| {
                let fill = fill.as_ref()?;
                let cost = fill_cost(map, class)?;
                (*built_for == group.goal_changes && fill.is_current(cost))
                    .then(|| fill.searched().map(|t| (class, t.to_vec())))
                    .flatten()
            })
            .collect()
    }

    /// Sets group `group`'s fill for size class `class` as a snapshot saved it: built for
    /// its goal over `map` and searched with `taken` ([`GoalFill::search_with`]).
    pub(crate) fn restore(
        &mut self,
        group: u16,
        class: u8,
        goal: &GoalSet,
        map: &Map,
        taken: Vec<u32>,
    ) -> Result<(), String> {
        let cost = fill_cost(map, class)
            .ok_or_else(|| format!("a fill is saved for size class {class}, which has no units"))?;
        let mut fill = GoalFill::new(goal, cost).ok_or("a fill is saved for a one-cell goal")?;
        fill.search_with(taken)?;
        let g = usize::from(group);
        if self.per_group.len() <= g {
            self.per_group.resize_with(g + 1, unbuilt);
        }
        let slot = self.per_group[g]
            .get_mut(usize::from(class))
            .ok_or_else(|| format!("size class {class} does not exist"))?;
        // Restored groups start with no goal changes.
        *slot = (0, Some(fill));
        Ok(())
    }

    /// The fill of group `group`'s goal for its units of size class `class`, if the goal is
    /// an area.
    #[must_use]
    pub fn get(&self, group: u16, class: u8) -> Option<&GoalFill> {
        self.per_group
            .get(usize::from(group))
            .and_then(|fills| fills.get(usize::from(class)))
            .and_then(|(_, f)| f.as_ref())
    }
}

/// Brings every group's fills up to date with its goal, the terrain and the resting units.
pub(crate) fn fill_goals(data: &FrameData, _ctx: &StageContext<'_>) {
    let groups = data.groups.read();
    let map = data.map.read();
    let neighbours = data.neighbours.read();
    let mut fills = data.goal_fills.write();
    let grid = map.grid();
    fills.per_group.resize_with(groups.len(), unbuilt);
    for (g, (group, per_class)) in groups.list.iter().zip(&mut fills.per_group).enumerate() {
        for (class, (built_for, fill)) in (0..MAX_SIZE_CLASSES).zip(per_class) {
            let has_units = Layer::ALL.iter().any(|&l| group.field(l, class).is_some());
            let Some(cost) = fill_cost(&map, class).filter(|_| has_units) else {
                *fill = None;
                *built_for = u64::MAX;
                continue;
            };
            let current = *built_for == group.goal_changes
                && fill.as_ref().is_none_or(|f| f.is_current(cost));
            if !current {
                *fill = GoalFill::new(&group.goal, cost);
                *built_for = group.goal_changes;
            }
            if let Some(fill) = fill {
                // The area takes the resting units of every group sent to it.
                let army = groups.army(g as u16);
                let resting = neighbours
                    .resting
                    .iter()
                    .filter(|&&(a, ..)| a == army)
                    .map(|&(_, pos, radius)| (pos, radius));
                fill.update(grid, resting);
            }
        }
    }
}
