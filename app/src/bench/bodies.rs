//! Table `bodies` (built with `--features rapier`): horde's solid bodies against rapier2d's,
//! the crate a Rust programmer would pick for bodies. The same packed discs of radius 0.45,
//! one per cell of a square block on an open map, all wanting to reach the block's centre at
//! 4 cells a second, no gravity, the same 0.05 s steps. Horde walks them with its flow field
//! and steering and keeps them apart with `resolve_contacts`; rapier's bodies get the same
//! wish each step as their velocity (toward the centre, at the unit speed) and its solver
//! keeps them apart (rotations locked, no friction or restitution to speak of).
//!
//! A row gives, per crowd size and thread count, the median step of rapier, of horde's
//! contact stage and of horde's whole frame over the same frames after a warm-up, the ratios
//! rapier / horde contacts and rapier / horde frame, and how solid each crowd is at the end
//! (mean penetration of touching pairs over the radius).

use std::time::Instant;

use horde::glam::Vec2;
use horde::{Cell, GoalSet, Grid, Map, SimConfig, Simulation, UnitSpec};
use rapier2d::prelude::*;

use super::{Ctx, Row, median, ratio, round, row};
use crate::AppError;

/// Body radius (cells).
const RADIUS: f32 = 0.45;
/// Step, seconds.
const DT: f32 = 0.05;
/// Speed toward the centre, cells a second (horde's default top speed).
const SPEED: f32 = 4.0;
/// Frames run before the timed ones (the block starts to press inward).
const WARMUP: usize = 20;

fn failed(e: impl std::fmt::Display) -> AppError {
    AppError::Failed(format!("bodies: {e}"))
}

/// Crowd sizes and the frames timed at each.
fn sizes(quick: bool) -> &'static [(u32, usize)] {
    if quick {
        &[(2_500, 20)]
    } else {
        &[(10_000, 40), (40_000, 20)]
    }
}

/// The block: `side * side` cell centres, with a margin round it, and its centre.
fn block(units: u32) -> (u32, Vec<Vec2>, Vec2) {
    let side = (f64::from(units).sqrt().ceil()) as u32;
    let margin = 4;
    let map = side + 2 * margin;
    let positions = (0..side * side)
        .take(units as usize)
        .map(|i| {
            Vec2::new(
                (margin + i % side) as f32 + 0.5,
                (margin + i / side) as f32 + 0.5,
            )
        })
        .collect();
    let centre = Vec2::splat(margin as f32 + side as f32 / 2.0);
    (map, positions, centre)
}

/// Mean penetration of the touching pairs among discs at `positions`, over the radius (how
/// solid the bodies are at the end: both sides are held to the same measure).
fn mean_overlap(positions: &[Vec2]) -> f64 {
    let mut cells: std::collections::HashMap<(i32, i32), Vec<usize>> = Default::default();
    for (i, p) in positions.iter().enumerate() {
        cells
            .entry((p.x.floor() as i32, p.y.floor() as i32))
            .or_default()
            .push(i);
    }
    let (mut sum, mut pairs) = (0.0f64, 0u64);
    for (i, p) in positions.iter().enumerate() {
        let (cx, cy) = (p.x.floor() as i32, p.y.floor() as i32);
        for dy in -1..=1 {
            for dx in -1..=1 {
                for &j in cells.get(&(cx + dx, cy + dy)).into_iter().flatten() {
                    let depth = 2.0 * RADIUS - p.distance(positions[j]);
                    if j > i && depth > 0.0 {
                        sum += f64::from(depth);
                        pairs += 1;
                    }
                }
            }
        }
    }
    if pairs == 0 {
        0.0
    } else {
        sum / pairs as f64 / f64::from(RADIUS)
    }
}

