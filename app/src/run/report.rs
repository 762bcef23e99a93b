//! The end of a run: how it ended ([`Outcome`]), printed and written as `--json`
//! ([`Report`]; every figure is defined in docs/run-output.md).

use std::path::Path;
use std::time::Duration;

use horde::{GroupStatus, UnitState};
use horde_scenario::Plan;

use super::{RunArgs, Tally};
use crate::guard::{self, printable};

/// How the run ended: the units' states and the figures the report prints.
pub(super) struct Outcome {
    units: Vec<UnitState>,
    status: Vec<GroupStatus>,
    arrived: usize,
    settled: usize,
    moving: usize,
    unreachable: usize,
    blocked: usize,
    stunned: usize,
    hash: u64,
    arrival_median: Option<f64>,
    arrival_max: Option<f64>,
}

impl Outcome {
    pub(super) fn of(plan: &Plan) -> Self {
        let sim = &plan.sim;
        let units = sim.units();
        let status = sim.group_status();
        let count = |f: fn(&GroupStatus) -> usize| status.iter().map(f).sum::<usize>();
        // Arrival times count from the group's latest goal change, and come from the saved
        // state: a resumed run reports what the uninterrupted one does.
        let mut arrival_s: Vec<f64> = units
            .iter()
            .filter_map(|u| {
                let since = sim.horde().group_goal_frame(u.group)?;
                let frames = u.arrived_frame?.checked_sub(since)?;
                Some(frames as f64 * f64::from(plan.dt))
            })
            .collect();
        arrival_s.sort_by(f64::total_cmp);
        let (arrival_median, arrival_max) = match arrival_s.as_slice() {
            [] => (None, None),
            s => (Some(s[s.len() / 2]), s.last().copied()),
        };
        Self {
            arrived: count(|g| g.arrived),
            settled: count(|g| g.settled),
            moving: count(|g| g.moving),
            unreachable: count(|g| g.unreachable),
            blocked: count(|g| g.blocked),
            stunned: units.iter().filter(|u| u.stun > 0.0).count(),
            hash: sim.state_hash(),
            units,
            status,
            arrival_median,
            arrival_max,
        }
    }
}

/// The end of a run, printed (docs/run-output.md) and as `--json`.
pub(super) struct Report<'a> {
    pub(super) plan: &'a Plan,
    pub(super) args: &'a RunArgs,
    pub(super) start: u32,
    pub(super) frames: u32,
    pub(super) threads: usize,
    pub(super) setup: Duration,
    pub(super) tally: &'a Tally,
    pub(super) outcome: &'a Outcome,
}

