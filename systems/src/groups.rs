//! [`Groups`]: each group's goal, and the field each of its layers follows.

use horde_core::{FieldId, GoalSet, Layer};

/// One group of units sharing a goal.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    /// Where the group goes.
    pub goal: GoalSet,
    /// The field each layer of the group follows, once units of that layer exist.
    pub fields: [Option<FieldId>; Layer::COUNT],
    /// How many times the goal was changed (what is derived from the goal is rebuilt when
    /// this moves on).
    pub(crate) goal_changes: u64,
    /// The frame counter when the goal was last set: arrival times count from there.
    pub(crate) goal_frame: u64,
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

    /// The field units of group `id` on `layer` follow.
    #[must_use]
    pub fn field(&self, id: u16, layer: Layer) -> Option<FieldId> {
        self.get(id).and_then(|g| g.fields[layer as usize])
    }
}
