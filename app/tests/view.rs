//! `horde view`, driven through the built binary. With the `viewer` feature: a real window
//! under Xvfb with software OpenGL (mesa llvmpipe) runs 120 frames and saves a screenshot,
//! which must have the window's size, many colours and the units' group colours. Without
//! it: the command says how to rebuild and exits with code 2.

use std::process::{Command, Output};

mod common;

/// Runs the binary with `args`.
fn horde(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_horde"))
        .args(args)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .expect("the horde binary runs")
}

#[cfg(not(feature = "viewer"))]
#[test]
fn without_the_feature_view_says_how_to_rebuild() {
    let out = horde(&["view"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    assert!(stderr.contains("--features viewer"), "{stderr}");
}

#[cfg(feature = "viewer")]
mod window {
    use super::{common, horde};
    use std::collections::HashSet;
    use std::io::{BufRead, BufReader};
    use std::path::PathBuf;
    use std::process::{Child, Command, Stdio};
    use std::time::{Duration, Instant};

    /// The unit colours of groups 0, 1 and 2 (`GROUP_COLOURS` in app/src/render.rs), which
    /// the built-in demo's three groups are drawn in.
    const GROUPS: [[u8; 3]; 3] = [[220, 30, 30], [150, 40, 200], [255, 130, 0]];

    /// An Xvfb server this test started; killed when dropped.
    struct Xvfb {
        child: Child,
        display: String,
    }

    impl Drop for Xvfb {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    /// Starts Xvfb on a free display (it picks one and tells us through `-displayfd`), or
    /// `None` when Xvfb is not installed.
    fn start_xvfb() -> Option<Xvfb> {
        let spawned = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                "1600x1000x24",
                "-nolisten",
                "tcp",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn();
        let mut child = match spawned {
            Ok(child) => child,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => panic!("Xvfb is installed but does not start: {e}"),
        };
        let stdout = child.stdout.take().expect("piped stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("Xvfb reports its display");
        let n: u32 = line
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("Xvfb printed {line:?}, not a display number"));
        Some(Xvfb {
            child,
            display: format!(":{n}"),
        })
    }

    /// A fresh folder for one test's screenshot (removed when the test ends) and the
    /// screenshot's path in it.
    fn temp_png(test: &str) -> (common::Scratch, PathBuf) {
        let dir = common::scratch("view", test);
        let png = dir.join("view.png");
        (dir, png)
    }

    #[test]
    fn a_real_window_runs_120_frames_and_saves_a_screenshot_of_the_crowd() {
        let Some(x) = start_xvfb() else {
            println!(
                "SKIP: Xvfb is not installed, so no display server can be started for the \
                 viewer's window test (apt-get install -y xvfb libgl1-mesa-dri)"
            );
            return;
        };
        let (_dir, png) = temp_png("screenshot");
        let mut child = Command::new(env!("CARGO_BIN_EXE_horde"))
            .args([
                "view",
                "--frames",
                "120",
                "--screenshot",
                png.to_str().expect("UTF-8 temp path"),
                "--size",
                "960x600",
                "--units",
                "3000",
                "--threads",
                "2",
            ])
            .env("DISPLAY", &x.display)
            .env_remove("WAYLAND_DISPLAY")
            .env("LIBGL_ALWAYS_SOFTWARE", "1")
            .env("WINIT_X11_SCALE_FACTOR", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the horde binary starts");
        let started = Instant::now();
        while child.try_wait().expect("wait").is_none() {
            if started.elapsed() > Duration::from_secs(300) {
                let _ = child.kill();
                panic!("horde view did not finish within 300 s");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let out = child.wait_with_output().expect("output");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "exit {:?}\nstdout: {stdout}\nstderr: {stderr}",
            out.status.code()
        );
        assert!(stdout.contains("frame 120"), "{stdout}");
        let image = image::open(&png).expect("a PNG").to_rgb8();
        assert_eq!(
            (image.width(), image.height()),
            (960, 600),
            "the window's size"
        );
        let colours: HashSet<[u8; 3]> = image.pixels().map(|p| p.0).collect();
        assert!(
            colours.len() > 200,
            "only {} distinct colours: blank or broken",
            colours.len()
        );
        let near = |a: [u8; 3], b: [u8; 3]| a.iter().zip(b).all(|(&x, y)| x.abs_diff(y) <= 3);
        for (g, want) in GROUPS.iter().enumerate() {
            let n = image.pixels().filter(|p| near(p.0, *want)).count();
            assert!(
                n >= 100,
                "group {g}: only {n} pixels of its colour {want:?}"
            );
        }
        // The panel (left) differs from the map (right): the window is not one flat colour.
        let left: HashSet<[u8; 3]> = (0..600).map(|y| image.get_pixel(5, y).0).collect();
        assert!(left.len() < colours.len());
    }

    #[test]
    fn bad_input_exits_2_before_any_window_opens() {
        let out = horde(&["view", "no/such/scenario.toml"]);
        let run = horde(&["run", "no/such/scenario.toml"]);
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(run.status.code(), Some(2));
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&run.stderr),
            "the same error as horde run"
        );
        for args in [
            &["view", "--screenshot", "shot.jpg"][..],
            &["view", "--frames", "0"],
            &["view", "--threads", "0"],
            &["view", "--size", "12x12"],
        ] {
            let out = horde(args);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
            assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        }
    }
}
