//! `--plot FILE`: ms per frame against units, log-log, horde and the ORCA crowd (both on one
//! thread, spread and dense crowds, from the `orca` table), drawn with the `image` crate and
//! a tiny built-in pixel font.

use std::path::Path;

use image::{Rgb, RgbImage};
use serde_json::Value;

use super::{Row, get};
use crate::AppError;

const W: u32 = 480;
const H: u32 = 320;
/// Plot area: left, top, right, bottom.
const AREA: (f64, f64, f64, f64) = (56.0, 24.0, 464.0, 276.0);
const WHITE: Rgb<u8> = Rgb([255, 255, 255]);
const BLACK: Rgb<u8> = Rgb([0, 0, 0]);
const GREY: Rgb<u8> = Rgb([220, 220, 220]);
/// Font scale: glyphs are 3x5 pixels, drawn `SCALE` times larger.
const SCALE: u32 = 2;

/// A series: its name, colour and `(units, ms)` points.
type Series = (&'static str, Rgb<u8>, Vec<(f64, f64)>);

/// Draws the plot of the `orca` table to `path`.
pub fn draw(path: &Path, orca: &[Row]) -> Result<(), AppError> {
    let num = |r: &Row, k: &str| get(r, k).and_then(Value::as_f64);
    let points = |rows: &[Row], key: &str, keep: &dyn Fn(&Row) -> bool| -> Vec<(f64, f64)> {
        rows.iter()
            .filter(|r| keep(r))
            .filter_map(|r| Some((num(r, "units")?, num(r, key)?)))
            .filter(|&(u, ms)| u > 0.0 && ms > 0.0)
            .collect()
    };
    let crowd =
        |name: &'static str| move |r: &Row| get(r, "crowd").and_then(Value::as_str) == Some(name);
    let series: [Series; 4] = [
        (
            "horde, spread",
            Rgb([30, 100, 200]),
            points(orca, "horde_1_thread_ms", &crowd("spread")),
        ),
        (
            "ORCA, spread",
            Rgb([210, 60, 40]),
            points(orca, "orca_ms", &crowd("spread")),
        ),
        (
            "horde, dense",
            Rgb([110, 190, 240]),
            points(orca, "horde_1_thread_ms", &crowd("dense")),
        ),
        (
            "ORCA, dense",
            Rgb([245, 160, 40]),
            points(orca, "orca_ms", &crowd("dense")),
        ),
    ];
    let all: Vec<(f64, f64)> = series.iter().flat_map(|s| s.2.iter().copied()).collect();
    if all.is_empty() {
        return Err(AppError::Failed("nothing to plot".into()));
    }
    let decades = |values: &mut dyn Iterator<Item = f64>| {
        let (lo, hi) = values.fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)));
        let (lo, hi) = (lo.log10().floor(), hi.log10().ceil());
        (lo, if hi > lo { hi } else { lo + 1.0 })
    };
    let (x0, x1) = decades(&mut all.iter().map(|p| p.0));
    let (y0, y1) = decades(&mut all.iter().map(|p| p.1));
    let (left, top, right, bottom) = AREA;
    let px = |u: f64| left + (u.log10() - x0) / (x1 - x0) * (right - left);
    let py = |ms: f64| bottom - (ms.log10() - y0) / (y1 - y0) * (bottom - top);

    let mut img = RgbImage::from_pixel(W, H, WHITE);
    for d in x0 as i32..=x1 as i32 {
        let x = px(10f64.powi(d));
        line(&mut img, (x, top), (x, bottom), GREY, 1);
        let label = units_label(d);
        let w = text_width(&label);
        text(&mut img, x as i64 - w / 2, bottom as i64 + 6, &label, BLACK);
    }
    for d in y0 as i32..=y1 as i32 {
        let y = py(10f64.powi(d));
        line(&mut img, (left, y), (right, y), GREY, 1);
        let label = ms_label(d);
        let w = text_width(&label);
        text(&mut img, left as i64 - 6 - w, y as i64 - 5, &label, BLACK);
    }
    line(&mut img, (left, top), (left, bottom), BLACK, 1);
    line(&mut img, (left, bottom), (right, bottom), BLACK, 1);
    text(&mut img, 8, 6, "ms/frame", BLACK);
    text(
        &mut img,
        right as i64 - 30,
        bottom as i64 + 22,
        "units",
        BLACK,
    );

    for (i, (name, colour, pts)) in series.iter().enumerate() {
        let mut pts = pts.clone();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        for pair in pts.windows(2) {
            let a = (px(pair[0].0), py(pair[0].1));
            let b = (px(pair[1].0), py(pair[1].1));
            line(&mut img, a, b, *colour, 2);
        }
        for &(u, ms) in &pts {
            square(&mut img, px(u) as i64, py(ms) as i64, 3, *colour);
        }
        let ly = top as i64 + 4 + 14 * i as i64;
        square(&mut img, left as i64 + 12, ly + 5, 4, *colour);
        text(&mut img, left as i64 + 22, ly, name, BLACK);
    }
    img.save(path)
        .map_err(|e| AppError::Failed(format!("cannot write {}: {e}", path.display())))
}

