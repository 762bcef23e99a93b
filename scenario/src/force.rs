//! [`build_force`]: one `[[force]]` table turned into a [`ForceField`].

use horde::glam::Vec2;
use horde::{ForceField, ForceKind};
use toml::Spanned;

use crate::MAX_FALLOFF;
use crate::ctx::{Ctx, integer_in, number};
use crate::error::ScenarioError;
use crate::raw::RawForce;

pub(crate) fn build_force(
    ctx: &Ctx<'_>,
    f: &Spanned<RawForce>,
    p: &str,
) -> Result<ForceField, ScenarioError> {
    let r = f.get_ref();
    let key = |k: &str| format!("{p}.{k}");
    let coordinate = |v: &Spanned<f64>, k: &str| {
        let x = *v.get_ref();
        if (x as f32).is_finite() {
            Ok(x as f32)
        } else {
            Err(ctx.bad(
                v.span(),
                &key(k),
                format!("expected a finite coordinate, found {x}"),
            ))
        }
    };
    let position = Vec2::new(coordinate(&r.x, "x")?, coordinate(&r.y, "y")?);
    let kind_name = r.kind.get_ref().as_str();
    if r.direction.is_some() && kind_name != "push" {
        return Err(ctx.bad(
            f.span(),
            &key("direction"),
            "`direction` only goes with kind = \"push\"",
        ));
    }
    if r.clockwise.is_some() && kind_name != "vortex" {
        return Err(ctx.bad(
            f.span(),
            &key("clockwise"),
            "`clockwise` only goes with kind = \"vortex\"",
        ));
    }
    let kind = match kind_name {
        "explosion" => ForceKind::Explosion,
        "attractor" => ForceKind::Attractor,
        "vortex" => ForceKind::Vortex {
            clockwise: r.clockwise.as_ref().is_none_or(|c| *c.get_ref()),
        },
        "push" => {
            let Some(d) = &r.direction else {
                return Err(ctx.missing(
                    f.span(),
                    &key("direction"),
                    "a push needs `direction = [dx, dy]`",
                ));
            };
            let [dx, dy] = *d.get_ref();
            let v = Vec2::new(dx as f32, dy as f32);
            if !(v.is_finite() && v != Vec2::ZERO) {
                return Err(ctx.bad(
                    d.span(),
                    &key("direction"),
                    format!("expected a finite, non-zero direction, found [{dx}, {dy}]"),
                ));
            }
            ForceKind::Push { direction: v }
        }
        other => {
            return Err(ctx.bad(
                r.kind.span(),
                &key("kind"),
                format!(
                    "expected \"explosion\", \"attractor\", \"push\" or \"vortex\", found {other:?}"
                ),
            ));
        }
    };
    let radius = number(ctx, &r.radius, &key("radius"), false)?;
    let strength = number(ctx, &r.strength, &key("strength"), true)?;
    if strength > ForceField::MAX_STRENGTH {
        return Err(ctx.bad(
            r.strength.span(),
            &key("strength"),
            format!(
                "expected a strength <= {:e}, found {strength}",
                ForceField::MAX_STRENGTH
            ),
        ));
    }
    let mut field = ForceField::new(position, kind, radius, strength)
        .map_err(|e| ctx.bad(f.span(), p, e.to_string()))?;
    if let Some(d) = &r.duration {
        let secs = *d.get_ref();
        let ok = secs == f64::INFINITY || (secs.is_finite() && secs >= 0.0);
        if !ok {
            return Err(ctx.bad(
                d.span(),
                &key("duration"),
                format!("expected seconds >= 0 (or inf), found {secs}"),
            ));
        }
        let secs = if secs.is_finite() {
            secs as f32
        } else {
            ForceField::FOREVER
        };
        field = field
            .with_duration(secs)
            .map_err(|e| ctx.bad(d.span(), &key("duration"), e.to_string()))?;
    }
    if let Some(fo) = &r.falloff {
        let n = integer_in(
            ctx,
            fo,
            &key("falloff"),
            "an exponent",
            0,
            i64::from(MAX_FALLOFF),
        )?;
        field = field.with_falloff(n as u32);
    }
    if let Some(td) = &r.time_decay {
        let v = number(ctx, td, &key("time_decay"), true)?;
        field = field
            .with_time_decay(v)
            .map_err(|e| ctx.bad(td.span(), &key("time_decay"), e.to_string()))?;
    }
    if let Some(a) = r.affects_controllable {
        field = field.with_affects_controllable(a);
    }
    Ok(field)
}
