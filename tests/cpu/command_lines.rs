//! Random command lines for every example, parsed and checked in process as the example
//! parses and checks them before it opens a GPU: they must never panic and never hang, every
//! refusal must be exit code 2, and what gets through must hold together (no flag given twice
//! unless it is a list to repeat, no `--book` without `--compare`, no `--quick` run into the
//! book's own figures).
//!
//! The grammar is read from each example's own clap definition (its flags, which take a
//! value, which are choices and which may repeat); the values are numbers in and out of every
//! range, negatives, NaN, infinities, huge numbers, lists, empty strings, Unicode, paths and,
//! on unix, bytes that are not UTF-8; unknown flags and stray positionals are mixed in.

use std::ffi::OsString;
use std::path::Path;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use clap::{ArgAction, CommandFactory, Parser};
use cmbook::chapters::reproduce_args;
use cmbook::harness::args::Example;
use cmbook::harness::run::{check_before_gpu, exit_code_for, same_folder};
use cmbook::harness::Chapter;
use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestRunner};

/// Cases per example: 11 examples (10 chapters and `reproduce`), 11,000 command lines in all.
const CASES_PER_EXAMPLE: u32 = 1000;
/// Longer than all of them take in a debug build; a command line that takes longer hangs.
const DEADLINE: Duration = Duration::from_secs(240);

/// One flag of an example, as its clap definition declares it.
#[derive(Debug, Clone)]
struct Flag {
    long: String,
    takes_value: bool,
    choices: Vec<String>,
    /// A flag meant to be given several times (`hopper_memory --section`).
    repeats: bool,
}

/// The only flags meant to be given more than once (`hopper_memory --section`, one
/// `multi_gpu --torch-reference` CSV per GPU count); every other one given twice is refused,
/// never merged (a list is given once, comma-separated).
const REPEATED_BY_DESIGN: &[&str] = &["section", "torch-reference"];

/// The flags of `command`, as its clap definition declares them.
fn grammar(name: &str, command: &clap::Command) -> Vec<Flag> {
    command
        .get_arguments()
        .filter_map(|a| {
            let long = a.get_long()?.to_string();
            let appends =
                matches!(a.get_action(), ArgAction::Append | ArgAction::Count);
            assert_eq!(
                appends,
                REPEATED_BY_DESIGN.contains(&long.as_str()),
                "{name}: --{long} is {}declared to take several occurrences",
                if appends { "" } else { "not " }
            );
            Some(Flag {
                takes_value: a.get_action().takes_values(),
                choices: a
                    .get_possible_values()
                    .iter()
                    .map(|v| v.get_name().to_string())
                    .collect(),
                repeats: appends,
                long,
            })
        })
        .collect()
}

/// A value for any flag: mostly one the flag could take (one of its choices, a small number
/// or list, a folder), so that whole command lines get through clap to the checks after it,
/// else a hostile one ([`hostile`]).
fn value(choices: Vec<String>) -> BoxedStrategy<OsString> {
    let plausible = if choices.is_empty() {
        prop_oneof![
            (1u64..5000).prop_map(|n| OsString::from(n.to_string())),
            proptest::collection::vec(1u64..100, 1..6).prop_map(|v| {
                let v: Vec<String> = v.iter().map(u64::to_string).collect();
                OsString::from(v.join(","))
            }),
            Just(OsString::from("target/cmbook-command-lines")),
        ]
        .boxed()
    } else {
        let one = proptest::sample::select(choices);
        prop_oneof![
            3 => one.clone().prop_map(OsString::from),
            // Two choices as a list, which only a list flag takes.
            1 => (one.clone(), one).prop_map(|(a, b)| format!("{a},{b}").into()),
        ]
        .boxed()
    };
    prop_oneof![3 => plausible, 1 => hostile()].boxed()
}

/// Numbers in and out of every range, negatives, NaN, infinities, huge numbers, lists,
/// empty strings, Unicode, the book's own figures folder and, on unix, bytes that are not
/// UTF-8.
fn hostile() -> BoxedStrategy<OsString> {
    let book = Path::new(env!("CARGO_MANIFEST_DIR")).join("figures");
    let fixed: Vec<OsString> = [
        "0",
        "1",
        "2",
        "-1",
        "-0",
        "+5",
        "07",
        " 7 ",
        "1.5",
        "0.0009765625",
        "1048576",
        "1048577",
        "46339",
        "46340",
        "16385",
        "65536",
        "4294967295",
        "4294967296",
        "18446744073709551615",
        "18446744073709551616",
        "99999999999999999999999999",
        "NaN",
        "nan",
        "inf",
        "-inf",
        "1e30",
        "1e-30",
        "1e309",
        "0x10",
        "",
        ",",
        "2,,3",
        "20,2,30,12,8",
        "3,0,4",
        "4000000000,4000000000,4000000000,4000000000",
        "π",
        "ü,ß",
        "🙂",
        "figures",
        "./figures/",
        "/nonexistent/folder",
        "/dev/null",
    ]
    .iter()
    .map(OsString::from)
    .chain([book.into_os_string()])
    .collect();
    let mut strategies: Vec<BoxedStrategy<OsString>> = vec![
        proptest::sample::select(fixed).boxed(),
        (0u64..70_000).prop_map(|n| OsString::from(n.to_string())).boxed(),
        any::<i64>().prop_map(|n| OsString::from(n.to_string())).boxed(),
        any::<f64>().prop_map(|x| OsString::from(x.to_string())).boxed(),
        proptest::collection::vec(0u64..200, 0..6)
            .prop_map(|v| {
                let v: Vec<String> = v.iter().map(u64::to_string).collect();
                OsString::from(v.join(","))
            })
            .boxed(),
        proptest::collection::vec(any::<char>(), 0..12)
            .prop_map(|c| OsString::from(c.into_iter().collect::<String>()))
            .boxed(),
    ];
    #[cfg(unix)]
    strategies.push(
        proptest::collection::vec(any::<u8>(), 1..12)
            .prop_map(std::os::unix::ffi::OsStringExt::from_vec)
            .boxed(),
    );
    proptest::strategy::Union::new(strategies).boxed()
}