/// Median time of horde's frame and of its contact stage, and the overlap at the end.
fn horde(units: u32, threads: usize, frames: usize) -> Result<(f64, f64, f64), AppError> {
    let (side, positions, centre) = block(units);
    let map = Map::new(Grid::new(side, side).map_err(failed)?);
    let config = SimConfig {
        threads,
        ..SimConfig::default()
    };
    let mut sim = Simulation::new(map, config).map_err(failed)?;
    let goal = Cell::new(centre.x as u32, centre.y as u32);
    let group = sim.add_group(GoalSet::single(goal)).map_err(failed)?;
    for p in positions {
        let spec = UnitSpec::at(p).with_radius(RADIUS).with_group(group);
        sim.spawn(UnitSpec {
            max_speed: SPEED,
            ..spec
        })
        .map_err(failed)?;
    }
    let (mut frame, mut contacts) = (Vec::new(), Vec::new());
    for i in 0..WARMUP + frames {
        let started = Instant::now();
        let report = sim.step(DT).map_err(failed)?;
        let contact = report.stage("resolve_contacts").unwrap_or_default();
        if i >= WARMUP {
            frame.push(started.elapsed());
            contacts.push(contact);
        }
    }
    let end: Vec<Vec2> = sim.units().iter().map(|u| u.position).collect();
    Ok((
        median(&mut frame),
        median(&mut contacts),
        mean_overlap(&end),
    ))
}

/// Median time of rapier's step, and the overlap at the end.
fn rapier(units: u32, threads: usize, frames: usize) -> Result<(f64, f64), AppError> {
    let (_, positions, centre) = block(units);
    let mut bodies = RigidBodySet::new();
    let mut colliders = ColliderSet::new();
    let handles: Vec<RigidBodyHandle> = positions
        .iter()
        .map(|p| {
            let body = bodies.insert(
                RigidBodyBuilder::dynamic()
                    .translation(Vector::new(p.x, p.y))
                    .lock_rotations(),
            );
            colliders.insert_with_parent(
                ColliderBuilder::ball(RADIUS).friction(0.0).restitution(0.0),
                body,
                &mut bodies,
            );
            body
        })
        .collect();
    let mut pipeline = PhysicsPipeline::new();
    pipeline.configure_thread_pool(threads).map_err(failed)?;
    let params = IntegrationParameters {
        dt: DT,
        ..IntegrationParameters::default()
    };
    let mut islands = IslandManager::new();
    let mut broad_phase = BroadPhaseBvh::new();
    let mut narrow_phase = NarrowPhase::new();
    let mut impulse_joints = ImpulseJointSet::new();
    let mut multibody_joints = MultibodyJointSet::new();
    let mut soft_bodies = SoftBodySet::new();
    let mut ccd = CCDSolver::new();
    let mut times = Vec::new();
    for i in 0..WARMUP + frames {
        let started = Instant::now();
        for &h in &handles {
            let body = &mut bodies[h];
            let p = body.translation();
            let to = Vector::new(centre.x - p.x, centre.y - p.y);
            let d = to.length();
            let v = if d > 0.5 {
                to * (SPEED / d)
            } else {
                Vector::ZERO
            };
            body.set_linvel(v, true);
        }
        pipeline.step(
            Vector::ZERO,
            &params,
            &mut islands,
            &mut broad_phase,
            &mut narrow_phase,
            &mut bodies,
            &mut colliders,
            &mut impulse_joints,
            &mut multibody_joints,
            &mut soft_bodies,
            &mut ccd,
            &(),
            &(),
        );
        if i >= WARMUP {
            times.push(started.elapsed());
        }
    }
    let end: Vec<Vec2> = handles
        .iter()
        .map(|&h| {
            let p = bodies[h].translation();
            Vec2::new(p.x, p.y)
        })
        .collect();
    Ok((median(&mut times), mean_overlap(&end)))
}

/// Runs the table.
pub fn run(ctx: &Ctx) -> Result<Vec<Row>, AppError> {
    let mut rows = Vec::new();
    for &(units, frames) in sizes(ctx.quick) {
        for threads in [1, 2] {
            ctx.status(format!("bodies: {units} discs, {threads} threads"));
            let (frame_ms, contacts_ms, horde_overlap) = horde(units, threads, frames)?;
            let (rapier_ms, rapier_overlap) = rapier(units, threads, frames)?;
            let ms = |x: f64| round(x);
            rows.push(row([
                ("units", units.into()),
                ("threads", threads.into()),
                ("rapier_ms", ms(rapier_ms).into()),
                ("horde_contacts_ms", ms(contacts_ms).into()),
                ("horde_frame_ms", ms(frame_ms).into()),
                ("rapier_over_contacts", ratio(rapier_ms, contacts_ms)),
                ("rapier_over_frame", ratio(rapier_ms, frame_ms)),
                ("rapier_overlap", round(rapier_overlap).into()),
                ("horde_overlap", round(horde_overlap).into()),
            ]));
        }
    }
    Ok(rows)
}
