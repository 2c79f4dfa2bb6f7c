//! Bad input gets a clear one-line message and exit code 2, never a panic or a wrong answer;
//! `--help` states every default and what a run needs; a reader's run writes outside the
//! book's committed figures. The examples are run as a reader runs them (`cargo test` builds
//! them next to this test), for every example of the chapter registry.

use std::path::Path;
use std::process::Command;

use cmbook::chapters::{self, ALL};
use cmbook::harness::Needs;

use crate::common::{run_example, Outcome};

fn run(name: &str, args: &[&str]) -> Outcome {
    run_example(name, args)
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

#[test]
fn numeric_flags_refuse_zero_negative_text_and_overflow() {
    for c in ALL {
        let name = c.example;
        assert_refused(name, &["--reps", "0"], &["--reps"]);
        assert_refused(name, &["--reps", "-3"], &["-3"]);
        assert_refused(name, &["--reps", "many"], &["--reps"]);
        assert_refused(name, &["--reps", "99999999999999999999"], &["--reps"]);
        assert_refused(name, &["--seed", "-1"], &["-1"]);
        assert_refused(name, &["--no-such-flag"], &["--no-such-flag"]);
    }
    assert_refused("ceilings", &["--ceiling-mib", "0"], &["--ceiling-mib"]);
    assert_refused("ceilings", &["--ceiling-mib", "1e9"], &["--ceiling-mib"]);
    assert_refused("ceilings", &["--max-transfer-mib", "-5"], &["-5"]);
    assert_refused("atax", &["--side", "0"], &["--side"]);
    assert_refused("atax", &["--side", "1000000"], &["--side"]);
    assert_refused("atax", &["--ceiling-mib", "x"], &["--ceiling-mib"]);
    assert_refused("coalescing", &["--transpose-side", "0"], &["--transpose-side"]);
    assert_refused("tiled_matmul", &["--side", "0"], &["--side"]);
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
    assert_refused(
        "reproduce",
        &["--out", "x", "--sanitize", "--jobs", "0"],
        &["--jobs"],
    );
    assert_refused(
        "reproduce",
        &["--out", "x", "--sanitize", "--jobs", "65"],
        &["--jobs"],
    );
    assert_refused("reproduce", &["--out", "x", "--jobs", "4"], &["--sanitize"]);
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
    assert_refused("cmm_diagonal", &["--matrices", "0", "--cpu-only"], &["--matrices"]);
    assert_refused("cmm_diagonal", &["--matrices", "46340"], &["46339"]);
    assert_refused(
        "cmm_diagonal",
        &["--dims", "20,2", "--matrices", "5"],
        &["--matrices"],
    );
    assert_refused("cmm_diagonal", &["--cpu-only"], &["--dims"]);
    assert_refused("cmm_beyond", &["--matrices", "0"], &["--matrices"]);
    assert_refused("cmm_beyond", &["--matrices", "100,-4"], &["-4"]);
    assert_refused("cmm_beyond", &["--matrices", "16385"], &["16384"]);
    assert_refused(
        "cmm_beyond",
        &["--matrices", "99999999999999999999"],
        &["--matrices"],
    );
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
    assert!(o.stdout.contains("4 matrices"), "{}", o.stdout);
    let one = run("cmm_diagonal", &["--dims", "3,5", "--cpu-only"]);
    assert_eq!(one.code, 0, "{}", one.stderr);
    assert!(
        one.stdout.contains("1 matrix") && !one.stdout.contains("1 matrices"),
        "{}",
        one.stdout
    );
}

#[test]
fn help_states_what_a_run_needs_every_default_and_where_it_writes() {
    for c in ALL {
        let o = run(c.example, &["--help"]);
        assert_eq!(o.code, 0, "{}: {}", c.example, o.stderr);
        let help = o.stdout;
        assert!(help.contains(c.needs.help_line()), "{}: {help}", c.example);
        if let Some(gpu) = c.needs.gpu_line() {
            assert!(help.contains(&gpu), "{}: {help}", c.example);
        }
        assert!(help.contains("target/measured/<device>/"), "{}: {help}", c.example);
        let reps = format!("[default: {}; --quick: {}]", c.reps.full, c.reps.quick);
        assert!(help.contains(&reps), "{}: --reps default missing: {help}", c.example);
        // Every option that takes a value states its default (or is a list of choices, or
        // has no default: the output folder, the one-chain modes). The short help has one
        // line per option.
        let short = run(c.example, &["-h"]).stdout;
        for line in short.lines().filter(|l| l.trim_start().starts_with("--")) {
            let takes_value = line.contains(" <");
            // No default: the output folder and cmm_diagonal's one-chain modes.
            let optional = ["--out", "--dims", "--matrices <N>", "--help"]
                .iter()
                .any(|o| line.trim_start().starts_with(o));
            if takes_value && !optional {
                assert!(
                    line.contains("[default:") || line.contains("[possible values:"),
                    "{}: an option without a stated default: {line}",
                    c.example
                );
            }
        }
    }
}

#[test]
fn a_readers_run_writes_under_the_build_folder_never_into_the_books_figures() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Every example starts through run::main, whose default is this folder.
    let out = cmbook::harness::run::default_out("Some GPU");
    assert!(!out.starts_with(root.join("figures")), "{}", out.display());
    assert!(out.starts_with(cmbook::harness::run::target_dir()), "{}", out.display());
    let status = || {
        Command::new("git")
            .args(["status", "--porcelain", "--untracked-files=all", "--", "."])
            .current_dir(root)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    };
    let before = status();
    // Examples run for real with their defaults: a measuring one (the CPU chapter, which
    // writes figures) and a one-chain answer.
    let o = run("loop_permutation", &["--quick", "--reps", "1"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let written = o
        .stdout
        .lines()
        .find_map(|l| l.split("figures and data written to ").nth(1))
        .and_then(|rest| rest.split(" (the book").next())
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| panic!("no output folder named: {}", o.stdout));
    assert!(written.starts_with(cmbook::harness::run::target_dir().join("measured")));
    assert!(
        written.join("data/tiling-traversal.csv").exists(),
        "{}",
        written.display()
    );
    let o = run("cmm_diagonal", &["--dims", "20,2,30,12,8", "--cpu-only"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    // Where git is at hand (a checkout), nothing tracked or untracked-but-not-ignored changed.
    if let Some(before) = before {
        assert_eq!(status().unwrap(), before, "a default run changed the checkout");
    }
}

#[test]
#[cfg_attr(
    cmbook_cuda_driver,
    ignore = "this machine has a CUDA driver: the no-GPU message cannot be seen here"
)]
fn without_a_gpu_every_example_says_so_in_one_line() {
    let scratch =
        std::env::temp_dir().join("cmbook-cli-test").to_string_lossy().into_owned();
    let mut cases: Vec<(&str, Vec<&str>)> = ALL
        .iter()
        .filter(|c| c.needs != Needs::Cpu)
        .map(|c| (c.example, vec!["--quick"]))
        .collect();
    cases.push(("cmm_diagonal", vec!["--dims", "20,2,30,12,8"]));
    cases.push(("reproduce", vec!["--out", scratch.as_str(), "--sanitize"]));
    for (name, args) in cases {
        let o = run(name, &args);
        assert_eq!(o.code, 2, "{name}: {}", o.stderr);
        assert_eq!(o.stderr.lines().count(), 1, "{name}: {}", o.stderr);
        assert!(
            o.stderr.contains("no CUDA driver: libcuda.so was not found"),
            "{name}: {}",
            o.stderr
        );
    }
    // A request the CPU can answer says how, still in one line.
    let o = run("cmm_diagonal", &["--dims", "20,2,30,12,8"]);
    assert!(o.stderr.contains("add --cpu-only"), "{}", o.stderr);
    assert!(chapters::by_example("cmm_diagonal").is_some());
}

/// Runs the example `name` with `args` under a resource limit set in the child before it
/// starts (as `ulimit` would in a shell), with `SIGXFSZ` ignored, so that a write past a
/// file-size limit fails with an error the example must report instead of killing it.
#[cfg(unix)]
fn run_limited(
    name: &str,
    args: &[&str],
    resource: libc::__rlimit_resource_t,
    bytes: u64,
) -> crate::common::Outcome {
    use std::os::unix::process::CommandExt;
    let mut command = Command::new(crate::common::example(name));
    command.args(args);
    // SAFETY: between fork and exec only async-signal-safe calls (signal, setrlimit) on
    // values owned by the closure.
    unsafe {
        command.pre_exec(move || {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let limit = libc::rlimit { rlim_cur: bytes, rlim_max: bytes };
            if libc::setrlimit(resource, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    crate::common::outcome(command.output().unwrap())
}

#[test]
#[cfg(target_os = "linux")]
fn a_chain_whose_table_cannot_fit_is_refused_before_it_is_allocated() {
    // 1 GiB of address space (`ulimit -v 1048576`), whatever memory the machine has: the
    // table of 46339 matrices needs 24 GiB, of 46340 dimensions as much.
    let dims = vec!["7"; 46_340].join(",");
    for args in [
        &["--matrices", "46339", "--cpu-only"][..],
        &["--dims", dims.as_str(), "--cpu-only"],
    ] {
        let o = run_limited("cmm_diagonal", args, libc::RLIMIT_AS, 1 << 30);
        let shown = format!("{} ({} arguments)", args[0], args.len());
        assert_eq!(o.code, 2, "{shown}: {}", o.stderr);
        assert_eq!(o.stderr.lines().count(), 1, "{shown}: {}", o.stderr);
        assert!(
            o.stderr.starts_with("error: n = ")
                && o.stderr.contains("needs 24.0 GiB")
                && o.stderr.contains("this process can have"),
            "{shown}: {}",
            o.stderr
        );
        assert!(!o.stdout.contains("optimal cost"), "{}", o.stdout);
    }
}

#[test]
fn a_long_cpu_solve_says_up_front_what_it_takes() {
    use std::io::BufRead;
    // Past the serial program's range: the table's size and the work come first, before the
    // solve (seconds in a release build, minutes in a debug one), which is not waited for.
    let mut child = Command::new(crate::common::example("cmm_diagonal"))
        .args(["--matrices", "2001", "--cpu-only"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    let stdout = child.stdout.take().unwrap();
    std::io::BufReader::new(stdout).read_line(&mut first).unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        first.starts_with("n = 2001 matrices on the CPU DP")
            && first.contains("a table of 0.0 GiB")
            && first.contains("1.34e9 candidate splits"),
        "{first}"
    );
    // A short one answers at once, as before.
    let o = run("cmm_diagonal", &["--matrices", "50", "--cpu-only"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.starts_with("n = 50 matrices (CPU only)"), "{}", o.stdout);
}

#[test]
fn a_flag_given_twice_or_one_that_would_be_ignored_is_refused() {
    let twice = ["--dims", "2,3", "--dims", "4,5", "--cpu-only"];
    assert_refused(
        "cmm_diagonal",
        &twice,
        &["--dims", "cannot be used multiple times"],
    );
    // Every list is given once, comma-separated; only --section is a flag to repeat.
    let twice = ["--matrices", "100", "--matrices", "200"];
    assert_refused(
        "cmm_beyond",
        &twice,
        &["--matrices", "cannot be used multiple times"],
    );
    let twice = ["--sides", "256", "--sides", "253"];
    assert_refused(
        "hopper_memory",
        &twice,
        &["--sides", "cannot be used multiple times"],
    );
    for chain in [&["--dims", "2,3,4"][..], &["--matrices", "5"]] {
        for cpu_only in [&[][..], &["--cpu-only"]] {
            let args = [chain, cpu_only, &["--part", "stride"]].concat();
            assert_refused("cmm_diagonal", &args, &["--part"]);
        }
    }
    assert_refused("cmm_diagonal", &["--cpu-only", "--part", "paper"], &["--part"]);
    // --book is read by --compare alone, whatever mode is given instead.
    let book =
        std::env::temp_dir().join("cmbook-cli-book").to_string_lossy().into_owned();
    let out =
        std::env::temp_dir().join("cmbook-cli-out").to_string_lossy().into_owned();
    for mode in [
        &[][..],
        &["--redraw-only"],
        &["--roofline"],
        &["--sanitize"],
        &["--counters"],
        &["--quick"],
        &["--redraw-only", "--quick"],
    ] {
        let args =
            [&["--out", out.as_str(), "--book", book.as_str()][..], mode].concat();
        assert_refused("reproduce", &args, &["--book"]);
    }
    for mode in ["--redraw-only", "--compare", "--roofline", "--counters"] {
        assert_refused("reproduce", &["--out", &out, mode, "--jobs", "4"], &["--jobs"]);
        assert_refused(
            "reproduce",
            &["--out", &out, mode, "--sanitizer", "x"],
            &["--sanitizer"],
        );
    }
    for mode in ["--redraw-only", "--compare", "--roofline"] {
        assert_refused("reproduce", &["--out", &out, mode, "--quick"], &["--quick"]);
        assert_refused(
            "reproduce",
            &["--out", &out, mode, "--only", "atax"],
            &["--only"],
        );
    }
    let only_twice = ["--out", &out, "--only", "atax", "--only", "ceilings"];
    assert_refused(
        "reproduce",
        &only_twice,
        &["--only", "cannot be used multiple times"],
    );
    assert!(!Path::new(&out).exists(), "a refused run created {out}");
}

#[test]
#[cfg(unix)]
fn an_io_error_is_exit_code_2_naming_its_cause() {
    // Every file the run writes is limited to 0 bytes (`ulimit -f 0`): its first write fails.
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("run").to_string_lossy().into_owned();
    let args = ["--quick", "--reps", "1", "--out", dir.as_str()];
    let o = run_limited("loop_permutation", &args, libc::RLIMIT_FSIZE, 0);
    assert_eq!(o.code, 2, "stdout: {} stderr: {}", o.stdout, o.stderr);
    assert!(o.stderr.starts_with("error:"), "{}", o.stderr);
    assert!(o.stderr.contains("File too large"), "{}", o.stderr);
    assert!(!o.stderr.contains("panicked"), "{}", o.stderr);
}

#[test]
fn a_quick_run_into_the_books_own_figures_is_refused() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let figures = root.join("figures");
    let listing = |dir: &Path| {
        let mut files: Vec<_> = std::fs::read_dir(dir.join("data"))
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (e.file_name(), e.metadata().unwrap().modified().unwrap())
            })
            .collect();
        files.sort();
        files
    };
    let before = listing(&figures);
    let book = figures.to_string_lossy().into_owned();
    let words = ["--quick", "book's own figures", "another folder"];
    assert_refused(
        "loop_permutation",
        &["--quick", "--reps", "1", "--out", &book],
        &words,
    );
    assert_refused("reproduce", &["--quick", "--out", &book], &words);
    let counting = ["--quick", "--counters", "--only", "atax", "--out", &book];
    assert_refused("reproduce", &counting, &words);
    // The same folder by a relative name, from the checkout.
    let relative = |name: &str, args: &[&str]| {
        crate::common::outcome(
            Command::new(crate::common::example(name))
                .args(args)
                .current_dir(root)
                .output()
                .unwrap(),
        )
    };
    for (name, args) in [
        ("loop_permutation", &["--quick", "--reps", "1", "--out", "figures/."][..]),
        ("reproduce", &["--quick", "--only", "loop_permutation", "--out", "./figures"]),
    ] {
        let o = relative(name, args);
        assert_eq!(o.code, 2, "{name} {args:?}: {} {}", o.stdout, o.stderr);
        assert!(o.stderr.contains("another folder"), "{name}: {}", o.stderr);
    }
    assert_eq!(listing(&figures), before, "a refused run wrote into figures/data");
}

#[test]
fn a_budget_outside_its_range_is_refused_before_a_gpu_is_looked_for() {
    let huge = "18446744073709551616";
    for bad in ["0", "--budget-mib=-1", "NaN", "inf", "--budget-mib=-inf", "1e30", huge]
    {
        let args: Vec<&str> = match bad.strip_prefix("--budget-mib=") {
            Some(_) => vec![bad],
            None => vec!["--budget-mib", bad],
        };
        assert_refused("tiled_matmul", &args, &["--budget-mib"]);
    }
    assert_refused("tiled_matmul", &["--budget-mib", "1048577"], &["1048576"]);
}
