//! A small deterministic byte mutator for the bounded fuzz runs: flips, overwrites, deletes,
//! inserts, truncates and duplicates, the way coverage-guided fuzzers mutate a corpus.
#![allow(dead_code)]

use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64;

/// Bytes that often matter to text parsers: digits, signs, separators, quotes, brackets.
const INTERESTING: &[u8] = b"0123456789-+.eE\n\r\t =\"'[]{},#;@GTSW~:XFL\xff\x00";

/// A seeded mutator.
pub struct Mutator {
    rng: Pcg64,
}

impl Mutator {
    /// A mutator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Self {
            rng: Pcg64::seed_from_u64(seed),
        }
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.rng.next_u64() % n as u64) as usize
        }
    }

    /// `input` with one to four random mutations.
    pub fn mutate(&mut self, input: &[u8]) -> Vec<u8> {
        let mut out = input.to_vec();
        for _ in 0..1 + self.below(4) {
            let len = out.len();
            match self.below(7) {
                0 if len > 0 => {
                    let i = self.below(len);
                    out[i] ^= 1 << self.below(8);
                }
                1 if len > 0 => {
                    let i = self.below(len);
                    out[i] = self.rng.next_u32() as u8;
                }
                2 if len > 0 => {
                    let i = self.below(len);
                    let n = (1 + self.below(8)).min(len - i);
                    out.drain(i..i + n);
                }
                3 => {
                    let i = self.below(len + 1);
                    let n = 1 + self.below(8);
                    let bytes: Vec<u8> = (0..n).map(|_| self.rng.next_u32() as u8).collect();
                    out.splice(i..i, bytes);
                }
                4 => {
                    let i = self.below(len + 1);
                    out.truncate(i);
                }
                5 if len > 0 => {
                    let from = self.below(len);
                    let n = (1 + self.below(32)).min(len - from);
                    let chunk = out[from..from + n].to_vec();
                    let to = self.below(len + 1);
                    out.splice(to..to, chunk);
                }
                _ if len > 0 => {
                    let i = self.below(len);
                    out[i] = INTERESTING[self.below(INTERESTING.len())];
                }
                _ => out.push(INTERESTING[self.below(INTERESTING.len())]),
            }
        }
        out
    }
}

/// Every file of the corpus folder `tests/corpus/<name>`, sorted by name.
pub fn corpus(name: &str) -> Vec<(String, Vec<u8>)> {
    // From the repository root (the facade's tests) or from a member crate (the app's).
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = if manifest.join("tests/corpus").is_dir() {
        manifest.to_path_buf()
    } else {
        manifest.join("..")
    };
    let dir = root.join("tests/corpus").join(name);
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect();
    files.sort();
    files
}
