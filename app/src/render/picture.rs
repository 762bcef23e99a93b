//! The files pictures go to: PNG or animated GIF by the path's extension ([`PictureKind`]),
//! GIF frames written one at a time ([`GifWriter`]).

use std::collections::HashMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use image::RgbImage;

use crate::AppError;

/// The kind of picture a path asks for, by extension (case-insensitive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PictureKind {
    /// `.png`: one frame.
    Png,
    /// `.gif`: an animation.
    Gif,
}

impl PictureKind {
    /// The kind for `path`'s extension.
    ///
    /// # Errors
    /// [`AppError::BadInput`] naming the path when it ends in neither `.png` nor `.gif`.
    pub fn from_path(path: &Path) -> Result<Self, AppError> {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if ext.eq_ignore_ascii_case("png") {
            Ok(Self::Png)
        } else if ext.eq_ignore_ascii_case("gif") {
            Ok(Self::Gif)
        } else {
            Err(AppError::BadInput(format!(
                "{}: the output must end in .png or .gif",
                path.display()
            )))
        }
    }
}

/// Writes an animated GIF frame by frame. Each frame gets its own exact palette when it has
/// at most 256 colours (the usual case: the pictures use few colours), else a NeuQuant one.
pub struct GifWriter {
    encoder: gif::Encoder<BufWriter<File>>,
    path: PathBuf,
    delay: u16,
    frames: u32,
}

impl std::fmt::Debug for GifWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GifWriter")
            .field("path", &self.path)
            .field("frames", &self.frames)
            .finish_non_exhaustive()
    }
}

impl GifWriter {
    /// Creates `path` for `width x height` frames shown `delay_s` seconds each, looping.
    ///
    /// # Errors
    /// [`AppError::BadInput`] for sides that do not fit a GIF, [`AppError::Failed`] when the
    /// file cannot be written.
    pub fn create(path: &Path, width: u32, height: u32, delay_s: f32) -> Result<Self, AppError> {
        let (Ok(w), Ok(h)) = (u16::try_from(width), u16::try_from(height)) else {
            return Err(AppError::BadInput(format!(
                "a GIF cannot be {width}x{height} pixels"
            )));
        };
        let fail = |e: &dyn std::fmt::Display| AppError::Failed(format!("{}: {e}", path.display()));
        let file = File::create(path).map_err(|e| fail(&e))?;
        let mut encoder =
            gif::Encoder::new(BufWriter::new(file), w, h, &[]).map_err(|e| fail(&e))?;
        encoder
            .set_repeat(gif::Repeat::Infinite)
            .map_err(|e| fail(&e))?;
        let delay = (delay_s * 100.0).round().clamp(2.0, 6000.0) as u16;
        Ok(Self {
            encoder,
            path: path.to_path_buf(),
            delay,
            frames: 0,
        })
    }

    /// Appends a frame (the picture must have the size given to [`GifWriter::create`]).
    ///
    /// # Errors
    /// [`AppError::Failed`] when the frame cannot be written.
    pub fn push(&mut self, image: &RgbImage) -> Result<(), AppError> {
        let (Ok(w), Ok(h)) = (u16::try_from(image.width()), u16::try_from(image.height())) else {
            return Err(AppError::Failed("GIF frame too large".into()));
        };
        let mut frame = match indexed(image) {
            Some((pixels, palette)) => gif::Frame::from_palette_pixels(w, h, pixels, palette, None),
            None => gif::Frame::from_rgb_speed(w, h, image.as_raw(), 10),
        };
        frame.delay = self.delay;
        self.encoder
            .write_frame(&frame)
            .map_err(|e| AppError::Failed(format!("{}: {e}", self.path.display())))?;
        self.frames += 1;
        Ok(())
    }

    /// Frames written so far.
    #[must_use]
    pub fn frames(&self) -> u32 {
        self.frames
    }
}

/// The picture as palette indices and an exact palette, or `None` above 256 colours.
fn indexed(image: &RgbImage) -> Option<(Vec<u8>, Vec<u8>)> {
    let mut lookup: HashMap<[u8; 3], u8> = HashMap::new();
    let mut palette = Vec::new();
    let mut pixels = Vec::with_capacity(image.as_raw().len() / 3);
    for p in image.pixels() {
        let index = match lookup.get(&p.0) {
            Some(&i) => i,
            None => {
                let i = u8::try_from(lookup.len()).ok()?;
                lookup.insert(p.0, i);
                palette.extend_from_slice(&p.0);
                i
            }
        };
        pixels.push(index);
    }
    Some((pixels, palette))
}
