//! A [`Horde`]'s snapshots: capturing its whole state with its world's units, restoring it,
//! and telling what differs between a snapshot's run and this one.

use hecs::{Entity, World};
use horde_core::{
    ExternalForce, ForceManager, GiveWay, Layer, MAX_SIZE_CLASSES, SpatialGrid, Steering, Stun,
    UnitId, Velocity,
};

use crate::frame::{CrowdInput, Neighbours, SavedFill};
use crate::hierarchy_nav::SavedCache;
use crate::unit::{QuarantinedComponents, Unit, UnitComponents, UnitRef};
use crate::{Formation, Horde, SimError};

use crate::snapshot::record::{
    self, ConfigRecord, CrowdRecord, FillRecord, ForceEntryRecord, ForceRecord, FormationRecord,
    GroupRecord, MapRecord, OrderRecord, OriginRecord, SectorCacheRecord, SnapshotRecord,
    SpecRecord, UnitRecord, v2, vec2,
};
use crate::snapshot::{FileError, FileKind, Origin, Snapshot, cache, map_from};

impl Snapshot {
    /// What differs between the run this snapshot was taken from and `horde`, a simulation
    /// about to be replaced by it (resuming): the map it was created on (size, then
    /// terrain and cost table), the seed, the other settings (thread count aside) and the
    /// scenario ([`Origin`]). Empty when the snapshot fits; each entry says what differs,
    /// the snapshot's value first.
    #[must_use]
    pub fn differences(&self, horde: &Horde) -> Vec<String> {
        let mut out = Vec::new();
        let (theirs, ours) = (&self.record.origin, &horde.origin);
        let size = self.map_size();
        let planned = {
            let map = horde.map();
            (map.width(), map.height())
        };
        if size != planned {
            out.push(format!(
                "map size: the snapshot's is {}x{}, this run's {}x{}",
                size.0, size.1, planned.0, planned.1
            ));
        } else if theirs.map != ours.map {
            out.push(format!(
                "map: the snapshot's starting terrain or cost table (fingerprint {:016x}) is not this run's ({:016x})",
                theirs.map, ours.map
            ));
        }
        // Validated when read, so the settings convert.
        let theirs_config = self.record.config.to_config(1).unwrap_or_default();
        let ours_config = &horde.data.config;
        if theirs_config.seed != ours_config.seed {
            out.push(format!(
                "seed: the snapshot's is {}, this run's {}",
                theirs_config.seed, ours_config.seed
            ));
        }
        let settings = record::differing_settings(&theirs_config, ours_config);
        if !settings.is_empty() {
            out.push(format!("settings: {} differ", settings.join(", ")));
        }
        if theirs.scenario != ours.scenario || theirs.name != ours.name {
            let name = |o: &OriginRecord| {
                if o.name.is_empty() {
                    "unnamed".to_string()
                } else {
                    format!("{:?}", o.name)
                }
            };
            out.push(format!(
                "scenario: the snapshot's is {} (fingerprint {:016x}), this run's {} ({:016x})",
                name(theirs),
                theirs.scenario,
                name(&ours.record()),
                ours.scenario
            ));
        }
        out
    }
}