/// `10^d` units as 1k, 10k, 1M, ...
fn units_label(d: i32) -> String {
    match d {
        ..=2 => format!("{}", 10i64.pow(d.max(0) as u32)),
        3..=5 => format!("{}k", 10i64.pow(d as u32 - 3)),
        _ => format!("{}M", 10i64.pow(d as u32 - 6)),
    }
}

/// `10^d` ms as 0.01, 0.1, 1, 10, ...
fn ms_label(d: i32) -> String {
    if d >= 0 {
        format!("{}", 10i64.pow(d as u32))
    } else {
        format!("{}", 10f64.powi(d))
    }
}

/// Sets pixel `(x, y)` when it is inside the image.
fn put(img: &mut RgbImage, x: i64, y: i64, c: Rgb<u8>) {
    if x >= 0 && y >= 0 && (x as u32) < img.width() && (y as u32) < img.height() {
        img.put_pixel(x as u32, y as u32, c);
    }
}

/// A filled square of half-side `r` centred on `(x, y)`.
fn square(img: &mut RgbImage, x: i64, y: i64, r: i64, c: Rgb<u8>) {
    for dy in -r..=r {
        for dx in -r..=r {
            put(img, x + dx, y + dy, c);
        }
    }
}

/// A line `width` pixels thick from `a` to `b`.
fn line(img: &mut RgbImage, a: (f64, f64), b: (f64, f64), c: Rgb<u8>, width: i64) {
    let steps = (b.0 - a.0).abs().max((b.1 - a.1).abs()).ceil().max(1.0) as i64;
    for s in 0..=steps {
        let t = s as f64 / steps as f64;
        let x = (a.0 + (b.0 - a.0) * t).round() as i64;
        let y = (a.1 + (b.1 - a.1) * t).round() as i64;
        for d in 0..width {
            put(img, x + d, y, c);
            put(img, x, y + d, c);
        }
    }
}

/// 3x5 glyphs, one row per string, for the characters the plot uses.
fn glyph(ch: char) -> [&'static str; 5] {
    match ch {
        '0' | 'O' => ["111", "101", "101", "101", "111"],
        '1' => ["010", "110", "010", "010", "111"],
        '2' => ["111", "001", "111", "100", "111"],
        '3' => ["111", "001", "111", "001", "111"],
        '4' => ["101", "101", "111", "001", "001"],
        '5' => ["111", "100", "111", "001", "111"],
        '6' => ["111", "100", "111", "101", "111"],
        '7' => ["111", "001", "001", "001", "001"],
        '8' => ["111", "101", "111", "101", "111"],
        '9' => ["111", "101", "111", "001", "111"],
        '.' => ["000", "000", "000", "000", "010"],
        '/' => ["001", "001", "010", "100", "100"],
        'k' => ["100", "101", "110", "101", "101"],
        'M' => ["101", "111", "111", "101", "101"],
        'm' => ["000", "000", "111", "111", "101"],
        's' => ["000", "011", "110", "011", "110"],
        'h' => ["100", "100", "111", "101", "101"],
        'o' => ["000", "000", "111", "101", "111"],
        'r' => ["000", "000", "111", "100", "100"],
        'd' => ["001", "001", "111", "101", "111"],
        'e' => ["000", "111", "111", "100", "111"],
        't' => ["010", "111", "010", "010", "011"],
        'a' => ["000", "110", "011", "101", "111"],
        'f' => ["011", "010", "111", "010", "010"],
        'u' => ["000", "000", "101", "101", "111"],
        'n' => ["000", "000", "110", "101", "101"],
        ',' => ["000", "000", "000", "010", "100"],
        'p' => ["000", "111", "101", "111", "100"],
        'i' => ["010", "000", "010", "010", "010"],
        'R' => ["110", "101", "110", "101", "101"],
        'C' => ["111", "100", "100", "100", "111"],
        'A' => ["010", "101", "111", "101", "101"],
        _ => ["000"; 5],
    }
}

/// Width of `s` in pixels.
fn text_width(s: &str) -> i64 {
    s.chars().count() as i64 * 4 * i64::from(SCALE)
}

/// Draws `s` with its top-left corner at `(x, y)`.
fn text(img: &mut RgbImage, x: i64, y: i64, s: &str, c: Rgb<u8>) {
    let k = i64::from(SCALE);
    for (i, ch) in s.chars().enumerate() {
        let gx = x + i as i64 * 4 * k;
        for (row, bits) in glyph(ch).iter().enumerate() {
            for (col, bit) in bits.bytes().enumerate() {
                if bit == b'1' {
                    square_at(img, gx + col as i64 * k, y + row as i64 * k, k, c);
                }
            }
        }
    }
}

/// A filled `k`x`k` square with its top-left corner at `(x, y)`.
fn square_at(img: &mut RgbImage, x: i64, y: i64, k: i64, c: Rgb<u8>) {
    for dy in 0..k {
        for dx in 0..k {
            put(img, x + dx, y + dy, c);
        }
    }
}
