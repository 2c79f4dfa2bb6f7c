//! What a chapter's command line is made of: the flags every example takes ([`CommonArgs`]),
//! the [`Example`] trait a chapter's `Args` implements, and [`settings!`](crate::settings),
//! which declares each of a chapter's own flags once, with its default for a full run and for
//! `--quick`, and writes from that one declaration the clap flag, its help and the chapter's
//! `Settings` struct.

use std::path::PathBuf;

use super::chapter::Chapter;
use super::run::Needs;

/// A setting's value for a full run and for `--quick`, in one place, so that the code and
/// `--help` cannot disagree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FullQuick<T> {
    pub full: T,
    pub quick: T,
}

impl<T: Copy + std::fmt::Display> FullQuick<T> {
    pub const fn new(full: T, quick: T) -> Self {
        Self { full, quick }
    }

    /// The value for this run.
    pub fn pick(&self, quick: bool) -> T {
        if quick {
            self.quick
        } else {
            self.full
        }
    }

    /// `given` if the reader gave it, else this run's default.
    pub fn or(&self, given: Option<T>, quick: bool) -> T {
        given.unwrap_or(self.pick(quick))
    }

    /// A flag's help text that states both defaults: `what [default: 1024; --quick: 16]`.
    pub fn help(&self, what: &str) -> String {
        format!("{what} [default: {}; --quick: {}]", self.full, self.quick)
    }
}

/// Flags every example takes (flattened into its own clap parser).
#[derive(Debug, Clone, clap::Args)]
pub struct CommonArgs {
    /// Folder for the figures (SVG, Markdown tables) and their data (data/*.csv). `--out
    /// figures` updates the book's own data.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Small sizes and few repetitions: a check that everything runs, not a measurement.
    #[arg(long)]
    pub quick: bool,
    /// Timed repetitions per measurement.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub reps: Option<u32>,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 2024)]
    pub seed: u64,
    /// Count, instead of timing: run the chapter's key kernels under Nsight Compute (`ncu`,
    /// from the CUDA toolkit) and write the chapter's counters table and its table of
    /// predicted vs counted. Slow: ncu replays each counted launch once per metric group.
    #[arg(long)]
    pub counters: bool,
}

/// An example's arguments: clap's parser, the common flags, and what it needs.
pub trait Example: clap::Parser {
    fn common(&self) -> &CommonArgs;

    /// What this invocation needs; an example with a CPU-only mode says so here.
    fn needs(&self, chapter: &Chapter) -> Needs {
        chapter.needs
    }

    /// A part of the example whose `--counters` are written apart from the whole run's, into
    /// `<example>-<part>-counters` and `-counted` (see [`super::counters::counters_stems`]).
    fn counters_part(&self) -> Option<&'static str> {
        None
    }

    /// Checks that need no GPU, made before one is opened (bad input is exit code 2 even on
    /// a machine without a GPU).
    fn validate(&self) -> Result<(), UsageError> {
        Ok(())
    }

    /// What the reader can do instead when the GPU is missing (appended to the one line).
    fn without_gpu(&self) -> Option<String> {
        None
    }
}

/// Bad input that clap's own checks cannot see (a size too large for the device, a chain
/// whose costs overflow). Exit code 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// clap's parser for a number in `range` (a budget, a size in MiB), as clap's own ranges are
/// for integers: a number outside it, `NaN` and `inf` are refused with a sentence.
pub fn f64_in(
    range: std::ops::RangeInclusive<f64>,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    move |text: &str| match text.trim().parse::<f64>() {
        Ok(v) if range.contains(&v) => Ok(v),
        Ok(v) => Err(format!("{v} is not in {}..={}", range.start(), range.end())),
        Err(e) => Err(format!("`{text}` is not a number: {e}")),
    }
}

/// The help line of a flag from its doc comment's lines: joined, trimmed, without the final
/// full stop (the defaults follow it).
pub fn doc_line(lines: &[&str]) -> String {
    let line = lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    line.trim_end_matches('.').to_string()
}

