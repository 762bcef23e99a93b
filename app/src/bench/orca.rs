//! Table `orca`: the same level, start positions and goal run by an ORCA crowd (`dodgy_2d`
//! agents, neighbours found with a `kiddo` k-d tree rebuilt every frame, because dodgy_2d's
//! own `Simulator` compares all pairs), against horde's frame on one thread (no force
//! fields), for two crowds: `spread` (the frame benchmark's layout, every k-th open cell: at
//! these sizes agents rarely meet) and `dense` (one agent per open cell, the first open cells
//! row by row: every agent has neighbours from the first frame).
//!
//! Both crowds get the same preferred velocity: horde's flow field sampled at the agent's
//! position times the unit speed, so this is local avoidance against local avoidance.
//! ORCA agents get no obstacle lines; they are kept out of walls the simple way: a move whose
//! end lies in a wall cell (or off the map) is cut to its x part, else its y part, else
//! dropped, and the agent's velocity becomes the move actually made.

use std::borrow::Cow;
use std::num::NonZero;
use std::time::{Duration, Instant};

use dodgy_2d::{Agent, AvoidanceOptions, Vec2 as OVec2};
use horde::fields::{CostField, FlowField, WALL};
use horde::glam::Vec2;
use horde::{Grid, Layer, UnitSpec};
use kiddo::{ImmutableKdTree, SquaredEuclidean};

use super::scenario::{DT, Layout, Level, radius};
use super::{Ctx, Row, median, ratio, round, row};
use crate::AppError;

/// Agents considered per agent (RVO2's usual `maxNeighbors`).
const MAX_NEIGHBOURS: usize = 10;
/// Radius of the neighbour search.
const NEIGHBOUR_DIST: f32 = 3.0;
/// ORCA's time horizon for other agents, seconds.
const TIME_HORIZON: f32 = 1.0;

/// Crowd sizes and the frames measured at each.
fn sizes(quick: bool) -> &'static [(usize, usize)] {
    if quick {
        &[(1_000, 10), (10_000, 5)]
    } else {
        &[(1_000, 30), (10_000, 10), (100_000, 5)]
    }
}

/// An ORCA crowd walking down horde's flow field.
pub struct OrcaCrowd<'a> {
    agents: Vec<Agent>,
    grid: &'a Grid,
    cost: &'a CostField,
    flow: FlowField,
    speed: f32,
    points: Vec<[f32; 2]>,
    next: Vec<OVec2>,
}

impl<'a> OrcaCrowd<'a> {
    /// Agents at `positions`, standing still, following `flow`.
    pub fn new(level: &'a Level, positions: &[Vec2], flow: FlowField) -> Self {
        let radius = radius();
        let agents = positions
            .iter()
            .map(|p| Agent {
                position: OVec2::new(p.x, p.y),
                velocity: OVec2::ZERO,
                radius,
                avoidance_responsibility: 1.0,
            })
            .collect();
        Self {
            agents,
            grid: level.map.grid(),
            cost: level.map.cost_field(Layer::Ground),
            flow,
            speed: UnitSpec::at(Vec2::ZERO).max_speed,
            points: Vec::new(),
            next: Vec::new(),
        }
    }

    /// Mean speed of the agents (world units per second).
    pub fn mean_speed(&self) -> f64 {
        let sum: f64 = self
            .agents
            .iter()
            .map(|a| f64::from(a.velocity.length()))
            .sum();
        sum / self.agents.len().max(1) as f64
    }

