//! Exclusive stage `check_units`, the frame's first: the units callers changed since the last
//! frame, checked before any stage sees them.
//!
//! It quarantines every unit that breaks the rules of [`crate::unit_check`] (a caller wrote an
//! impossible value into it, or gave it an id another unit has), gives a group a field on a
//! layer and size class a caller moved its units to, and wakes the sleeping units callers
//! reached (docs/behaviour.md, "Sleeping"). When no unit is awake and nothing can reach them
//! (no force field, no terrain edit) the frame ends here: it would change nothing.

use hecs::{Entity, World};
use horde_core::{Agent, FieldKey, GroupId, Layer, Quarantined, Steering, UnitId};

use super::FrameData;
use crate::SimError;
use crate::job_graph::{Next, StageContext};
use crate::unit::Memo;
use crate::unit_check::{Rules, WakeDiscs, check_world};

/// What wakes sleeping units between frames, gathered by the calls that cause it and spent
/// by the next `check_units`.
#[derive(Debug, Default)]
pub(crate) struct Wake {
    /// Every sleeping unit whose disc overlaps one of these wakes: terrain edits add one
    /// around each edited cell, `Horde::despawn` one around the unit it removed.
    pub(crate) discs: WakeDiscs,
    /// Whether the terrain changed since the last frame that ran the stages.
    pub(crate) edited: bool,
}

/// What the exclusive stages keep from frame to frame (no concurrent stage touches it).
#[derive(Debug, Default)]
pub(crate) struct Housekeeping {
    /// The id the next spawned unit gets.
    pub(crate) next_unit: u32,
    /// Scratch of the unit check (a bit per unit id).
    pub(crate) seen_ids: Vec<u64>,
    /// What callers did that wakes sleeping units.
    pub(crate) wake: Wake,
    /// The units this frame quarantined, by id.
    pub(crate) quarantined: Vec<UnitId>,
    /// Why the frame stopped, when an exclusive stage could not do its work.
    pub(crate) failure: Option<SimError>,
}

/// The stage.
pub(crate) fn check_units(data: &mut FrameData, stage: &StageContext<'_>) -> Next {
    data.housekeeping.quarantined.clear();
    data.housekeeping.failure = None;
    match check(data, stage) {
        Ok(0) if data.is_quiet() => {
            data.sleep.get_mut().awake = 0;
            Next::EndFrame
        }
        Ok(_) => Next::Continue,
        Err(e) => {
            data.housekeeping.failure = Some(e);
            Next::EndFrame
        }
    }
}

/// Checks the units; returns how many are awake.
fn check(data: &mut FrameData, stage: &StageContext<'_>) -> Result<usize, SimError> {
    let found = {
        let map = data.map.read();
        let groups = data.groups.read();
        let goal_frames: Vec<u64> = groups.list.iter().map(|g| g.goal_frame).collect();
        let rules = Rules {
            frame: data.clock.frame,
            next_unit: data.housekeeping.next_unit,
            grid: map.grid(),
            goal_frames: &goal_frames,
        };
        let config = &data.config;
        let housekeeping = &mut data.housekeeping;
        check_world(
            &mut data.world,
            &rules,
            |g, l, r| {
                let class = config.size_class(r, map.grid().cell_size());
                let has = groups.list[usize::from(g.0)].field(l, class).is_some();
                (!has).then_some(class)
            },
            &mut housekeeping.seen_ids,
            &mut housekeeping.wake.discs,
            stage,
            config.batch_size,
        )
    };
    data.housekeeping.wake.discs.clear();
    for (group, layer, class) in found.fields {
        data.ensure_field(group, layer, class)?;
    }
    let mut world = std::mem::take(&mut data.world);
    data.quarantine(&mut world, found.bad);
    data.world = world;
    Ok(found.awake)
}

impl FrameData {
    /// Whether a frame with every unit asleep would change nothing: no force field (they
    /// age, and may reach units) and no terrain edit since the stages last ran.
    pub(crate) fn is_quiet(&mut self) -> bool {
        // A followed unit may have moved: the groups that follow it move their goals.
        self.forces.get_mut().is_empty()
            && !self.housekeeping.wake.edited
            && self
                .groups
                .get_mut()
                .list
                .iter()
                .all(|g| g.target.is_none())
    }

    /// Makes sure units of `group` on `layer` and of size class `class` have a field to
    /// follow (and the map the class's cost fields of `layer` and of the ground, which
    /// goal-area fills are made on).
    pub(crate) fn ensure_field(
        &mut self,
        group: GroupId,
        layer: Layer,
        class: u8,
    ) -> Result<(), SimError> {
        let map = self.map.get_mut();
        let group = self.groups.get_mut().group_mut(group)?;
        let slot = group.slot_mut(layer, class);
        if slot.is_none() {
            map.prepare_size_class(layer, class);
            map.prepare_size_class(Layer::Ground, class);
            let key = FieldKey::sized(group.goal.clone(), layer, class);
            *group.slot_mut(layer, class) = Some(self.fields.get_mut().request(key, map)?);
        }
        Ok(())
    }

    /// Takes the units `found` out of the simulation (found non-finite by a frame, or
    /// breaking the rules before it): their [`Agent`] and [`Steering`] move into a
    /// [`Quarantined`] component, so no stage sees them again, and their cell memo goes.
    pub(crate) fn quarantine(&mut self, world: &mut World, mut found: Vec<Entity>) {
        if found.is_empty() {
            return;
        }
        found.sort_by_key(|&e| world.get::<&UnitId>(e).map_or(u32::MAX, |id| id.0));
        for entity in found {
            let Ok((agent, steering, _)) = world.remove::<(Agent, Steering, Memo)>(entity) else {
                continue;
            };
            let quarantined = Quarantined {
                frame: self.clock.frame,
                agent,
                steering,
            };
            if world.insert_one(entity, quarantined).is_ok()
                && let Ok(id) = world.get::<&UnitId>(entity)
            {
                self.housekeeping.quarantined.push(*id);
            }
        }
    }
}
