//! [`Groups`]: each group's goal, and the field each of its layers follows.

use glam::Vec2;
use horde_core::{Cell, FieldId, GoalSet, Layer, MAX_SIZE_CLASSES, UnitId, UnitTarget};

/// Where a group stands with the unit it follows ([`Group::target`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum TargetState {
    /// It follows no unit.
    #[default]
    None,
    /// It follows this unit.
    Following(UnitId),
    /// It followed this unit until it could not, and stopped where it stood.
    Lost {
        /// The unit.
        unit: UnitId,
        /// Why.
        why: TargetLoss,
    },
}

impl TargetState {
    /// Its code, as snapshots save it and the C ABI reads it: 0 none, 1 following, 2 lost
    /// (gone), 3 lost (out of reach); and the unit (0 with none).
    #[must_use]
    pub fn code(self) -> (u8, UnitId) {
        match self {
            Self::None => (0, UnitId(0)),
            Self::Following(unit) => (1, unit),
            Self::Lost {
                unit,
                why: TargetLoss::Gone,
            } => (2, unit),
            Self::Lost {
                unit,
                why: TargetLoss::Unreachable,
            } => (3, unit),
        }
    }

    /// The state of code `code` ([`Self::code`]) about `unit`; `None` for a code past 3.
    #[must_use]
    pub fn from_code(code: u8, unit: UnitId) -> Option<Self> {
        Some(match code {
            0 => Self::None,
            1 => Self::Following(unit),
            2 => Self::Lost {
                unit,
                why: TargetLoss::Gone,
            },
            3 => Self::Lost {
                unit,
                why: TargetLoss::Unreachable,
            },
            _ => return None,
        })
    }
}

/// Why a group stopped following a unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetLoss {
    /// The unit left the simulation (despawned, or quarantined).
    Gone,
    /// None of the group's units can walk to it.
    Unreachable,
}

/// One group of units sharing a goal.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    /// Where the group goes.
    pub goal: GoalSet,
    /// The field each layer of the group follows, once units of that layer exist (for size
    /// class 0; see `sized` for the others).
    pub fields: [Option<FieldId>; Layer::COUNT],
    /// The field units of size class `c >= 1` on each layer follow, at `sized[c - 1]`, once
    /// such units exist (docs/behaviour.md, "Unit sizes").
    pub sized: [[Option<FieldId>; Layer::COUNT]; MAX_SIZE_CLASSES as usize - 1],
    /// How many times the goal was changed (what is derived from the goal is rebuilt when
    /// this moves on).
    pub(crate) goal_changes: u64,
    /// The frame counter when the goal was last set: arrival times count from there.
    pub(crate) goal_frame: u64,
    /// The unit it follows, if any (docs/behaviour.md, "Unit targets").
    pub target: Option<UnitTarget>,
    /// Where it stands with that unit.
    pub target_state: TargetState,
    /// The followed unit's cell its goal was last set for, and where the unit stood as the
    /// frame began.
    pub(crate) target_seen: Option<(Cell, Vec2)>,
}

impl Group {
    /// The group no longer follows a unit, and says `state` about it.
    pub(crate) fn end_following(&mut self, state: TargetState) {
        self.target = None;
        self.target_seen = None;
        self.target_state = state;
    }

    /// The slot of the field units of `layer` and size class `class` follow.
    pub(crate) fn slot_mut(&mut self, layer: Layer, class: u8) -> &mut Option<FieldId> {
        match class {
            0 => &mut self.fields[layer as usize],
            c => &mut self.sized[usize::from(c) - 1][layer as usize],
        }
    }

    /// The field units of `layer` and size class `class` follow, if any.
    #[must_use]
    pub fn field(&self, layer: Layer, class: u8) -> Option<FieldId> {
        match class {
            0 => self.fields[layer as usize],
            c => self
                .sized
                .get(usize::from(c) - 1)
                .and_then(|s| s[layer as usize]),
        }
    }

    /// Whether the group follows field `id` (for any layer and class).
    #[must_use]
    pub fn follows(&self, id: FieldId) -> bool {
        self.fields.contains(&Some(id)) || self.sized.iter().any(|s| s.contains(&Some(id)))
    }

    /// Whether some units of the group on `layer` have a field (of any class).
    #[must_use]
    pub fn has_layer(&self, layer: Layer) -> bool {
        (0..MAX_SIZE_CLASSES).any(|c| self.field(layer, c).is_some())
    }
}

/// Every group, indexed by [`horde_core::GroupId`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Groups {
    pub(crate) list: Vec<Group>,
    /// Per group, its army: the lowest index of the groups that share its goal. Groups sent
    /// to one goal move as one army: their resting units are friends to each other's (they
    /// settle against them and fill the goal area together). Kept by
    /// [`Groups::refresh_armies`] whenever a goal is set.
    armies: Vec<u16>,
}

impl Groups {
    /// The group with index `id`.
    #[must_use]
    pub fn get(&self, id: u16) -> Option<&Group> {
        self.list.get(usize::from(id))
    }

    /// Number of groups.
    #[must_use]
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether there is no group.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The group `id`, to change it.
    pub(crate) fn group_mut(
        &mut self,
        id: horde_core::GroupId,
    ) -> Result<&mut Group, horde_core::SpawnError> {
        self.list
            .get_mut(usize::from(id.0))
            .ok_or(horde_core::SpawnError::NoSuchGroup(id.0))
    }

    /// The army of group `id` (see [`Groups`]); a group that does not exist is its own.
    #[must_use]
    pub fn army(&self, id: u16) -> u16 {
        self.armies.get(usize::from(id)).copied().unwrap_or(id)
    }

    /// Recomputes every group's army after a goal was set.
    pub(crate) fn refresh_armies(&mut self) {
        let mut first: std::collections::HashMap<&GoalSet, u16> = std::collections::HashMap::new();
        self.armies = (self.list.iter().enumerate())
            .map(|(i, g)| *first.entry(&g.goal).or_insert(i as u16))
            .collect();
    }

    /// The field units of group `id` on `layer` follow (those of size class 0; see
    /// [`Self::sized_field`]).
    #[must_use]
    pub fn field(&self, id: u16, layer: Layer) -> Option<FieldId> {
        self.sized_field(id, layer, 0)
    }

    /// The field units of group `id` on `layer` and of size class `class` follow.
    #[must_use]
    pub fn sized_field(&self, id: u16, layer: Layer, class: u8) -> Option<FieldId> {
        self.get(id).and_then(|g| g.field(layer, class))
    }
}