    /// One frame: k-d tree, ORCA velocity per agent, move with the wall rule.
    pub fn step(&mut self, dt: f32) {
        self.points.clear();
        self.points
            .extend(self.agents.iter().map(|a| [a.position.x, a.position.y]));
        let tree: ImmutableKdTree<f32, 2> = ImmutableKdTree::new_from_slice(&self.points);
        let options = AvoidanceOptions {
            obstacle_margin: 0.0,
            time_horizon: TIME_HORIZON,
            obstacle_time_horizon: TIME_HORIZON,
        };
        let max = NonZero::new(MAX_NEIGHBOURS + 1).unwrap_or(NonZero::<usize>::MIN);
        self.next.clear();
        let mut neighbours: Vec<Cow<'_, Agent>> = Vec::with_capacity(MAX_NEIGHBOURS + 1);
        for (i, agent) in self.agents.iter().enumerate() {
            let p = agent.position;
            let preferred = self.flow.sample(self.grid, Vec2::new(p.x, p.y)) * self.speed;
            neighbours.clear();
            for n in tree.nearest_n_within::<SquaredEuclidean>(
                &[p.x, p.y],
                NEIGHBOUR_DIST * NEIGHBOUR_DIST,
                max,
                false,
            ) {
                let j = n.item as usize;
                if j != i {
                    neighbours.push(Cow::Borrowed(&self.agents[j]));
                }
            }
            self.next.push(agent.compute_avoiding_velocity(
                &neighbours,
                &[],
                OVec2::new(preferred.x, preferred.y),
                self.speed,
                dt,
                &options,
            ));
        }
        let (grid, cost) = (self.grid, self.cost);
        for (agent, &v) in self.agents.iter_mut().zip(&self.next) {
            let from = agent.position;
            let moved = [v, OVec2::new(v.x, 0.0), OVec2::new(0.0, v.y)]
                .into_iter()
                .map(|v| (v, from + v * dt))
                .find(|&(_, to)| open(grid, cost, to));
            let (v, to) = moved.unwrap_or((OVec2::ZERO, from));
            agent.position = to;
            agent.velocity = v;
        }
    }
}

/// Whether `p` lies in an open cell of the map.
fn open(grid: &Grid, cost: &CostField, p: OVec2) -> bool {
    grid.cell_at(Vec2::new(p.x, p.y))
        .is_some_and(|c| cost.get(c) != WALL)
}

/// Runs the table.
pub fn run(ctx: &Ctx) -> Result<Vec<Row>, AppError> {
    let level = &ctx.clustered;
    let mut rows = Vec::new();
    for layout in [Layout::Spread, Layout::Dense] {
        for &(units, frames) in sizes(ctx.quick) {
            let lname = layout.name();
            ctx.status(format!("orca: horde, {units} units, {lname}"));
            let super::frame::Measured {
                units: count,
                frame_ms: horde_ms,
                mean_speed: horde_speed,
                ..
            } = super::frame::measure(level, layout, units, 1, frames, false)?;
            ctx.status(format!("orca: ORCA, {units} units, {lname}"));
            let sim = super::scenario::simulation(level, layout, units, 1, false)?;
            let flow = sim
                .horde()
                .fields()
                .iter()
                .next()
                .map(|(_, f)| f.flow().clone())
                .ok_or_else(|| AppError::Failed("horde built no flow field".into()))?;
            let mut crowd = OrcaCrowd::new(level, &level.positions(units, layout), flow);
            // The first frame outside the measurement, as for horde.
            crowd.step(DT);
            let mut times: Vec<Duration> = (0..frames)
                .map(|_| {
                    let t = Instant::now();
                    crowd.step(DT);
                    t.elapsed()
                })
                .collect();
            let orca_ms = median(&mut times);
            let orca_speed = crowd.mean_speed();
            rows.push(row([
                ("map", level.name.as_str().into()),
                ("crowd", lname.into()),
                ("units", count.into()),
                ("frames", frames.into()),
                ("horde_1_thread_ms", round(horde_ms).into()),
                ("orca_ms", round(orca_ms).into()),
                ("ratio_orca_over_horde", ratio(orca_ms, horde_ms)),
                ("horde_mean_speed", round(horde_speed).into()),
                ("orca_mean_speed", round(orca_speed).into()),
            ]));
        }
    }
    Ok(rows)
}
