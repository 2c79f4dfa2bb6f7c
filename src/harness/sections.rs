//! Which sections of a chapter a GPU can run: a pure decision from what the GPU offers
//! (its compute capability, the shared memory a block may opt in to, its persisting L2), so
//! that it is tested on the CPU for every GPU the book supports. A chapter runs the sections
//! its [`Plan`] keeps and prints one line per section it skips, naming the need.

use std::fmt;

use super::gpu::DeviceInfo;

/// What a GPU offers that a section of a chapter may need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// The compute capability every decision uses (a pretended one where the run pretends).
    pub capability: (u32, u32),
    /// `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`, bytes.
    pub shared_per_block_optin: usize,
    /// Whether the GPU has an access-policy window: a persisting part of L2
    /// (`CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE` above 0; none before 8.0).
    pub access_policy_window: bool,
}

impl Caps {
    /// What `info` says of the device, with `persisting_l2` read by the caller
    /// ([`super::launch::L2Limits::query`]).
    pub fn of(info: &DeviceInfo, persisting_l2: usize) -> Self {
        let (major, minor) = info.compute_capability;
        Self {
            capability: (major.max(0) as u32, minor.max(0) as u32),
            shared_per_block_optin: info.shared_per_block_optin,
            access_policy_window: persisting_l2 > 0,
        }
    }
}

/// One thing a section cannot run without.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// A compute capability, and the feature that needs it.
    Capability((u32, u32), &'static str),
    /// Bytes of shared memory in one block (the opt-in limit).
    SharedPerBlock(usize),
    /// A persisting part of L2 (the access-policy window).
    PersistingL2,
}

impl Need {
    /// Why `caps` does not meet this need, as the rest of a skip line; `None` where it does.
    pub fn unmet(self, caps: &Caps) -> Option<String> {
        let (major, minor) = caps.capability;
        match self {
            Need::Capability(need, why) if caps.capability < need => Some(format!(
                "needs compute capability {}.{} ({why}); this GPU is {major}.{minor}",
                need.0, need.1
            )),
            Need::SharedPerBlock(bytes) if caps.shared_per_block_optin < bytes => {
                Some(format!(
                    "needs {bytes} bytes of shared memory per block; this GPU allows {}",
                    caps.shared_per_block_optin
                ))
            }
            Need::PersistingL2 if !caps.access_policy_window => Some(
                "needs a persisting part of L2 (an access-policy window); this GPU has none"
                    .into(),
            ),
            _ => None,
        }
    }
}

/// A part of a chapter that is measured on its own, and what it needs of the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Section {
    /// As the skip line names it, e.g. `TMA transpose`.
    pub name: &'static str,
    pub needs: &'static [Need],
}

/// A section the GPU cannot run, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skip {
    pub section: &'static str,
    /// The first unmet need, e.g. `needs compute capability 9.0 (...); this GPU is 8.6`.
    pub why: String,
}

impl fmt::Display for Skip {
    /// The line a chapter prints once: `skipped: <section>: <why>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "skipped: {}: {}", self.section, self.why)
    }
}

/// Which sections of a chapter run on one GPU, in the chapter's order, and which are
/// skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub run: Vec<&'static str>,
    pub skipped: Vec<Skip>,
}

impl Plan {
    /// Whether `section` runs (a name the chapter does not list never does).
    pub fn runs(&self, section: &str) -> bool {
        self.run.contains(&section)
    }

    /// Why `section` is skipped, where it is.
    pub fn skip(&self, section: &str) -> Option<&Skip> {
        self.skipped.iter().find(|s| s.section == section)
    }
}

/// The plan of a chapter made of `sections` on a GPU that offers `caps`.
pub fn plan(sections: &[Section], caps: &Caps) -> Plan {
    let mut run = Vec::new();
    let mut skipped = Vec::new();
    for s in sections {
        match s.needs.iter().find_map(|n| n.unmet(caps)) {
            Some(why) => skipped.push(Skip { section: s.name, why }),
            None => run.push(s.name),
        }
    }
    Plan { run, skipped }
}