/// Declares a chapter's settings once: each flag with its type, its clap attributes (value name,
/// range) and its default for a full run and for `--quick`, written
/// `pub name: type = (full, quick)`; after `and`, fields taken from the command line as they
/// are (a `--part`, a list). From that it writes
/// - the settings struct, every value filled in, which the chapter's `measure` takes;
/// - the flags struct (clap's `Args`, each defaulted flag an `Option`, its help ending in
///   `[default: full; --quick: quick]`), which the chapter's `Args` flattens;
/// - `flags.settings(run)`, each flag given, else its default for this kind of run, and
///   `Settings::with_defaults(quick, extras…)`, every default (for tests).
///
/// ```
/// cmbook::settings! {
///     /// How large a run is.
///     pub struct Settings / SettingsArgs {
///         /// Largest copy, in MiB.
///         #[arg(value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..=1024))]
///         pub copy_mib: u64 = (1024, 16),
///     }
/// }
/// let help = cmbook::harness::FullQuick::new(1024u64, 16).help("Largest copy, in MiB.");
/// assert_eq!(help, "Largest copy, in MiB. [default: 1024; --quick: 16]");
/// ```
#[macro_export]
macro_rules! settings {
    (
        $(#[$meta:meta])*
        pub struct $settings:ident / $flags:ident {
            $(
                $(#[doc = $doc:literal])*
                #[arg($($arg:tt)*)]
                pub $field:ident: $ty:ty = ($full:expr, $quick:expr),
            )*
        }
        $(
            and {
                $(
                    $(#[doc = $xdoc:literal])*
                    #[arg($($xarg:tt)*)]
                    pub $xfield:ident: $xty:ty,
                )*
            }
        )?
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        pub struct $settings {
            $( $(#[doc = $doc])* pub $field: $ty, )*
            $($( $(#[doc = $xdoc])* pub $xfield: $xty, )*)?
        }

        /// The command-line flags of the settings: a flag not given takes its default for
        /// this kind of run.
        #[derive(Debug, Clone, clap::Args)]
        pub struct $flags {
            $(
                #[arg(long, $($arg)*, help = $crate::harness::args::FullQuick::<$ty>::new(
                    $full, $quick).help(&$crate::harness::args::doc_line(&[$($doc),*])))]
                pub $field: Option<$ty>,
            )*
            $($(
                $(#[doc = $xdoc])*
                #[arg($($xarg)*)]
                pub $xfield: $xty,
            )*)?
        }

        impl $settings {
            /// Every defaulted setting at its default for a full run or a `--quick` one, and
            /// the fields taken as they are.
            pub fn with_defaults(quick: bool $($(, $xfield: $xty)*)?) -> Self {
                $settings {
                    $( $field: $crate::harness::args::FullQuick::<$ty>::new($full, $quick)
                        .pick(quick), )*
                    $($( $xfield, )*)?
                }
            }
        }

        impl $flags {
            /// This run's settings: each flag given, else its default for this kind of run.
            pub fn settings(&self, run: &$crate::harness::run::Run) -> $settings {
                $settings {
                    $( $field: run.pick(
                        self.$field,
                        $crate::harness::args::FullQuick::new($full, $quick),
                    ), )*
                    $($( $xfield: self.$xfield.clone(), )*)?
                }
            }
        }
    };
}

/// A chapter's `Args`, the parser of its example: the common flags and the chapter's own
/// (`flags`, a struct [`settings!`](crate::settings) wrote, or [`NoFlags`]), with `about` as
/// the first line of `--help`. Items after `impl` go into its [`Example`] impl (a
/// `counters_part`, a `validate`).
#[macro_export]
macro_rules! example_args {
    (about = $about:literal, flags = $flags:ty $(, impl { $($item:item)* })? $(,)?) => {
        #[doc = $about]
        #[derive(clap::Parser, Debug)]
        #[command(about = $about)]
        pub struct Args {
            #[command(flatten)]
            pub common: $crate::harness::args::CommonArgs,
            #[command(flatten)]
            pub flags: $flags,
        }

        impl $crate::harness::args::Example for Args {
            fn common(&self) -> &$crate::harness::args::CommonArgs {
                &self.common
            }
            $($($item)*)?
        }
    };
}

/// The flags of an example that has none of its own (its sizes are the book's, or
/// `--quick`'s).
#[derive(Debug, Clone, clap::Args)]
pub struct NoFlags {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_stated_for_both_kinds_of_run() {
        let d = FullQuick::new(1024u64, 16);
        assert_eq!(d.or(None, false), 1024);
        assert_eq!(d.or(None, true), 16);
        assert_eq!(d.or(Some(7), true), 7);
        assert_eq!(d.help("MiB copied"), "MiB copied [default: 1024; --quick: 16]");
    }

    #[test]
    fn a_budget_is_finite_and_in_its_range() {
        let budget = f64_in(0.5..=1024.0);
        assert_eq!(budget("1.5"), Ok(1.5));
        assert_eq!(budget("0.5"), Ok(0.5));
        assert_eq!(budget(" 1024 "), Ok(1024.0));
        for bad in ["0", "0.25", "-1", "NaN", "inf", "-inf", "1e30", "1025", "", "one"]
        {
            assert!(budget(bad).is_err(), "{bad}");
        }
        assert_eq!(budget("2000").unwrap_err(), "2000 is not in 0.5..=1024");
    }

    #[test]
    fn a_flag_help_is_its_doc_comment_on_one_line() {
        assert_eq!(
            doc_line(&[" Largest copy,", "  in MiB. ", ""]),
            "Largest copy, in MiB"
        );
    }
}