/// A command line of up to 8 items, each a flag of the grammar (with a value as `--f v`,
/// `--f=v`, or none), a flag of the grammar given twice, an unknown flag, a stray positional
/// or `--`.
fn command_line(flags: Vec<Flag>) -> BoxedStrategy<Vec<OsString>> {
    let twice = proptest::sample::select(flags.clone()).prop_flat_map(|f| {
        let long = OsString::from(format!("--{}", f.long));
        let given = move |v: Option<OsString>| {
            let mut arg = vec![long.clone()];
            arg.extend(v);
            arg
        };
        let v = value(f.choices.clone());
        let v =
            if f.takes_value { v.prop_map(Some).boxed() } else { Just(None).boxed() };
        (v.clone(), v).prop_map(move |(a, b)| [given(a), given(b)].concat())
    });
    let known = proptest::sample::select(flags.clone()).prop_flat_map(|f| {
        let long = format!("--{}", f.long);
        let bare = Just(vec![OsString::from(&long)]);
        let spaced = {
            let long = long.clone();
            value(f.choices.clone()).prop_map(move |v| vec![OsString::from(&long), v])
        };
        let joined = value(f.choices.clone()).prop_map(move |v| {
            let mut arg = OsString::from(format!("{long}="));
            arg.push(v);
            vec![arg]
        });
        if f.takes_value {
            prop_oneof![1 => bare, 6 => spaced, 3 => joined].boxed()
        } else {
            prop_oneof![10 => bare, 1 => joined].boxed()
        }
    });
    let junk = prop_oneof![
        Just(vec![OsString::from("--frobnicate")]),
        Just(vec![OsString::from("-x")]),
        Just(vec![OsString::from("--")]),
        Just(vec![OsString::from("-")]),
        hostile().prop_map(|v| vec![v]),
    ];
    proptest::collection::vec(prop_oneof![15 => known, 3 => twice, 1 => junk], 0..8)
        .prop_map(|items| items.into_iter().flatten().collect())
        .boxed()
}

/// How many times `--long` is given in `argv` (as `--long` or `--long=…`), up to a `--`.
fn occurrences(argv: &[OsString], long: &str) -> usize {
    let flag = format!("--{long}");
    let with_value = format!("{flag}=");
    argv.iter()
        .take_while(|a| a.as_os_str() != "--")
        .filter_map(|a| a.to_str())
        .filter(|a| *a == flag || a.starts_with(&with_value))
        .count()
}

/// What must hold of any command line clap accepted: a flag given twice is one meant to
/// repeat (any other is refused, not merged).
fn accepted_once(flags: &[Flag], argv: &[OsString]) -> Result<(), TestCaseError> {
    for f in flags.iter().filter(|f| !f.repeats) {
        prop_assert!(
            occurrences(argv, &f.long) <= 1,
            "--{} accepted twice in {:?}",
            f.long,
            argv
        );
    }
    Ok(())
}

/// What must hold of clap's refusal: exit code 2, or 0 for `--help`.
fn refused_by_clap(e: &clap::Error) -> Result<(), TestCaseError> {
    let help = matches!(
        e.kind(),
        clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
    );
    prop_assert_eq!(e.exit_code(), if help { 0 } else { 2 }, "{}", e.render());
    Ok(())
}

fn runner() -> TestRunner {
    TestRunner::new(ProptestConfig {
        // Nothing written into the checkout; a failure prints its shrunk command line.
        failure_persistence: None,
        ..ProptestConfig::with_cases(CASES_PER_EXAMPLE)
    })
}

/// Runs `test` on random command lines of `command`'s grammar, recording each in `current`
/// before it runs (so that one that hangs can be named).
fn run_cases(
    name: &str,
    command: clap::Command,
    current: &Mutex<Vec<OsString>>,
    test: impl Fn(&[Flag], &[OsString]) -> Result<(), TestCaseError>,
) {
    let flags = grammar(name, &command);
    assert!(!flags.is_empty(), "{name}: no flags read from its clap definition");
    runner()
        .run(&command_line(flags.clone()), |args| {
            let argv: Vec<OsString> =
                std::iter::once(OsString::from(name)).chain(args).collect();
            *current.lock().unwrap_or_else(PoisonError::into_inner) = argv.clone();
            test(&flags, &argv)
        })
        .unwrap_or_else(|e| panic!("{name}: {e}"));
}