/// The GPUs whose plans the tests pin down, from compute capability 7.0 up: the capability
/// and shared-memory opt-in as the CUDA programming guide's tables give them, and whether
/// the GPU has an access-policy window (from 8.0 on).
pub const GPUS: &[(&str, Caps)] = &[
    ("V100", caps((7, 0), 96 * 1024, false)),
    ("T4", caps((7, 5), 64 * 1024, false)),
    ("A100", caps((8, 0), 163 * 1024, true)),
    ("RTX 3090", caps((8, 6), 99 * 1024, true)),
    ("RTX 4090", caps((8, 9), 99 * 1024, true)),
    ("H100", caps((9, 0), 227 * 1024, true)),
    ("RTX 5090", caps((12, 0), 99 * 1024, true)),
];

const fn caps(
    capability: (u32, u32),
    shared_per_block_optin: usize,
    access_policy_window: bool,
) -> Caps {
    Caps { capability, shared_per_block_optin, access_policy_window }
}

/// Checks, for every GPU of [`GPUS`], the plan of a chapter whose one optional section
/// `section` needs compute capability 9.0 for `feature`: from 9.0 up it runs, below it is
/// skipped with the line that names the need and the GPU's capability.
#[cfg(test)]
pub(crate) fn check_one_hopper_section(
    sections: &[Section],
    section: &str,
    feature: &str,
) {
    for (name, caps) in GPUS {
        let p = plan(sections, caps);
        if caps.capability >= (9, 0) {
            assert_eq!(p.run, [section], "{name}");
            assert!(p.skipped.is_empty(), "{name}");
        } else {
            assert!(p.run.is_empty(), "{name}");
            let (major, minor) = caps.capability;
            assert_eq!(
                p.skip(section).map(ToString::to_string),
                Some(format!(
                    "skipped: {section}: needs compute capability 9.0 ({feature}); this \
                     GPU is {major}.{minor}"
                )),
                "{name}"
            );
        }
    }
}

/// The caps of one of [`GPUS`] by name.
pub fn gpu(name: &str) -> Caps {
    GPUS.iter()
        .find(|(n, _)| *n == name)
        .map(|(_, c)| *c)
        .unwrap_or_else(|| panic!("{name} is not one of sections::GPUS"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLUSTERS: Need = Need::Capability((9, 0), "thread-block clusters");
    const SECTIONS: &[Section] = &[
        Section { name: "plain", needs: &[] },
        Section { name: "clusters", needs: &[CLUSTERS] },
        Section { name: "big tiles", needs: &[Need::SharedPerBlock(99_840)] },
        Section { name: "window", needs: &[Need::PersistingL2] },
    ];

    #[test]
    fn each_section_runs_where_every_need_is_met_and_says_the_first_unmet_one() {
        let h100 = plan(SECTIONS, &gpu("H100"));
        assert_eq!(h100.run, ["plain", "clusters", "big tiles", "window"]);
        assert!(h100.skipped.is_empty());

        let rtx3090 = plan(SECTIONS, &gpu("RTX 3090"));
        assert_eq!(rtx3090.run, ["plain", "big tiles", "window"]);
        assert_eq!(
            rtx3090.skip("clusters").unwrap().to_string(),
            "skipped: clusters: needs compute capability 9.0 (thread-block clusters); \
             this GPU is 8.6"
        );

        let t4 = plan(SECTIONS, &gpu("T4"));
        assert_eq!(t4.run, ["plain"]);
        assert_eq!(
            t4.skip("big tiles").unwrap().why,
            "needs 99840 bytes of shared memory per block; this GPU allows 65536"
        );
        assert_eq!(
            t4.skip("window").unwrap().why,
            "needs a persisting part of L2 (an access-policy window); this GPU has none"
        );
        assert!(!t4.runs("clusters") && !t4.runs("no such section"));
    }

    #[test]
    fn a_section_with_two_unmet_needs_names_the_first() {
        let both = [Section {
            name: "both",
            needs: &[CLUSTERS, Need::SharedPerBlock(1 << 20)],
        }];
        let p = plan(&both, &gpu("V100"));
        assert!(p.skipped[0].why.starts_with("needs compute capability 9.0"), "{p:?}");
    }

    #[test]
    fn the_gpus_are_in_the_order_of_their_capability() {
        assert!(GPUS.windows(2).all(|w| w[0].1.capability < w[1].1.capability));
        assert_eq!(GPUS.first().unwrap().1.capability, (7, 0));
    }
}
