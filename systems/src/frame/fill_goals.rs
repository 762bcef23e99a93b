//! Stage `fill_goals` (docs/behaviour.md, "Bodies and crowds"): for every group whose goal is an
//! area (more than one cell), which of its cells to fill next, from where its units rested as the
//! frame began (the rules: `horde_core::GoalFill`). Steering sends the group's units that stand in
//! the area there.

use horde_core::{GoalFill, GoalSet, Layer, Map};

use crate::frame::FrameData;
use crate::groups::Group;
use crate::job_graph::StageContext;

/// Per group (by index), the fill of its goal area on the ground layer's terrain (`None`:
/// a one-cell goal).
#[derive(Clone, Debug, Default)]
pub struct GoalFills {
    /// Per group: the goal change it was built for, and the fill.
    per_group: Vec<(u64, Option<GoalFill>)>,
}

impl GoalFills {
    /// What a snapshot saves of group `group`'s fill: the taken cells of its last search,
    /// if the fill is still the one for `group`'s goal and `map`'s terrain (else the next
    /// frame rebuilds it, in the saved run as in the restored one).
    pub(crate) fn saved_search(&self, index: usize, group: &Group, map: &Map) -> Option<Vec<u32>> {
        let (built_for, fill) = self.per_group.get(index)?;
        let fill = fill.as_ref()?;
        (*built_for == group.goal_changes && fill.is_current(map.cost_field(Layer::Ground)))
            .then(|| fill.searched().map(<[u32]>::to_vec))
            .flatten()
    }

    /// Sets group `group`'s fill as a snapshot saved it: built for its goal over `map` and
    /// searched with `taken` ([`GoalFill::search_with`]).
    pub(crate) fn restore(
        &mut self,
        group: u16,
        goal: &GoalSet,
        map: &Map,
        taken: Vec<u32>,
    ) -> Result<(), String> {
        let mut fill = GoalFill::new(goal, map.cost_field(Layer::Ground))
            .ok_or("a fill is saved for a one-cell goal")?;
        fill.search_with(taken)?;
        let g = usize::from(group);
        if self.per_group.len() <= g {
            self.per_group.resize(g + 1, (u64::MAX, None));
        }
        // Restored groups start with no goal changes.
        self.per_group[g] = (0, Some(fill));
        Ok(())
    }

    /// The fill of group `group`'s goal, if it is an area.
    #[must_use]
    pub fn get(&self, group: u16) -> Option<&GoalFill> {
        self.per_group
            .get(usize::from(group))
            .and_then(|(_, f)| f.as_ref())
    }
}

/// Brings every group's fill up to date with its goal, the terrain and the resting units.
pub(crate) fn fill_goals(data: &FrameData, _ctx: &StageContext<'_>) {
    let groups = data.groups.read();
    let map = data.map.read();
    let neighbours = data.neighbours.read();
    let mut fills = data.goal_fills.write();
    let cost = map.cost_field(Layer::Ground);
    let grid = map.grid();
    fills.per_group.resize(groups.len(), (u64::MAX, None));
    for (g, (group, (built_for, fill))) in groups.list.iter().zip(&mut fills.per_group).enumerate()
    {
        let current =
            *built_for == group.goal_changes && fill.as_ref().is_none_or(|f| f.is_current(cost));
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
