//! Bad input gets a clear one-line message and exit code 2, never a panic or a wrong answer.
//! The examples are run as a reader runs them (`cargo test` builds them next to this test).
//! On a machine without a GPU, input that passes the checks ends with the one-line
//! "no CUDA driver" message and exit code 2, which is tested too.

use std::path::PathBuf;
use std::process::Command;

fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().unwrap().parent().unwrap();
    let path = profile_dir
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} is not built (cargo test builds the examples)",
        path.display()
    );
    path
}

struct Outcome {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(name: &str, args: &[&str]) -> Outcome {
    // No GPU for these tests, even on a machine that has one: a missing driver library is what
    // we want to see after the argument checks. An empty library path hides libcuda only where
    // it is not installed system-wide, so the no-GPU assertions below accept either outcome there.
    let out = Command::new(example(name)).args(args).output().unwrap();
    Outcome {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into(),
        stderr: String::from_utf8_lossy(&out.stderr).into(),
    }
}

fn assert_refused(name: &str, args: &[&str], words: &[&str]) {
    let o = run(name, args);
    assert_eq!(
        o.code, 2,
        "{name} {args:?} should exit 2; stdout: {} stderr: {}",
        o.stdout, o.stderr
    );
    assert!(!o.stderr.contains("panicked"), "{name} {args:?} panicked: {}", o.stderr);
    assert!(o.stderr.starts_with("error:"), "{name} {args:?}: {}", o.stderr);
    for w in words {
        assert!(
            o.stderr.contains(w),
            "{name} {args:?}: expected `{w}` in: {}",
            o.stderr
        );
    }
    assert!(
        !o.stdout.contains("optimal cost"),
        "{name} {args:?} printed an answer: {}",
        o.stdout
    );
}

fn gpu_present() -> bool {
    // SAFETY: only tries to dlopen libcuda.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

#[test]
fn numeric_flags_refuse_zero_negative_text_and_overflow() {
    for name in [
        "ceilings",
        "memory_spaces",
        "coalescing",
        "loop_permutation",
        "tiled_matmul",
        "cmm_diagonal",
        "cmm_beyond",
        "atax",
    ] {
        assert_refused(name, &["--reps", "0"], &["--reps"]);
        assert_refused(name, &["--reps", "-3"], &["-3"]);
        assert_refused(name, &["--reps", "many"], &["--reps"]);
        assert_refused(name, &["--reps", "99999999999999999999"], &["--reps"]);
        assert_refused(name, &["--seed", "-1"], &["-1"]);
        assert_refused(name, &["--no-such-flag"], &["--no-such-flag"]);
    }
    assert_refused("ceilings", &["--max-copy-mib", "0"], &["--max-copy-mib"]);
    assert_refused("ceilings", &["--max-copy-mib", "1e9"], &["--max-copy-mib"]);
    assert_refused("ceilings", &["--max-transfer-mib", "-5"], &["-5"]);
    assert_refused("atax", &["--large-side", "0"], &["--large-side"]);
    assert_refused("atax", &["--large-side", "1000000"], &["--large-side"]);
    assert_refused("atax", &["--ceiling-mib", "x"], &["--ceiling-mib"]);
    assert_refused("memory_spaces", &["--stencil-n", "0"], &["--stencil-n"]);
    assert_refused("memory_spaces", &["--stencil-n", "99999999999"], &["--stencil-n"]);
    assert_refused("memory_spaces", &["--signal-matrices", "-2"], &["-2"]);
    assert_refused("memory_spaces", &["--chase-steps", "0"], &["--chase-steps"]);
    assert_refused(
        "reproduce",
        &["--out", "x", "--only", "no_such_chapter"],
        &["no_such_chapter"],
    );
    assert_refused("reproduce", &["--only", "ceilings"], &["--out"]);
}

#[test]
fn chains_that_cannot_be_solved_are_refused_with_the_reason() {
    assert_refused("cmm_diagonal", &["--dims", "5", "--cpu-only"], &["2 dimensions"]);
    assert_refused("cmm_diagonal", &["--dims", "3,0,4", "--cpu-only"], &["zero"]);
    assert_refused("cmm_diagonal", &["--dims", "3,-1,4", "--cpu-only"], &["-1"]);
    assert_refused("cmm_diagonal", &["--dims", "3,x,4", "--cpu-only"], &["--dims"]);
    assert_refused(
        "cmm_diagonal",
        &["--dims", "3,4294967296", "--cpu-only"],
        &["--dims"],
    );
    assert_refused("cmm_diagonal", &["--n", "0", "--cpu-only"], &["--n"]);
    assert_refused("cmm_diagonal", &["--n", "46340"], &["46339"]);
    assert_refused("cmm_diagonal", &["--dims", "20,2", "--n", "5"], &["--n"]);
    assert_refused("cmm_diagonal", &["--cpu-only"], &["--dims"]);
    assert_refused("cmm_beyond", &["--sizes", "0"], &["--sizes"]);
    assert_refused("cmm_beyond", &["--sizes", "100,-4"], &["-4"]);
    assert_refused("cmm_beyond", &["--sizes", "16385"], &["16384"]);
    assert_refused("cmm_beyond", &["--sizes", "99999999999999999999"], &["--sizes"]);
    assert_refused("cmm_beyond", &["--part", "everything"], &["--part"]);
    // Costs beyond 64 bits: refused, not wrapped, with or without a GPU.
    let huge = "4000000000,4000000000,4000000000,4000000000";
    assert_refused("cmm_diagonal", &["--dims", huge, "--cpu-only"], &["does not fit"]);
    assert_refused("cmm_diagonal", &["--dims", huge], &["does not fit"]);
}

#[test]
fn the_worked_example_is_answered_on_the_cpu() {
    let o = run("cmm_diagonal", &["--dims", "20,2,30,12,8", "--cpu-only"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("optimal cost: 1232 scalar multiplications"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("optimal order: (A1((A2A3)A4))"), "{}", o.stdout);
}

#[test]
fn without_a_gpu_every_example_says_so_in_one_line() {
    if gpu_present() {
        eprintln!("SKIPPED: this machine has a CUDA driver; the no-GPU message cannot be seen here");
        return;
    }
    let scratch =
        std::env::temp_dir().join("cmbook-cli-test").to_string_lossy().into_owned();
    for (name, args) in [
        ("ceilings", vec!["--quick"]),
        ("memory_spaces", vec!["--quick"]),
        ("coalescing", vec!["--quick"]),
        ("cmm_diagonal", vec![]),
        ("cmm_diagonal", vec!["--dims", "20,2,30,12,8"]),
        ("atax", vec!["--quick"]),
        ("tiled_matmul", vec!["--quick"]),
        ("cmm_beyond", vec!["--quick"]),
        ("reproduce", vec!["--out", scratch.as_str(), "--sanitize"]),
    ] {
        let o = run(name, &args);
        assert_eq!(o.code, 2, "{name}: {}", o.stderr);
        assert_eq!(o.stderr.lines().count(), 1, "{name}: {}", o.stderr);
        assert!(
            o.stderr.contains("no CUDA driver: libcuda.so was not found"),
            "{name}: {}",
            o.stderr
        );
    }
}