/// A chapter example: clap's parse, then [`check_before_gpu`] and what `run::main` asks of
/// the arguments before it opens a GPU.
fn chapter_example<A: Example>(
    chapter: &'static Chapter,
    current: &Mutex<Vec<OsString>>,
) -> &'static str {
    let book = cmbook::harness::compare::book_figures();
    run_cases(chapter.example, A::command(), current, |flags, argv| {
        let args = match A::try_parse_from(argv) {
            Ok(args) => args,
            Err(e) => return refused_by_clap(&e),
        };
        accepted_once(flags, argv)?;
        let _ = (args.needs(chapter), args.counters_part(), args.without_gpu());
        match check_before_gpu(chapter, &args) {
            Err(e) => prop_assert_eq!(exit_code_for(&e), 2, "{:#} for {:?}", e, argv),
            Ok(_) => {
                let c = args.common();
                let into_book = match (&c.out, &book) {
                    (Some(out), Some(book)) => same_folder(out, book),
                    _ => false,
                };
                prop_assert!(
                    !(c.quick && into_book),
                    "a quick run into figures: {:?}",
                    argv
                );
            }
        }
        Ok(())
    });
    chapter.example
}

/// `reproduce`: clap's parse, then the checks its `main` makes before it does anything.
fn reproduce(current: &Mutex<Vec<OsString>>) {
    let book = cmbook::harness::compare::book_figures();
    let command = reproduce_args::Args::command();
    run_cases("reproduce", command, current, |flags, argv| {
        let args = match reproduce_args::Args::try_parse_from(argv) {
            Ok(args) => args,
            Err(e) => return refused_by_clap(&e),
        };
        accepted_once(flags, argv)?;
        if let Err(e) = args.validate() {
            prop_assert!(
                !e.0.is_empty() && !e.0.contains('\n'),
                "{} for {:?}",
                e,
                argv
            );
            return Ok(());
        }
        prop_assert!(args.book.is_none() || args.compare, "--book without --compare");
        let modes = [args.compare, args.roofline, args.redraw_only, args.sanitize];
        let measures = !modes.contains(&true) && !args.appendix_table;
        let into_book = match (&args.out, &book) {
            (Some(out), Some(book)) => same_folder(out, book),
            _ => false,
        };
        prop_assert!(!(args.quick && measures && into_book), "quick into figures");
        let options = args.options();
        prop_assert!(options.jobs >= 1 && options.jobs <= 64, "{}", options.jobs);
        Ok(())
    });
}

#[test]
fn random_command_lines_never_panic_or_hang_and_are_refused_with_exit_code_2() {
    let current = Arc::new(Mutex::new(Vec::new()));
    let (done, finished) = mpsc::channel();
    let worker = {
        let current = Arc::clone(&current);
        std::thread::spawn(move || {
            use cmbook::{atax, ceilings, cmm, coalescing, hopper_memory};
            use cmbook::{memory_spaces, multi_gpu, tiling};
            let c = &*current;
            let covered = [
                chapter_example::<ceilings::Args>(&ceilings::CHAPTER, c),
                chapter_example::<memory_spaces::Args>(&memory_spaces::CHAPTER, c),
                chapter_example::<coalescing::Args>(&coalescing::CHAPTER, c),
                chapter_example::<tiling::loop_permutation::Args>(
                    &tiling::loop_permutation::CHAPTER,
                    c,
                ),
                chapter_example::<tiling::tiled_matmul::Args>(
                    &tiling::tiled_matmul::CHAPTER,
                    c,
                ),
                chapter_example::<cmm::diagonal::Args>(&cmm::diagonal::CHAPTER, c),
                chapter_example::<cmm::beyond::Args>(&cmm::beyond::CHAPTER, c),
                chapter_example::<atax::Args>(&atax::CHAPTER, c),
                chapter_example::<hopper_memory::Args>(&hopper_memory::CHAPTER, c),
                chapter_example::<multi_gpu::Args>(&multi_gpu::CHAPTER, c),
            ];
            reproduce(c);
            done.send(covered).unwrap();
        })
    };
    let covered = match finished.recv_timeout(DEADLINE) {
        Ok(covered) => covered,
        // The worker panicked (a property failed): its message is the failure.
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            std::panic::resume_unwind(worker.join().unwrap_err())
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!(
            "a command line took more than {DEADLINE:?}: {:?}",
            current.lock().unwrap_or_else(PoisonError::into_inner)
        ),
    };
    worker.join().unwrap();
    // Every chapter's example was covered, and no other.
    let chapters: Vec<&str> = cmbook::chapters::ALL.iter().map(|c| c.example).collect();
    assert_eq!(covered.to_vec(), chapters);
}