impl Report<'_> {
    /// The stages' rows and the frame's: name, median, p95 and max in ms.
    fn stage_rows(&self) -> Vec<(&str, (f64, f64, f64))> {
        (self.tally.per_stage.iter())
            .map(|(name, samples)| (name.as_str(), samples.summary_ms()))
            .chain([("frame", self.tally.totals.summary_ms())])
            .collect()
    }

    fn seconds(&self, frames: Option<u64>) -> Option<f64> {
        frames.map(|f| f as f64 * f64::from(self.plan.dt))
    }

    pub(super) fn print(&self, replay: Option<(&Path, &horde::Replay)>) {
        let (plan, o, bodies) = (self.plan, self.outcome, &self.tally.bodies);
        println!(
            "horde: {}: {} units, {} frames, {} threads",
            printable(&plan.name),
            o.units.len(),
            self.frames - self.start,
            self.threads
        );
        if self.start > 0 {
            println!("resumed at frame {}", self.start);
        }
        println!("setup {:.1} ms", self.setup.as_secs_f64() * 1e3);
        println!(
            "{:<18} {:>10} {:>10} {:>10}",
            "stage", "median ms", "p95 ms", "max ms"
        );
        for (name, (med, p95, max)) in self.stage_rows() {
            println!("{name:<18} {med:>10.3} {p95:>10.3} {max:>10.3}");
        }
        let shown = |s: Option<f64>| s.map_or("-".into(), |s| format!("{s:.2}"));
        println!(
            "arrived {} (median {} s, max {} s), settled {}, moving {}, blocked {}, unreachable {}, stunned {}, wall violations {}",
            o.arrived,
            shown(o.arrival_median),
            shown(o.arrival_max),
            o.settled,
            o.moving,
            o.blocked,
            o.unreachable,
            o.stunned,
            bodies.wall_violations,
        );
        if o.status.len() > 1 {
            for g in &o.status {
                let (first, last) = (self.seconds(g.first_arrival), self.seconds(g.last_arrival));
                println!(
                    "  {}: {} units: arrived {} (first {} s, last {} s), settled {}, moving {}, blocked {}, unreachable {}",
                    printable(&plan.group_name(g.group)),
                    g.units,
                    g.arrived,
                    shown(first),
                    shown(last),
                    g.settled,
                    g.moving,
                    g.blocked,
                    g.unreachable
                );
            }
        }
        let cut_off = &self.tally.cut_off;
        for r in &cut_off.reports {
            println!(
                "unreachable at frame {} ({}): {} of {} units of {} cannot reach the goal",
                r.frame,
                r.cause,
                r.unreachable,
                r.unreachable + r.reachable,
                printable(&plan.group_name(r.group)),
            );
        }
        if cut_off.more > 0 {
            println!(
                "unreachable: {} more goal changes left units cut off",
                cut_off.more
            );
        }
        let (worst_frame, worst_mean) = bodies.worst_frame.unwrap_or((0, 0.0));
        println!(
            "overlap mean {:.3}, p99 {:.3}, max {:.3}, worst frame {worst_frame} (mean {worst_mean:.3}) (penetration / mean radius of touching pairs)",
            bodies.overlap_mean(),
            bodies.overlaps.quantile(0.99),
            bodies.overlap_max,
        );
        println!(
            "wall depth max {:.3} (of the radius), speed p99 {:.3} (displacement / (top + external speed) per frame){}",
            bodies.wall_depth_max,
            bodies.speed.quantile(0.99),
            if bodies.walled_in > 0 {
                format!(
                    ", walled in {} (units inside walls with no way out)",
                    bodies.walled_in
                )
            } else {
                String::new()
            }
        );
        if self.tally.quarantined > 0 {
            println!(
                "quarantined {} units (their state stopped being finite)",
                self.tally.quarantined
            );
        }
        if let Some(dir) = &self.args.snapshot_dir {
            println!(
                "{} snapshots written to {}",
                self.tally.snapshots_written,
                guard::printable_path(dir)
            );
        }
        if let Some((path, replay)) = replay {
            println!(
                "replay of {} frames, {} commands written to {}",
                replay.frames(),
                replay.commands(),
                guard::printable_path(path)
            );
        }
        println!("state_hash {:016x}", o.hash);
    }

    pub(super) fn json(&self) -> serde_json::Value {
        let (plan, o, bodies) = (self.plan, self.outcome, &self.tally.bodies);
        let mut stages = serde_json::Map::new();
        for (name, (med, p95, max)) in self.stage_rows() {
            stages.insert(
                name.to_owned(),
                serde_json::json!({ "median_ms": med, "p95_ms": p95, "max_ms": max }),
            );
        }
        let groups: Vec<serde_json::Value> = (o.status.iter())
            .map(|g| {
                serde_json::json!({
                    "group": g.group.0,
                    "name": plan.group_name(g.group),
                    "units": g.units,
                    "arrived": g.arrived,
                    "settled": g.settled,
                    "moving": g.moving,
                    "blocked": g.blocked,
                    "unreachable": g.unreachable,
                    "goal_frame": g.goal_frame,
                    "first_arrival_s": self.seconds(g.first_arrival),
                    "last_arrival_s": self.seconds(g.last_arrival),
                })
            })
            .collect();
        let cut_off: Vec<serde_json::Value> = (self.tally.cut_off.reports.iter())
            .map(|r| {
                serde_json::json!({
                    "frame": r.frame,
                    "cause": r.cause,
                    "group": r.group.0,
                    "unreachable": r.unreachable,
                    "reachable": r.reachable,
                    "first_units": r.first_units,
                })
            })
            .collect();
        let (worst_frame, worst_mean) = bodies.worst_frame.unwrap_or((0, 0.0));
        serde_json::json!({
            "scenario": plan.name,
            "frames": self.frames - self.start,
            "start_frame": self.start,
            "end_frame": self.frames,
            "quarantined": self.tally.quarantined,
            "snapshots_written": self.tally.snapshots_written,
            "units": o.units.len(),
            "threads": self.threads,
            "arrived": o.arrived,
            "settled": o.settled,
            "moving": o.moving,
            "blocked": o.blocked,
            "unreachable": o.unreachable,
            "groups": groups,
            "unreachable_reports": cut_off,
            "stunned": o.stunned,
            "state_hash": format!("{:016x}", o.hash),
            "wall_violations": bodies.wall_violations,
            "stages": stages,
            "overlap": {
                "mean": bodies.overlap_mean(),
                "p99": bodies.overlaps.quantile(0.99),
                "max": bodies.overlap_max,
                "worst_frame": worst_frame,
                "worst_frame_mean": worst_mean,
            },
            "wall_depth_max": bodies.wall_depth_max,
            "walled_in": bodies.walled_in,
            "speed_p99": bodies.speed.quantile(0.99),
            "arrival_s": { "median": o.arrival_median, "max": o.arrival_max },
        })
    }
}
