//! Exclusive stage `follow_targets` (docs/behaviour.md, "Unit targets"): each group that
//! follows a unit has its goal moved to where the unit stands (as
//! [`crate::Horde::set_group_goal`] would), and stops when the unit is gone or none of the
//! group's units can walk to it. Also [`FrameData::set_goal`], the goal change it and
//! `set_group_goal` share.

use glam::Vec2;
use hecs::World;
use horde_core::{
    Agent, Cell, FieldKey, GoalSet, GroupId, Layer, MAX_SIZE_CLASSES, Position, Steering, UnitId,
};

use crate::SimError;
use crate::frame::FrameData;
use crate::groups::{TargetLoss, TargetState};
use crate::job_graph::{Next, StageContext};

impl FrameData {
    /// Gives `group` the goal `goal` (checked by the caller): its fields take the new goal,
    /// its units at rest set off again and its army before and after the change wakes.
    pub(crate) fn set_goal(
        &mut self,
        world: &mut World,
        group: GroupId,
        goal: GoalSet,
    ) -> Result<(), SimError> {
        let map = self.map.get_mut();
        let fields = self.fields.get_mut();
        let groups = self.groups.get_mut();
        groups.group_mut(group)?;
        for (class, layer) in (0..MAX_SIZE_CLASSES).flat_map(|c| Layer::ALL.map(|l| (c, l))) {
            let Some(old) = groups.list[usize::from(group.0)].field(layer, class) else {
                continue;
            };
            let key = FieldKey::sized(goal.clone(), layer, class);
            // A field only this group follows takes the new goal in place, keeping its
            // full-map buffers: a goal that moves every frame allocates nothing.
            let shared = (groups.list.iter().enumerate())
                .any(|(i, g)| i != usize::from(group.0) && g.follows(old));
            let id = if shared {
                fields.request(key, map)?
            } else {
                fields.rekey(old, key, map)?
            };
            // A new field for a goal that moved (another group shared the old one) is built
            // only as far as its followers need, as a rekeyed one is.
            fields.mark_moved(id);
            *groups.list[usize::from(group.0)].slot_mut(layer, class) = Some(id);
        }
        // The group's army before and after the change wakes: its rest order changes.
        let old_goal = &groups.list[usize::from(group.0)].goal;
        let wakes: Vec<bool> = (groups.list.iter())
            .map(|g| g.goal == *old_goal || g.goal == goal)
            .collect();
        groups.list[usize::from(group.0)].goal = goal;
        groups.list[usize::from(group.0)].goal_changes += 1;
        groups.list[usize::from(group.0)].goal_frame = self.clock.frame;
        groups.refresh_armies();
        // Fields no group follows any more are dropped: a goal that moves every frame
        // ("chase the player") must not grow the cache without bound.
        let groups = &self.groups.get_mut().list;
        fields.retain(|id, _| groups.iter().any(|g| g.follows(id)));
        for (agent, steering) in world.query_mut::<(&Agent, &mut Steering)>() {
            if agent.group == group {
                steering.set_off();
            }
            if wakes.get(usize::from(agent.group.0)) == Some(&true) {
                steering.wake();
            }
        }
        Ok(())
    }
}

/// Moves the goal of every group that follows a unit to where that unit stands; a group
/// whose unit is gone or out of reach stops.
pub(crate) fn follow_targets(data: &mut FrameData, _ctx: &StageContext<'_>) -> Next {
    let followed: Vec<(GroupId, UnitId)> = (data.groups.get_mut().list.iter().enumerate())
        .filter_map(|(g, group)| Some((GroupId(g as u16), group.target?.unit)))
        .collect();
    if followed.is_empty() {
        return Next::Continue;
    }
    puffin::profile_scope!("follow_targets");
    let mut world = std::mem::take(&mut data.world);
    let result = follow(data, &mut world, &followed);
    data.world = world;
    if let Err(e) = result {
        data.housekeeping.failure = Some(e);
        return Next::EndFrame;
    }
    Next::Continue
}