impl Horde {
    /// The state of this simulation and the units of `world` (see [`Snapshot`]).
    #[must_use]
    pub fn snapshot(&self, world: &World) -> Snapshot {
        let map = self.data.map.read();
        let grid = map.grid();
        let groups = self.data.groups.read();
        let fills = self.data.goal_fills.read();
        let saved_fills = fills.saved(&groups, &map);
        let saved_crowd = self.data.crowd_fields.read().saved(&groups, &map);
        let forces = self.data.forces.read();
        let sector_caches = self
            .data
            .hierarchy
            .read()
            .saved_caches(&map, &groups)
            .into_iter()
            .map(|c| SectorCacheRecord {
                group: c.group,
                layer: c.layer as u8,
                class: c.class,
                goal: record::cells(&c.goal),
                frame: c.cache.frame,
                fields: c.cache.fields,
                distances: c.cache.distances,
                estimates: c.cache.estimates,
            })
            .collect();
        let mut units: Vec<UnitRecord> = world
            .query::<UnitComponents<'_>>()
            .iter()
            .map(|parts| unit_record(UnitRef::of(parts), None))
            .collect();
        units.extend(world.query::<QuarantinedComponents<'_>>().iter().map(
            |(id, position, velocity, external, stun, mass, q)| {
                let unit = UnitRef {
                    id,
                    position,
                    velocity,
                    external,
                    stun,
                    mass,
                    agent: &q.agent,
                    steering: &q.steering,
                };
                unit_record(unit, Some(q.frame))
            },
        ));
        Snapshot {
            record: SnapshotRecord {
                origin: self.origin.record(),
                frame: self.data.clock.frame,
                next_unit: self.data.housekeeping.next_unit,
                config: ConfigRecord::from_config(&self.data.config),
                map: MapRecord {
                    width: map.width(),
                    height: map.height(),
                    cell_size: grid.cell_size(),
                    origin: v2(grid.origin()),
                    costs: record::cost_table_bytes(map.cost_table()),
                    terrain: map.terrain().iter().map(|&t| t as u8).collect(),
                },
                bucket_size: self.data.neighbours.read().grid.cell_size(),
                groups: groups
                    .list
                    .iter()
                    .enumerate()
                    .map(|(i, g)| GroupRecord {
                        goal: record::cells(&g.goal),
                        goal_frame: g.goal_frame,
                        fills: (saved_fills.iter())
                            .filter(|f| usize::from(f.army) == i)
                            .map(|f| FillRecord {
                                layer: f.layer as u8,
                                class: f.class,
                                reach: f.reach,
                                taken: f.taken.clone(),
                                whole: f.whole,
                            })
                            .collect(),
                        fields: (0..MAX_SIZE_CLASSES)
                            .flat_map(|c| Layer::ALL.map(|l| (l, c)))
                            .filter(|&(l, c)| g.field(l, c).is_some())
                            .fold(0, |mask, (l, c)| mask | record::field_bit(l, c)),
                        target: g.target.map(|t| (t.unit.0, t.distance)),
                        crowd: (saved_crowd.iter())
                            .find(|(a, _)| usize::from(*a) == i)
                            .map(|(_, c)| CrowdRecord {
                                min: (c.min.x, c.min.y),
                                size: (c.width, c.height),
                                density: (c.density.iter().enumerate())
                                    .filter(|&(_, &d)| d > 0)
                                    .map(|(k, &d)| (k as u32, d))
                                    .collect(),
                            }),
                        target_state: {
                            let (code, unit) = g.target_state.code();
                            (code, unit.0)
                        },
                        target_seen: g.target_seen.map(|(c, p)| ((c.x, c.y), v2(p))),
                    })
                    .collect(),
                next_force: forces.next_id().get(),
                forces: forces
                    .entries()
                    .map(|(id, field, live)| ForceEntryRecord {
                        id: id.get(),
                        live,
                        field: ForceRecord::from_field(field),
                    })
                    .collect(),
                sector_caches,
                wake_discs: (self.data.housekeeping.wake.discs.discs().iter())
                    .map(|&(c, r)| (v2(c), r))
                    .collect(),
                terrain_edited: self.data.housekeeping.wake.edited,
                units,
                formations: self
                    .data
                    .formations
                    .read()
                    .iter()
                    .map(|(g, f)| formation_record(g, f, &groups))
                    .collect(),
            },
        }
    }

    /// A simulation in the state `snapshot` holds, running on `threads` threads, with its
    /// units spawned into `world` (in the saved order) with horde's components only. Units
    /// that carried components of the caller's need [`Horde::from_snapshot_with`].
    pub fn from_snapshot(
        snapshot: &Snapshot,
        threads: usize,
        world: &mut World,
    ) -> Result<Self, SimError> {
        Self::from_snapshot_with(snapshot, threads, world, |_, _| {}).map(|(horde, _)| horde)
    }

    /// [`Horde::from_snapshot`] that gives each unit the caller's own components back as it
    /// is spawned, and returns which entity each saved unit became.
    ///
    /// A snapshot holds horde's components only; the caller saves its own, keyed by
    /// [`UnitId`]. `components(id, builder)` is called once per unit, in the saved order,
    /// before the unit is spawned: add to `builder` what unit `id` carried. The units are
    /// spawned with them at once, in the saved order, so the world iterates them as the
    /// saved one did and the run goes on exactly as the saved one would have (adding
    /// components afterwards would move units between archetypes and change that order).
    /// The returned list maps every saved unit's id to its new entity, in the saved order.
    /// Components that are horde's own are overwritten by the saved ones.
    pub fn from_snapshot_with(
        snapshot: &Snapshot,
        threads: usize,
        world: &mut World,
        mut components: impl FnMut(UnitId, &mut hecs::EntityBuilder),
    ) -> Result<(Self, Vec<(UnitId, Entity)>), SimError> {
        let r = &snapshot.record;
        let invalid = |detail: String| {
            SimError::Snapshot(FileError::Invalid {
                kind: FileKind::Snapshot,
                detail,
            })
        };
        let map = map_from(&r.map).map_err(invalid)?;
        let config = r.config.to_config(threads).map_err(invalid)?;
        let mut horde = Horde::new(map, config)?;
        for g in &r.groups {
            let goal = record::goal(&g.goal).map_err(invalid)?;
            // Not `add_group`: a wall may have been built on a goal after it was set, which
            // the running simulation allows (validation checked the cells lie on the map).
            let group = horde.push_group(goal)?;
            let restored = &mut horde.data.groups.get_mut().list[usize::from(group.0)];
            restored.goal_frame = g.goal_frame;
            restored.target = g.target.map(|(unit, distance)| horde_core::UnitTarget {
                unit: UnitId(unit),
                distance,
            });
            restored.target_state = g.target_state().map_err(invalid)?;
            restored.target_seen = g
                .target_seen
                .map(|((x, y), p)| (horde_core::Cell::new(x, y), vec2(p)));
            for class in 0..MAX_SIZE_CLASSES {
                for layer in Layer::ALL {
                    if g.fields & record::field_bit(layer, class) != 0 {
                        horde.data.ensure_field(group, layer, class)?;
                    }
                }
            }
        }
        // After every group's fields: a fill is made on its class's costs, which the map
        // prepares once some group has units of the class.
        for (i, g) in r.groups.iter().enumerate() {
            for f in &g.fills {
                let layer = record::layer(f.layer).map_err(invalid)?;
                let goal = &horde.data.groups.get_mut().list[i].goal;
                let map = horde.data.map.get_mut();
                let saved = SavedFill {
                    army: i as u16,
                    layer,
                    class: f.class,
                    reach: f.reach,
                    taken: f.taken.clone(),
                    whole: f.whole,
                };
                horde
                    .data
                    .goal_fills
                    .get_mut()
                    .restore(saved, goal, map)
                    .map_err(|e| invalid(format!("group {i}: {e}")))?;
            }
        }
        for (i, g) in r.groups.iter().enumerate() {
            let Some(c) = &g.crowd else {
                continue;
            };
            let mut density = vec![0u8; c.size.0 as usize * c.size.1 as usize];
            for &(k, d) in &c.density {
                density[k as usize] = d;
            }
            let input = CrowdInput {
                min: horde_core::Cell::new(c.min.0, c.min.1),
                width: c.size.0,
                height: c.size.1,
                density,
            };
            let (groups, map) = (horde.data.groups.get_mut(), horde.data.map.get_mut());
            (horde.data.crowd_fields.get_mut()).restore(i as u16, input, groups, map);
        }
        let entries = r
            .forces
            .iter()
            .map(|f| Ok((f.id, f.field.to_field()?, f.live)))
            .collect::<Result<Vec<_>, String>>()
            .map_err(invalid)?;
        *horde.data.forces.get_mut() =
            ForceManager::restore(entries, r.next_force).map_err(|e| invalid(e.to_string()))?;
        let grid = SpatialGrid::new(horde.data.map.get_mut().grid(), r.bucket_size)
            .map_err(|e| invalid(e.to_string()))?;
        *horde.data.neighbours.get_mut() = Neighbours::new(grid);
        // Every unit is checked before any is spawned: a refused snapshot leaves `world` as
        // it was.
        let mut units = Vec::with_capacity(r.units.len());
        for u in &r.units {
            let spec = u.spec.to_spec().map_err(invalid)?;
            let agent = spec.agent();
            let steering = Steering {
                heading: vec2(u.heading),
                avoid_side: u.avoid_side,
                arrived: u.arrived,
                settled: u.settled,
                stall: u.stall,
                anchor: vec2(u.anchor),
                yielding: GiveWay::from_u8(u.yielding).unwrap_or_default(),
                detour: u.detour,
                arrived_frame: u.arrived_frame,
                still: u.still,
                asleep: u.asleep.map(vec2),
            };
            let unit = Unit {
                velocity: Velocity(vec2(u.velocity)),
                external: ExternalForce(vec2(u.external)),
                stun: Stun(u.stun),
                steering,
                ..Unit::at_rest(UnitId(u.id), spec.position, spec.mass, agent)
            };
            units.push((unit, u.quarantined));
        }
        let caches = r
            .sector_caches
            .iter()
            .map(|c| {
                Ok(SavedCache {
                    group: c.group,
                    layer: record::layer(c.layer)?,
                    class: record::size_class(c.class)?,
                    goal: record::goal(&c.goal)?,
                    cache: cache(c),
                })
            })
            .collect::<Result<Vec<_>, String>>()
            .map_err(invalid)?;
        let mut entities = Vec::with_capacity(units.len());
        let mut builder = hecs::EntityBuilder::new();
        for (unit, quarantined) in units {
            components(unit.id, &mut builder);
            match quarantined {
                None => builder.add_bundle(unit.bundle()),
                Some(frame) => builder.add_bundle(unit.quarantined(frame)),
            };
            entities.push((unit.id, world.spawn(builder.build())));
        }
        let map = horde.data.map.get_mut();
        horde.data.hierarchy.get_mut().restore_caches(caches, map);
        horde.data.clock.frame = r.frame;
        horde.data.housekeeping.next_unit = r.next_unit;
        for &(centre, radius) in &r.wake_discs {
            horde
                .data
                .housekeeping
                .wake
                .discs
                .push(vec2(centre), radius);
        }
        horde.data.housekeeping.wake.edited = r.terrain_edited;
        for f in &r.formations {
            let formation = restore_formation(f, horde.data.groups.get_mut())
                .map_err(|e| invalid(format!("formation of group {}: {e}", f.group)))?;
            let formations = horde.data.formations.get_mut();
            formations.set(f.group, Some(formation.order.clone()));
            formations.list[usize::from(f.group)] = Some(formation);
        }
        horde.origin = Origin::from_record(&r.origin);
        Ok((horde, entities))
    }
}

