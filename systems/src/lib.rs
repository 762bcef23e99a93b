//! horde-systems: the frame's stages and the crossbeam job graph that runs them.
#![warn(missing_docs)]