fn follow(
    data: &mut FrameData,
    world: &mut World,
    followed: &[(GroupId, UnitId)],
) -> Result<(), SimError> {
    // Where each followed unit stands (one pass over the units); quarantined units have no
    // `Agent` and count as gone.
    let mut wanted: Vec<u32> = followed.iter().map(|&(_, u)| u.0).collect();
    wanted.sort_unstable();
    wanted.dedup();
    let mut found: Vec<Option<Vec2>> = vec![None; wanted.len()];
    for (id, pos, _) in world.query_mut::<(&UnitId, &Position, &Agent)>() {
        if let Ok(i) = wanted.binary_search(&id.0) {
            found[i] = Some(pos.0);
        }
    }
    for &(group, unit) in followed {
        let at = wanted.binary_search(&unit.0).ok().and_then(|i| found[i]);
        let loss = match at {
            None => Some(TargetLoss::Gone),
            Some(_) if out_of_reach(data, world, group) => Some(TargetLoss::Unreachable),
            Some(_) => None,
        };
        if let Some(why) = loss {
            stop(data, world, group, unit, why)?;
            continue;
        }
        // A target at a position that is not finite is checked (and quarantined) by
        // `check_units`; until then the group keeps its goal.
        let Some(at) = at.filter(|p| p.is_finite()) else {
            continue;
        };
        let (cell, goal) = {
            let map = data.map.get_mut();
            let cell = map.grid().clamped_cell_at(at);
            let g = &data.groups.get_mut().list[usize::from(group.0)];
            let distance = g.target.map_or(0.0, |t| t.distance);
            let in_formation = data.formations.get_mut().get(group.0).is_some();
            let same = g.target_seen.is_some_and(|(c, _)| c == cell);
            let goal = (!same).then(|| {
                if in_formation {
                    GoalSet::single(cell)
                } else {
                    around(map, cell, distance / map.grid().cell_size())
                }
            });
            (cell, goal)
        };
        if let Some(goal) = goal {
            data.set_goal(world, group, goal)?;
        }
        let g = &mut data.groups.get_mut().list[usize::from(group.0)];
        g.target_seen = Some((cell, at));
        g.target_state = TargetState::Following(unit);
    }
    Ok(())
}

/// The open cells (open to ground or hover units) within `reach` cells of `centre`, at most
/// [`MAX_AROUND`] cells: a blob that follows a unit gathers there. `centre` itself is always
/// one.
fn around(map: &horde_core::Map, centre: Cell, reach: f32) -> GoalSet {
    let reach = reach.clamp(0.0, MAX_AROUND);
    let r = reach.ceil() as i64;
    let cells = (-r..=r)
        .flat_map(|dy| (-r..=r).map(move |dx| (dx, dy)))
        .filter(|&(dx, dy)| ((dx * dx + dy * dy) as f32) <= reach * reach)
        .filter_map(|(dx, dy)| {
            let (x, y) = (i64::from(centre.x) + dx, i64::from(centre.y) + dy);
            let inside = (0..i64::from(map.width())).contains(&x)
                && (0..i64::from(map.height())).contains(&y);
            inside.then(|| Cell::new(x as u32, y as u32))
        })
        .filter(|&c| c == centre || map.is_open_underfoot(c));
    GoalSet::new(cells).unwrap_or_else(|_| GoalSet::single(centre))
}

/// The most cells from the followed unit a blob's goal area reaches (a distance of up to
/// 4096 is allowed; a goal area that wide would be rebuilt every time the unit moves on).
const MAX_AROUND: f32 = 64.0;

/// Whether none of `group`'s units can walk to its goal: its flat field (once built) holds
/// no distance at any of their cells. Without flat fields (hierarchical navigation) a
/// group never counts as out of reach here.
fn out_of_reach(data: &mut FrameData, world: &mut World, group: GroupId) -> bool {
    let map = data.map.get_mut();
    let fields = data.fields.get_mut();
    let groups = data.groups.get_mut();
    let Some(g) = groups.get(group.0) else {
        return false;
    };
    let grid = map.grid();
    let mut any = false;
    for (pos, agent) in world.query_mut::<(&Position, &Agent)>() {
        if agent.group != group {
            continue;
        }
        let class = data.config.size_class(agent.radius, grid.cell_size());
        let Some(field) = g.field(agent.layer, class).map(|id| fields.get(id)) else {
            return false;
        };
        if field.built_from().is_none() {
            return false;
        }
        any = true;
        let reached = grid
            .cell_at(pos.0)
            .and_then(|c| field.integration().distance(c))
            .is_some();
        if reached {
            return false;
        }
    }
    any
}

/// `group` stops following `unit`: its goal becomes the cells its units stand on, so that
/// they rest where they are.
fn stop(
    data: &mut FrameData,
    world: &mut World,
    group: GroupId,
    unit: UnitId,
    why: TargetLoss,
) -> Result<(), SimError> {
    let cells = {
        let map = data.map.get_mut();
        let grid = map.grid();
        world
            .query_mut::<(&Position, &Agent)>()
            .into_iter()
            .filter(|(pos, agent)| agent.group == group && pos.0.is_finite())
            .map(|(pos, _)| grid.clamped_cell_at(pos.0))
            .filter(|&c| map.is_open_underfoot(c))
            .collect::<Vec<Cell>>()
    };
    if let Ok(goal) = GoalSet::new(cells) {
        data.set_goal(world, group, goal)?;
    }
    data.groups.get_mut().list[usize::from(group.0)].end_following(TargetState::Lost { unit, why });
    Ok(())
}
