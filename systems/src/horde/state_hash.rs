//! The state hash: what lockstep peers and replays compare, frame by frame.

use hecs::World;
use horde_core::Layer;

use crate::Horde;
use crate::unit::{QuarantinedComponents, UnitComponents, UnitRef};

/// The state hash of [`Horde::state_hash`]: FNV-1a over, in this order,
///
/// 1. every simulated unit's state in [`UnitId`](horde_core::UnitId) order (id, position,
///    velocity, external velocity, stun, heading, avoidance side, arrival);
/// 2. every quarantined unit in id order (id, the frame it was quarantined in, position,
///    velocity, external velocity, stun, its parameters), so a world of quarantined units
///    does not hash like an empty one;
/// 3. the terrain ([`Map::terrain_digest`](horde_core::Map::terrain_digest)) and the cost table;
/// 4. every group's goal cells and the frame its goal was set;
/// 5. every group's unit target and where it stands with it, for the groups that have or
///    had one; every group's formation, if any group has one (its group, whether it arrived, its
///    width, anchor, heading, spacing and which unit holds which slot);
/// 6. every force field, pending or live, with its id and every value
///    ([`ForceManager::entries`](horde_core::ForceManager::entries)), and the next force id.
///
/// So a replay edited to add a terrain edit, a goal change or a force field that moves
/// nobody no longer matches its recorded hashes.
#[must_use]
pub fn state_hash(horde: &Horde, world: &World) -> u64 {
    let mut h = UnitHasher::default();
    units_hash(world, &mut h);
    let map = horde.data.map.read();
    h.word(u64::from(map.width()));
    h.word(u64::from(map.height()));
    h.word(map.terrain_digest());
    for t in horde_core::Terrain::ALL {
        for l in Layer::ALL {
            h.byte(map.cost_table().cost(t, l));
        }
    }
    let groups = horde.data.groups.read();
    h.word(groups.list.len() as u64);
    for g in &groups.list {
        h.word(g.goal_frame);
        h.word(g.goal.cells().len() as u64);
        for c in g.goal.cells() {
            h.u32(c.x);
            h.u32(c.y);
        }
    }
    // Targets only where some group has or had one, as formations below.
    for (i, g) in groups.list.iter().enumerate() {
        if g.target.is_some() || g.target_state != crate::TargetState::None {
            let (state, unit) = g.target_state.code();
            h.word(i as u64);
            h.byte(state);
            h.u32(unit.0);
            h.u32(g.target.map_or(0, |t| t.distance.to_bits()));
        }
    }
    // Formations only where some group has one, so that hashes of runs without them stay
    // what they were.
    let formations = horde.data.formations.read();
    for (g, f) in formations.iter() {
        h.word(u64::from(g));
        h.byte(u8::from(f.arrived));
        h.u32(f.width);
        for w in [f.anchor.x, f.anchor.y, f.heading.x, f.heading.y, f.spacing] {
            h.u32(w.to_bits());
        }
        for &(id, slot) in &f.slots {
            h.u32(id);
            h.u32(slot);
        }
    }
    let forces = horde.data.forces.read();
    h.word(forces.next_id().get());
    for (id, f, live) in forces.entries() {
        h.word(id.get());
        h.byte(u8::from(live));
        let (kind, a, b) = match f.kind() {
            horde_core::ForceKind::Explosion => (0, 0, 0),
            horde_core::ForceKind::Attractor => (1, 0, 0),
            horde_core::ForceKind::Push { direction } => {
                (2, direction.x.to_bits(), direction.y.to_bits())
            }
            horde_core::ForceKind::Vortex { clockwise } => (3, u32::from(clockwise), 0),
        };
        for w in [
            kind,
            a,
            b,
            f.position().x.to_bits(),
            f.position().y.to_bits(),
            f.radius().to_bits(),
            f.strength().to_bits(),
            f.duration().to_bits(),
            f.elapsed().to_bits(),
            f.falloff(),
            f.time_decay().to_bits(),
            u32::from(f.affects_controllable()),
        ] {
            h.u32(w);
        }
    }
    h.0
}

/// FNV-1a, byte by byte.
struct UnitHasher(u64);

impl Default for UnitHasher {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl UnitHasher {
    #[inline]
    fn byte(&mut self, b: u8) {
        self.0 ^= u64::from(b);
        self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
    }

    #[inline]
    fn u32(&mut self, w: u32) {
        for b in w.to_le_bytes() {
            self.byte(b);
        }
    }

    fn word(&mut self, w: u64) {
        for b in w.to_le_bytes() {
            self.byte(b);
        }
    }

    /// Rows of words keyed by unit id, in id order, after their count.
    fn rows<const N: usize>(&mut self, mut rows: Vec<(u32, [u32; N])>) {
        rows.sort_unstable();
        self.word(rows.len() as u64);
        for (id, words) in rows {
            for w in std::iter::once(id).chain(words) {
                self.u32(w);
            }
        }
    }
}

/// Parts 1 and 2 of [`state_hash`]: the simulated units, then the quarantined ones.
fn units_hash(world: &World, h: &mut UnitHasher) {
    let rows: Vec<(u32, [u32; 21])> = world
        .query::<UnitComponents<'_>>()
        .iter()
        .map(|parts| {
            let UnitRef {
                id,
                position: p,
                velocity: v,
                external: e,
                stun: s,
                steering: st,
                ..
            } = UnitRef::of(parts);
            (
                id.0,
                [
                    p.0.x.to_bits(),
                    p.0.y.to_bits(),
                    v.0.x.to_bits(),
                    v.0.y.to_bits(),
                    e.0.x.to_bits(),
                    e.0.y.to_bits(),
                    s.0.to_bits(),
                    st.heading.x.to_bits(),
                    st.heading.y.to_bits(),
                    st.avoid_side as u32,
                    u32::from(st.arrived),
                    u32::from(st.settled),
                    st.stall.to_bits(),
                    st.anchor.x.to_bits(),
                    st.anchor.y.to_bits(),
                    u32::from(st.yielding.to_u8()),
                    u32::from(st.detour),
                    // Frames past u32::MAX wrap: a hash, not a record.
                    st.arrived_frame.map_or(u32::MAX, |f| f as u32),
                    st.still.to_bits(),
                    st.asleep.map_or(u32::MAX, |a| a.x.to_bits()),
                    st.asleep.map_or(u32::MAX, |a| a.y.to_bits()),
                ],
            )
        })
        .collect();
    h.rows(rows);
    let quarantined: Vec<(u32, [u32; 15])> = world
        .query::<QuarantinedComponents<'_>>()
        .iter()
        .map(|(id, p, v, e, s, m, q)| {
            (
                id.0,
                [
                    q.frame as u32,
                    p.0.x.to_bits(),
                    p.0.y.to_bits(),
                    v.0.x.to_bits(),
                    v.0.y.to_bits(),
                    e.0.x.to_bits(),
                    e.0.y.to_bits(),
                    s.0.to_bits(),
                    m.0.to_bits(),
                    q.agent.radius.to_bits(),
                    q.agent.max_speed.to_bits(),
                    q.agent.turn_rate.to_bits(),
                    q.agent.layer as u32,
                    u32::from(q.agent.group.0),
                    u32::from(q.agent.controllable),
                ],
            )
        })
        .collect();
    h.rows(quarantined);
}