/// What a snapshot saves of group `group`'s formation.
fn formation_record(group: u16, f: &Formation, groups: &crate::Groups) -> FormationRecord {
    FormationRecord {
        group,
        order: OrderRecord::from_order(&f.order),
        spacing: f.spacing,
        width: f.width,
        slots: f.slots.clone(),
        members: f.members.clone(),
        anchor: v2(f.anchor),
        heading: v2(f.heading),
        speed: f.speed,
        pace: f.pace,
        radius: f.radius,
        layer: f.layer as u8,
        arrived: f.arrived,
        goal_seen: groups
            .get(group)
            .is_some_and(|g| g.goal_changes == f.goal_changes),
        targets: f.targets.iter().map(|&t| v2(t)).collect(),
    }
}

/// The formation a snapshot saved (its record checked already), for the groups restored.
fn restore_formation(r: &FormationRecord, groups: &crate::Groups) -> Result<Formation, String> {
    let group = groups.get(r.group).ok_or("no such group")?;
    let order = r.order.to_order()?;
    let mut f = Formation::new(order);
    f.spacing = r.spacing;
    f.width = r.width;
    f.offsets = horde_core::slot_offsets(&f.shape_now(), r.members.len(), r.spacing);
    f.slots = r.slots.clone();
    f.members = r.members.clone();
    f.anchor = vec2(r.anchor);
    f.heading = vec2(r.heading);
    f.speed = r.speed;
    f.pace = r.pace;
    f.radius = r.radius;
    f.layer = record::layer(r.layer)?;
    f.arrived = r.arrived;
    f.goal_changes = if r.goal_seen {
        group.goal_changes
    } else {
        u64::MAX
    };
    f.targets = r.targets.iter().map(|&t| vec2(t)).collect();
    Ok(f)
}

/// What a snapshot saves of a unit (`quarantined`: the frame it was quarantined in).
fn unit_record(u: UnitRef<'_>, quarantined: Option<u64>) -> UnitRecord {
    let st = u.steering;
    UnitRecord {
        id: u.id.0,
        spec: SpecRecord::from_agent(u.agent, u.position.0, u.mass.0),
        velocity: v2(u.velocity.0),
        external: v2(u.external.0),
        stun: u.stun.0,
        heading: v2(st.heading),
        avoid_side: st.avoid_side,
        arrived: st.arrived,
        settled: st.settled,
        stall: st.stall,
        anchor: v2(st.anchor),
        yielding: st.yielding.to_u8(),
        detour: st.detour,
        arrived_frame: st.arrived_frame,
        still: st.still,
        asleep: st.asleep.map(v2),
        quarantined,
    }
}
