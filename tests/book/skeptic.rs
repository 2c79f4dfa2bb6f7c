//! The book's Rust snippets, with `{{#include}}` expanded by build.rs, compiled (and run unless
//! marked `no_run`) by skeptic.
include!(concat!(env!("OUT_DIR"), "/skeptic-tests.rs"));
