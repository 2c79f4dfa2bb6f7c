//! Every kernel exercise as the book ships it: the kernel the reader starts from fails its
//! chapter's check with a [`Mismatch`] (a wrong element, not a crash), and the book's solution
//! passes the same check. Run on a machine with a GPU:
//! `cargo test --release --test gpu -- --ignored --test-threads=1 gpu_exercises::`.

use cmbook::chapters::exercises::{self, Version};
use cmbook::harness::Mismatch;

use crate::common::gpu;

fn the_exercise_fails_and_the_solution_passes(id: &str) {
    let exercise =
        exercises::find(id).unwrap_or_else(|| panic!("no kernel exercise {id}"));
    let gpu = gpu();
    let exercise = exercise.exercise;
    let starting = (exercise.function)(Version::Exercise);
    match (exercise.check)(&gpu, Version::Exercise) {
        Ok(passed) => panic!(
            "exercise {id}: `{starting}` passes the check ({passed}); as the book ships it, \
             it must fail"
        ),
        Err(err) => {
            let mismatch = err.downcast_ref::<Mismatch>().unwrap_or_else(|| {
                panic!("exercise {id}: `{starting}` failed, but not the check: {err:#}")
            });
            assert!(
                mismatch.kernel.contains(&starting),
                "exercise {id}: the mismatch names `{}`, not `{starting}`",
                mismatch.kernel
            );
            eprintln!("exercise {id}: {mismatch}");
        }
    }
    // The starting kernel failed the comparison and nothing else: the context still works.
    let passed = (exercise.check)(&gpu, Version::Solution).unwrap_or_else(|e| {
        panic!("exercise {id}: the solution fails its check: {e:#}")
    });
    assert!(passed.checked > 0 && !passed.sizes.is_empty());
    eprintln!("exercise {id}: the solution passes: {passed}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn exercise_9_5_the_copy_that_drops_its_last_round() {
    the_exercise_fails_and_the_solution_passes("9.5");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn exercise_8_4_the_transpose_that_ignores_the_pitch() {
    the_exercise_fails_and_the_solution_passes("8.4");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn exercise_1_4_the_copy_that_forgets_its_tail() {
    the_exercise_fails_and_the_solution_passes("1.4");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn exercise_2_4_the_tile_without_its_halo() {
    the_exercise_fails_and_the_solution_passes("2.4");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn exercise_3_4_the_tile_written_back_untransposed() {
    the_exercise_fails_and_the_solution_passes("3.4");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn exercise_4_3_the_partial_tile_left_unfilled() {
    the_exercise_fails_and_the_solution_passes("4.3");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn exercise_5_4_the_tie_kept_by_the_larger_split() {
    the_exercise_fails_and_the_solution_passes("5.4");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn exercise_6_3_cost_and_split_reduced_apart() {
    the_exercise_fails_and_the_solution_passes("6.3");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn exercise_7_4_the_warp_that_never_adds_up() {
    the_exercise_fails_and_the_solution_passes("7.4");
}

/// Runs without a GPU: a kernel exercise added to the registry gets a test above.
#[test]
fn every_kernel_exercise_has_a_test_here() {
    let source = include_str!("gpu_exercises.rs");
    for id in exercises::ids() {
        let test = format!("fn exercise_{}_", id.replace('.', "_"));
        assert!(source.contains(&test), "no `{test}…` test for exercise {id}");
    }
}

/// `examples/exercises`, as `cargo test` builds it next to this test.
fn exercises_example() -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    let path = exe
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples")
        .join(format!("exercises{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} is not built (cargo test builds the examples)",
        path.display()
    );
    path
}

/// Runs without a GPU: the reader's command refuses an exercise that does not exist before it
/// looks for a GPU, and its `--help` names every kernel exercise.
#[test]
fn the_readers_command_names_every_exercise_and_refuses_others() {
    let out =
        std::process::Command::new(exercises_example()).arg("9.9").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.starts_with("error: no kernel exercise 9.9"), "{stderr}");
    let help =
        std::process::Command::new(exercises_example()).arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    for id in exercises::ids() {
        assert!(help.contains(&id), "--help does not name exercise {id}: {help}");
    }
}
