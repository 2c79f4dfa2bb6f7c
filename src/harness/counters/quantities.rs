//! What a chapter can predict and ncu can count: the quantities, declared once in
//! the table of `quantities!`, from which the [`Quantity`] enum, each quantity's name in the
//! labels file and the tables, its counted value and how the tables show it all follow.
//!
//! The table is the body of a macro that hands its rows to `declare_quantities!`, so that
//! the book can show it (and compile it) on its own.

use super::Counted;
use crate::harness::format::bytes;

// ANCHOR: quantity
/// What a chapter can predict and ncu can count, one row each: the quantity, its
/// name (in the labels file and the tables), how the tables show a value, and its
/// value counted in a case's row of `<chapter>-counters.csv` (`c`, whose columns are
/// summed from ncu's metrics).
macro_rules! quantities {
    ($declare:ident) => {
        $declare! {
            /// Bytes read plus bytes written by device memory (DRAM).
            DramBytes("DRAM bytes", Show::Bytes) =
                |c| c.dram_read_bytes + c.dram_write_bytes;
            /// 32-byte sectors per global load request (one warp-wide load
            /// instruction).
            LoadSectorsPerRequest("sectors per load request", Show::Decimals(2)) =
                |c| c.ld_sectors_per_request;
            /// 32-byte sectors per global store request.
            StoreSectorsPerRequest("sectors per store request", Show::Decimals(2)) =
                |c| c.st_sectors_per_request;
            /// Shared-memory bank conflicts (extra wavefronts), loads and stores
            /// together.
            BankConflicts("shared bank conflicts", Show::Decimals(0)) =
                |c| c.shared_ld_conflicts + c.shared_st_conflicts;
            /// The share of L2 sector lookups that hit, in percent.
            L2HitPercent("L2 hit rate (%)", Show::Decimals(1)) = |c| c.l2_hit_pct;
            /// Resident warps as a share of the SM's maximum, averaged over active
            /// cycles (percent).
            OccupancyPercent("achieved occupancy (%)", Show::Decimals(1)) =
                |c| c.achieved_occupancy_pct;
            /// Warp instructions executed.
            Instructions("warp instructions", Show::Decimals(0)) =
                |c| c.warp_instructions;
            /// Bytes global loads request from L1 (32 bytes per sector): what the
            /// loads ask for, before any cache.
            GlobalLoadBytes("global load bytes", Show::Bytes) = |c| 32.0 * c.ld_sectors;
        }
    };
}
// ANCHOR_END: quantity

/// Declares [`Quantity`] and its methods from the rows of `quantities!`.
macro_rules! declare_quantities {
    ($(
        $(#[$doc:meta])*
        $variant:ident($name:literal, $show:expr) = |$c:ident| $counted:expr;
    )+) => {
        /// What a chapter can predict and ncu can count (the table: `quantities!`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
        pub enum Quantity {
            $( $(#[$doc])* $variant, )+
        }

        impl Quantity {
            /// Every quantity, in the table's order.
            pub const ALL: [Quantity; [$(stringify!($variant)),+].len()] =
                [$(Quantity::$variant),+];

            /// The short name written into the labels file and the tables.
            pub fn name(self) -> &'static str {
                match self {
                    $( Quantity::$variant => $name, )+
                }
            }

            /// The counted value of this quantity.
            pub fn counted(self, counted: &Counted) -> f64 {
                match self {
                    $( Quantity::$variant => {
                        let $c = counted;
                        $counted
                    } )+
                }
            }

            /// A value of this quantity as the tables show it.
            pub fn show(self, v: f64) -> String {
                match self {
                    $( Quantity::$variant => $show.format(v), )+
                }
            }
        }
    };
}

quantities!(declare_quantities);

impl Quantity {
    pub fn from_name(name: &str) -> Option<Quantity> {
        Quantity::ALL.into_iter().find(|q| q.name() == name)
    }
}

/// How the tables show a value.
#[derive(Debug, Clone, Copy)]
enum Show {
    /// In bytes with an SI prefix (`537 MB`).
    Bytes,
    /// With this many decimals.
    Decimals(usize),
}

impl Show {
    fn format(self, v: f64) -> String {
        match self {
            Show::Bytes => bytes(v),
            Show::Decimals(d) => format!("{v:.d$}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_distinct_and_read_back() {
        for q in Quantity::ALL {
            assert_eq!(Quantity::from_name(q.name()), Some(q));
        }
        assert_eq!(Quantity::from_name("bytes moved"), None);
    }

    #[test]
    fn each_format_shows_as_the_tables_do() {
        assert_eq!(Quantity::DramBytes.show(536_870_912.0), "537 MB");
        assert_eq!(Quantity::LoadSectorsPerRequest.show(4.0), "4.00");
        assert_eq!(Quantity::L2HitPercent.show(35.25), "35.2");
        assert_eq!(Quantity::BankConflicts.show(4_092_816.6), "4092817");
    }
}
