//! Stage `fill_goals` (SPEC §11): for every group whose goal is an area (more than one
//! cell), which of its cells to fill next, from where its units rested as the frame began
//! (the rules: `horde_core::GoalFill`). Steering sends the group's units that stand in the
//! area there.

use horde_core::{GoalFill, Layer};

use crate::frame::FrameData;
use crate::job_graph::StageContext;

/// Per group (by index), the fill of its goal area on the ground layer's terrain (`None`:
/// a one-cell goal).
#[derive(Clone, Debug, Default)]
pub struct GoalFills {
    per_group: Vec<Option<GoalFill>>,
}

impl GoalFills {
    /// The fill of group `group`'s goal, if it is an area.
    #[must_use]
    pub fn get(&self, group: u16) -> Option<&GoalFill> {
        self.per_group
            .get(usize::from(group))
            .and_then(Option::as_ref)
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
    fills.per_group.resize(groups.len(), None);
    for (g, (group, fill)) in groups.list.iter().zip(&mut fills.per_group).enumerate() {
        if !fill.as_ref().is_some_and(|f| f.is_for(&group.goal, cost)) {
            *fill = GoalFill::new(&group.goal, cost);
        }
        if let Some(fill) = fill {
            let large = neighbours.large.as_ref().map_or(&[][..], |l| &l.units[..]);
            let resting = neighbours
                .units
                .iter()
                .chain(large)
                .filter(|u| u.at_rest && usize::from(u.group) == g)
                .map(|u| (u.pos, u.radius));
            fill.update(grid, resting);
        }
    }
}
