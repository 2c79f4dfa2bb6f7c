//! Sizes that adapt to the device memory a GPU has free: a chapter whose default does not
//! fit takes the largest of its steps that does (and says so), and a size the reader gave is
//! kept, or refused with what would fit. Pure functions of the free bytes, so that 8, 16, 24
//! and 80 GB cards can be tested without one.

use super::args::UsageError;

const MIB: u64 = 1 << 20;
const GIB: f64 = (1u64 << 30) as f64;

/// Device memory kept back from what is free for the context, the modules and the driver's
/// own use, as [`super::gpu::Gpu::ensure_fits`] keeps it.
pub const RESERVED_BYTES: u64 = 512 * MIB;

/// What a run may allocate for its own buffers: what is free, less [`RESERVED_BYTES`] and
/// the L2 flush buffer that every L2-cold timing allocates (twice the L2, at least 2 MiB).
pub fn usable_bytes(free: u64, l2_bytes: u64) -> u64 {
    free.saturating_sub(RESERVED_BYTES + 2 * l2_bytes.max(MIB))
}

/// `bytes` in GiB, as the messages write it.
pub fn gib(bytes: u64) -> String {
    format!("{:.2} GiB", bytes as f64 / GIB)
}

/// One size after fitting: the one asked for (the default or the reader's) and the one used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fit {
    pub wanted: u64,
    pub chosen: u64,
}

impl Fit {
    /// Whether the size was lowered to fit.
    pub fn scaled(&self) -> bool {
        self.chosen != self.wanted
    }
}

/// Fits one size. `steps` are the sizes the measurement can take, ascending, up to and
/// including `wanted`; `bytes` is the device memory a size allocates at once; `floor` is the
/// smallest size that still measures what it is for. A size the reader `given` is kept if it
/// fits and refused otherwise; a default is lowered to the largest step that fits, or refused
/// when even `floor` does not. Refusals name `flag`, the bytes and what would fit.
pub fn fit(
    flag: &str,
    wanted: u64,
    given: bool,
    steps: &[u64],
    bytes: impl Fn(u64) -> u64,
    floor: u64,
    usable: u64,
) -> Result<Fit, UsageError> {
    let largest =
        steps.iter().copied().filter(|&s| s <= wanted && bytes(s) <= usable).max();
    let would_fit = match largest {
        Some(s) if s >= floor => format!("; {flag} {s} fits"),
        _ => String::new(),
    };
    if bytes(wanted) <= usable {
        return Ok(Fit { wanted, chosen: wanted });
    }
    if given {
        return Err(UsageError(format!(
            "{flag} {wanted} needs {} of device memory, and {} is usable on this GPU{would_fit}",
            gib(bytes(wanted)),
            gib(usable)
        )));
    }
    match largest {
        Some(chosen) if chosen >= floor => Ok(Fit { wanted, chosen }),
        _ => Err(UsageError(format!(
            "{flag}: even {floor}, the smallest size that measures it, needs {} of device \
             memory, and {} is usable on this GPU",
            gib(bytes(floor)),
            gib(usable)
        ))),
    }
}

/// Cards of 8, 16, 24 and 80 GB as a run sees them: the device memory free once a context is
/// open, and the L2. For the tests of every chapter's sizes.
#[cfg(test)]
pub mod cards {
    /// One card: its name, free bytes with a context open, L2 bytes.
    pub type Card = (&'static str, u64, u64);
    const MIB: u64 = 1 << 20;
    pub const GB8: Card = ("8 GB (RTX 4060)", 7_800 * MIB, 24 * MIB);
    pub const GB16: Card = ("16 GB (T4)", 14_900 * MIB, 4 * MIB);
    pub const GB24: Card = ("24 GB (RTX 4090)", 23_600 * MIB, 72 * MIB);
    pub const GB80: Card = ("80 GB (H100)", 80_600 * MIB, 50 * MIB);
    pub const ALL: [Card; 4] = [GB8, GB16, GB24, GB80];
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB_U: u64 = 1 << 30;

    #[test]
    fn usable_memory_leaves_room_for_the_context_and_the_flush() {
        assert_eq!(usable_bytes(8 * GIB_U, 50 * MIB), 8 * GIB_U - 612 * MIB);
        assert_eq!(usable_bytes(100 * MIB, 50 * MIB), 0);
        // A GPU that reports no L2 still gets a flush buffer of 2 MiB.
        assert_eq!(usable_bytes(GIB_U, 0), GIB_U - 514 * MIB);
    }

    #[test]
    fn a_default_is_lowered_to_the_largest_step_that_fits() {
        let steps = [1, 2, 4, 8];
        let twice = |s: u64| 2 * s;
        assert_eq!(
            fit("--x", 8, false, &steps, twice, 2, 16),
            Ok(Fit { wanted: 8, chosen: 8 })
        );
        let f = fit("--x", 8, false, &steps, twice, 2, 15).unwrap();
        assert_eq!(f, Fit { wanted: 8, chosen: 4 });
        assert!(f.scaled());
        let e = fit("--x", 8, false, &steps, twice, 2, 3).unwrap_err().0;
        assert!(e.starts_with("--x: even 2, the smallest size"), "{e}");
    }

    #[test]
    fn a_size_the_reader_gave_is_refused_not_changed() {
        let steps = [1, 2, 4, 8];
        let e = fit("--x", 8, true, &steps, |s| s * GIB_U, 2, 5 * GIB_U).unwrap_err().0;
        assert_eq!(
            e,
            "--x 8 needs 8.00 GiB of device memory, and 5.00 GiB is usable on this GPU; \
             --x 4 fits"
        );
        assert_eq!(
            fit("--x", 4, true, &steps, |s| s * GIB_U, 2, 5 * GIB_U),
            Ok(Fit { wanted: 4, chosen: 4 })
        );
    }
}
