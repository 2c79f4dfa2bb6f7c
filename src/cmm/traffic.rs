//! Which 32-byte sectors and 128-byte lines a warp's loads of the DP table touch, computed.
//!
//! A warp-wide load is served in 32-byte sectors: the memory system moves every sector that
//! holds at least one requested byte, once per load instruction (and tags them in 128-byte
//! lines). For the CMM kernels the two table loads in the inner loop are `M[i][k]` (the *left*
//! operand) and `M[k+1][j]` (the *right* operand). This module lists, for each warp and each
//! step of the `k` loop, the distinct sectors and lines those loads touch in either layout, and
//! sums them over a diagonal and over the whole program.
//!
//! Two counts answer two questions:
//! * `sectors`: what each load instruction asks of L1, one sector at a time (the cost of
//!   uncoalesced access when every request goes to L2 or DRAM);
//! * `fresh_sectors`: sectors a warp's step touches that the same warp's previous step did not
//!   touch: what must come from L2 when L1 catches the reuse between consecutive steps of a
//!   warp (one step's worth is at most 64 sectors, 2 KiB, per warp) and nothing else. Row-major
//!   loads are scattered, but each lane walks along its row and the column loads shift by one
//!   lane per step, so most of their sectors are not fresh; diagonal-major loads are contiguous
//!   but move to another diagonal every step, so nearly all of theirs are.
//!
//! Neither count is a measurement: the chapter sets them beside the profiler's.
//!
//! Assumptions: the table's base address is 256-byte aligned (every `cudaMalloc`/`cuMemAlloc`
//! result is), so byte offsets from the base decide sector and line membership; costs are
//! `elem_bytes` wide (8 for `u64`, 4 for `u32`); indices are those of [`Layout::dp_index`].
//! The loads of the dimensions `p[k]` (4-byte, 32 consecutive per warp in both layouts) and the
//! one store per cell are the same for both layouts and are left out.

use rayon::prelude::*;
use serde::Serialize;

use super::layout::Layout;

/// Threads in a warp.
pub const WARP_SIZE: usize = 32;
/// Bytes in a sector, the unit DRAM, L2 and L1 move.
pub const SECTOR_BYTES: u64 = 32;
/// Bytes in a cache line (four sectors share one tag).
pub const LINE_BYTES: u64 = 128;
/// Alignment assumed for the table's base address: a multiple of both block sizes, so a byte
/// offset from the base lies in sector `offset / 32` and line `offset / 128`.
pub const TABLE_BASE_ALIGN: u64 = 256;

/// Which of the two table loads in the inner loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Operand {
    /// `M[i][k]`: the cost of the left factor `A_i .. A_k`.
    Left,
    /// `M[k+1][j]`: the cost of the right factor `A_{k+1} .. A_j`.
    Right,
}

/// How the lanes of a warp share the work of a diagonal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum WarpMapping {
    /// One thread per cell: lane `l` of warp `w` takes cell `i = 32 w + l + 1` of the diagonal
    /// and all lanes step through `k = i + s` together (the paper's kernel, and the variant with
    /// one launch per diagonal).
    CellPerThread,
    /// A group of threads per cell: the lanes of a warp take 32 consecutive `k` of one cell
    /// (the "several threads per cell" variant of Seifi & Al-Mamun 2024, Section 7.1).
    SplitKPerCell,
}

/// The cell `(i, j)` (1-based) and split `k` one lane works on during one load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LaneWork {
    /// First matrix of the cell's sub-chain.
    pub i: usize,
    /// Last matrix of the cell's sub-chain.
    pub j: usize,
    /// The split being tried, `i <= k < j`.
    pub k: usize,
}

/// Up to one warp's worth of lane work, on the stack: the counting loops build tens of millions.
type WarpLanes = ([LaneWork; WARP_SIZE], usize);

const IDLE_LANE: LaneWork = LaneWork { i: 0, j: 0, k: 0 };

fn warp_lanes_cell_per_thread(
    n: usize,
    d: usize,
    warp: usize,
    k_step: usize,
) -> WarpLanes {
    assert!(1 <= d && d < n && k_step < d, "need 1 <= d < n and k_step < d");
    let cells = n - d;
    let first = warp * WARP_SIZE;
    assert!(first < cells, "warp {warp} has no cell on diagonal {d}");
    let mut lanes = [IDLE_LANE; WARP_SIZE];
    let active = (cells - first).min(WARP_SIZE);
    for (lane, work) in lanes[..active].iter_mut().enumerate() {
        let i = first + lane + 1;
        *work = LaneWork { i, j: i + d, k: i + k_step };
    }
    (lanes, active)
}

fn warp_lanes_split_k(i: usize, j: usize, chunk: usize) -> WarpLanes {
    let first_k = i + chunk * WARP_SIZE;
    assert!(
        i <= first_k && first_k < j,
        "chunk {chunk} has no split of cell ({i}, {j})"
    );
    let mut lanes = [IDLE_LANE; WARP_SIZE];
    let active = (j - first_k).min(WARP_SIZE);
    for (lane, work) in lanes[..active].iter_mut().enumerate() {
        *work = LaneWork { i, j, k: first_k + lane };
    }
    (lanes, active)
}

/// The lanes of warp `warp` at step `k_step` (`k = i + k_step`) of diagonal `d` under
/// [`WarpMapping::CellPerThread`]; fewer than 32 in the last warp of a diagonal.
pub fn lanes_cell_per_thread(
    n: usize,
    d: usize,
    warp: usize,
    k_step: usize,
) -> Vec<LaneWork> {
    let (lanes, active) = warp_lanes_cell_per_thread(n, d, warp, k_step);
    lanes[..active].to_vec()
}

/// The lanes of the `chunk`-th warp-load of cell `(i, j)` under [`WarpMapping::SplitKPerCell`]:
/// `k = i + 32 chunk + lane`, as far as `j - 1`.
pub fn lanes_split_k(i: usize, j: usize, chunk: usize) -> Vec<LaneWork> {
    let (lanes, active) = warp_lanes_split_k(i, j, chunk);
    lanes[..active].to_vec()
}

/// Byte offset from the table's base of the element `lane` loads as `operand`.
pub fn operand_offset(
    layout: Layout,
    elem_bytes: u32,
    n: usize,
    lane: LaneWork,
    operand: Operand,
) -> u64 {
    let index = match operand {
        Operand::Left => layout.dp_index(n, lane.i, lane.k),
        Operand::Right => layout.dp_index(n, lane.k + 1, lane.j),
    };
    index as u64 * u64::from(elem_bytes)
}

/// What one warp-wide load asks of the memory system.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LoadFootprint {
    /// Active lanes.
    pub lanes: u32,
    /// Bytes the lanes use: `lanes * elem_bytes`.
    pub bytes_requested: u64,
    /// Distinct 32-byte sectors touched.
    pub sectors: u32,
    /// Distinct 128-byte lines touched.
    pub lines: u32,
}

/// The distinct `block_bytes`-sized blocks (sectors or lines) that up to two warp loads touch,
/// as sorted block numbers, on the stack.
#[derive(Clone, Copy)]
struct BlockSet {
    ids: [u64; 2 * WARP_SIZE],
    len: usize,
}

impl BlockSet {
    const EMPTY: BlockSet = BlockSet { ids: [0; 2 * WARP_SIZE], len: 0 };

    fn as_slice(&self) -> &[u64] {
        &self.ids[..self.len]
    }

    fn push_if_new(&mut self, id: u64) {
        if self.len == 0 || self.ids[self.len - 1] != id {
            self.ids[self.len] = id;
            self.len += 1;
        }
    }

    /// The blocks of one load. The CMM loads walk memory monotonically across lanes (up or
    /// down), so the ids come out sorted after at most a reversal; any other order is sorted.
    fn of_load(offsets: &[u64], block_bytes: u64) -> BlockSet {
        let mut ids = [0u64; WARP_SIZE];
        for (id, offset) in ids.iter_mut().zip(offsets) {
            *id = offset / block_bytes;
        }
        let ids = &mut ids[..offsets.len()];
        if ids.windows(2).all(|w| w[0] >= w[1]) {
            ids.reverse();
        } else if !ids.windows(2).all(|w| w[0] <= w[1]) {
            ids.sort_unstable();
        }
        let mut set = BlockSet::EMPTY;
        for &id in ids.iter() {
            set.push_if_new(id);
        }
        set
    }

    /// Blocks in either set, by merging the two sorted lists.
    fn union(&self, other: &BlockSet) -> BlockSet {
        let (a, b) = (self.as_slice(), other.as_slice());
        let (mut x, mut y) = (0, 0);
        let mut set = BlockSet::EMPTY;
        while x < a.len() || y < b.len() {
            let take_a = y == b.len() || (x < a.len() && a[x] <= b[y]);
            if take_a {
                set.push_if_new(a[x]);
                x += 1;
            } else {
                set.push_if_new(b[y]);
                y += 1;
            }
        }
        set
    }

    /// Blocks of `self` that `earlier` does not hold.
    fn count_not_in(&self, earlier: &BlockSet) -> u32 {
        let earlier = earlier.as_slice();
        let mut at = 0;
        let mut fresh = 0;
        for &id in self.as_slice() {
            while at < earlier.len() && earlier[at] < id {
                at += 1;
            }
            if at == earlier.len() || earlier[at] != id {
                fresh += 1;
            }
        }
        fresh
    }
}

fn offsets_of(
    layout: Layout,
    elem_bytes: u32,
    n: usize,
    lanes: &[LaneWork],
    operand: Operand,
) -> ([u64; WARP_SIZE], usize) {
    assert!(lanes.len() <= WARP_SIZE, "a warp has at most {WARP_SIZE} lanes");
    let mut offsets = [0u64; WARP_SIZE];
    for (slot, &lane) in offsets.iter_mut().zip(lanes) {
        *slot = operand_offset(layout, elem_bytes, n, lane, operand);
    }
    (offsets, lanes.len())
}

fn check_elem_bytes(elem_bytes: u32) {
    assert!(
        elem_bytes.is_power_of_two() && u64::from(elem_bytes) <= SECTOR_BYTES,
        "element size {elem_bytes} must be a power of two no larger than a sector"
    );
}

fn footprint_of_offsets(offsets: &[u64], elem_bytes: u32) -> (LoadFootprint, BlockSet) {
    let sectors = BlockSet::of_load(offsets, SECTOR_BYTES);
    let footprint = LoadFootprint {
        lanes: offsets.len() as u32,
        bytes_requested: offsets.len() as u64 * u64::from(elem_bytes),
        sectors: sectors.len as u32,
        lines: BlockSet::of_load(offsets, LINE_BYTES).len as u32,
    };
    (footprint, sectors)
}

/// Sectors and lines one warp-wide load of `operand` touches when its lanes work on `lanes`.
pub fn load_footprint(
    layout: Layout,
    elem_bytes: u32,
    n: usize,
    lanes: &[LaneWork],
    operand: Operand,
) -> LoadFootprint {
    check_elem_bytes(elem_bytes);
    let (offsets, active) = offsets_of(layout, elem_bytes, n, lanes, operand);
    footprint_of_offsets(&offsets[..active], elem_bytes).0
}

/// Both loads of one warp-step, and the sectors they touch together.
fn step_footprint(
    layout: Layout,
    elem_bytes: u32,
    n: usize,
    lanes: &[LaneWork],
) -> (LoadFootprint, LoadFootprint, BlockSet) {
    let (left_offsets, active) =
        offsets_of(layout, elem_bytes, n, lanes, Operand::Left);
    let (right_offsets, _) = offsets_of(layout, elem_bytes, n, lanes, Operand::Right);
    let (left, left_sectors) =
        footprint_of_offsets(&left_offsets[..active], elem_bytes);
    let (right, right_sectors) =
        footprint_of_offsets(&right_offsets[..active], elem_bytes);
    (left, right, left_sectors.union(&right_sectors))
}

/// Both loads of one warp at one step of the `k` loop, one thread per cell: the row of a
/// GPU-Puzzles-style traffic table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct WarpStepTraffic {
    /// Table layout.
    pub layout: Layout,
    /// Bytes per cost (8 for `u64`, 4 for `u32`).
    pub elem_bytes: u32,
    /// Matrices in the chain.
    pub n: usize,
    /// Diagonal `j - i`.
    pub d: usize,
    /// Warp index along the diagonal (lanes take cells `i = 32 warp + 1 ..`).
    pub warp: usize,
    /// Step of the `k` loop: every lane tries `k = i + k_step`.
    pub k_step: usize,
    /// Active lanes.
    pub lanes: u32,
    /// Sectors touched by the load of `M[i][k]`.
    pub left_sectors: u32,
    /// Lines touched by the load of `M[i][k]`.
    pub left_lines: u32,
    /// Sectors touched by the load of `M[k+1][j]`.
    pub right_sectors: u32,
    /// Lines touched by the load of `M[k+1][j]`.
    pub right_lines: u32,
    /// Sectors of both loads that this warp's step `k_step - 1` did not touch (all of them at
    /// step 0).
    pub fresh_sectors: u32,
}

/// Traffic of warp `warp` at step `k_step` of diagonal `d`, one thread per cell.
pub fn warp_step_traffic(
    layout: Layout,
    elem_bytes: u32,
    n: usize,
    d: usize,
    warp: usize,
    k_step: usize,
) -> WarpStepTraffic {
    check_elem_bytes(elem_bytes);
    let lanes = lanes_cell_per_thread(n, d, warp, k_step);
    let (left, right, touched) = step_footprint(layout, elem_bytes, n, &lanes);
    let previous = match k_step {
        0 => BlockSet::EMPTY,
        _ => {
            step_footprint(
                layout,
                elem_bytes,
                n,
                &lanes_cell_per_thread(n, d, warp, k_step - 1),
            )
            .2
        }
    };
    let fresh_sectors = touched.count_not_in(&previous);
    WarpStepTraffic {
        layout,
        elem_bytes,
        n,
        d,
        warp,
        k_step,
        lanes: left.lanes,
        left_sectors: left.sectors,
        left_lines: left.lines,
        right_sectors: right.sectors,
        right_lines: right.lines,
        fresh_sectors,
    }
}

/// Totals over a range of diagonals, both operands together; one flat row for a CSV file.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TrafficSummary {
    /// How lanes share the work.
    pub mapping: WarpMapping,
    /// Table layout.
    pub layout: Layout,
    /// Bytes per cost.
    pub elem_bytes: u32,
    /// Matrices in the chain.
    pub n: usize,
    /// First diagonal counted.
    pub first_diagonal: usize,
    /// Last diagonal counted.
    pub last_diagonal: usize,
    /// Warp-wide table loads (two per warp per step).
    pub warp_loads: u64,
    /// Bytes the lanes use.
    pub bytes_requested: u64,
    /// Sectors the loads touch, summed over loads.
    pub sectors: u64,
    /// Lines the loads touch, summed over loads.
    pub lines: u64,
    /// The fewest sectors the same loads could touch if each load's elements were contiguous
    /// and sector-aligned: the sum over loads of `ceil(bytes / 32)`.
    pub min_sectors: u64,
    /// Sectors of each warp-step (both loads together) that the same warp's previous step did
    /// not touch: for [`WarpMapping::CellPerThread`] the previous `k`; for
    /// [`WarpMapping::SplitKPerCell`] the previous 32 splits of the same cell.
    pub fresh_sectors: u64,
    /// `sectors / warp_loads` (0 when there are no loads).
    pub sectors_per_warp_load: f64,
    /// `lines / warp_loads` (0 when there are no loads).
    pub lines_per_warp_load: f64,
    /// `bytes_requested / (32 sectors)`: the share of moved bytes that are used.
    pub sector_efficiency: f64,
}

/// Running sums before the averages are taken.
#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    warp_loads: u64,
    bytes_requested: u64,
    sectors: u64,
    lines: u64,
    min_sectors: u64,
    fresh_sectors: u64,
}

impl Counts {
    fn add_load(&mut self, load: LoadFootprint) {
        self.warp_loads += 1;
        self.bytes_requested += load.bytes_requested;
        self.sectors += u64::from(load.sectors);
        self.lines += u64::from(load.lines);
        self.min_sectors += load.bytes_requested.div_ceil(SECTOR_BYTES);
    }

    fn plus(self, other: Counts) -> Counts {
        Counts {
            warp_loads: self.warp_loads + other.warp_loads,
            bytes_requested: self.bytes_requested + other.bytes_requested,
            sectors: self.sectors + other.sectors,
            lines: self.lines + other.lines,
            min_sectors: self.min_sectors + other.min_sectors,
            fresh_sectors: self.fresh_sectors + other.fresh_sectors,
        }
    }
}

fn ratio(numerator: u64, denominator: u64) -> f64 {
    if denominator == 0 {
        0.0
    } else {
        numerator as f64 / denominator as f64
    }
}

/// Adds both loads of every warp-step of diagonal `d`, and the fresh sectors of each step
/// relative to the previous step of the same warp (or cell).
fn diagonal_counts(
    mapping: WarpMapping,
    layout: Layout,
    elem_bytes: u32,
    n: usize,
    d: usize,
) -> Counts {
    let mut counts = Counts::default();
    let mut add_step = |(lanes, active): WarpLanes, previous: &mut BlockSet| {
        let (left, right, touched) =
            step_footprint(layout, elem_bytes, n, &lanes[..active]);
        counts.add_load(left);
        counts.add_load(right);
        counts.fresh_sectors += u64::from(touched.count_not_in(previous));
        *previous = touched;
    };
    let cells = n - d;
    match mapping {
        WarpMapping::CellPerThread => {
            for warp in 0..cells.div_ceil(WARP_SIZE) {
                let mut previous = BlockSet::EMPTY;
                for k_step in 0..d {
                    add_step(
                        warp_lanes_cell_per_thread(n, d, warp, k_step),
                        &mut previous,
                    );
                }
            }
        }
        WarpMapping::SplitKPerCell => {
            for i in 1..=cells {
                let mut previous = BlockSet::EMPTY;
                for chunk in 0..d.div_ceil(WARP_SIZE) {
                    add_step(warp_lanes_split_k(i, i + d, chunk), &mut previous);
                }
            }
        }
    }
    counts
}

fn summary(
    mapping: WarpMapping,
    layout: Layout,
    elem_bytes: u32,
    n: usize,
    diagonals: (usize, usize),
    counts: Counts,
) -> TrafficSummary {
    TrafficSummary {
        mapping,
        layout,
        elem_bytes,
        n,
        first_diagonal: diagonals.0,
        last_diagonal: diagonals.1,
        warp_loads: counts.warp_loads,
        bytes_requested: counts.bytes_requested,
        sectors: counts.sectors,
        lines: counts.lines,
        min_sectors: counts.min_sectors,
        fresh_sectors: counts.fresh_sectors,
        sectors_per_warp_load: ratio(counts.sectors, counts.warp_loads),
        lines_per_warp_load: ratio(counts.lines, counts.warp_loads),
        sector_efficiency: ratio(counts.bytes_requested, counts.sectors * SECTOR_BYTES),
    }
}

/// Traffic of all warps and all `k` steps of diagonal `d` (`1 <= d < n`).
pub fn diagonal_traffic(
    mapping: WarpMapping,
    layout: Layout,
    elem_bytes: u32,
    n: usize,
    d: usize,
) -> TrafficSummary {
    check_elem_bytes(elem_bytes);
    assert!(
        1 <= d && d < n,
        "diagonal {d} does not exist for n = {n} (need 1 <= d < n)"
    );
    let counts = diagonal_counts(mapping, layout, elem_bytes, n, d);
    summary(mapping, layout, elem_bytes, n, (d, d), counts)
}

/// Traffic of the whole program: diagonals `1 ..= n - 1`, summed (in parallel over diagonals).
/// About `n^3 / 96` warp-loads, one thread per cell: for `n = 1024` some 11 million, about 2
/// seconds of a release build on two cores, and 8 times as much for each doubling of `n`.
pub fn dp_traffic(
    mapping: WarpMapping,
    layout: Layout,
    elem_bytes: u32,
    n: usize,
) -> TrafficSummary {
    check_elem_bytes(elem_bytes);
    let counts = (1..n)
        .into_par_iter()
        .map(|d| diagonal_counts(mapping, layout, elem_bytes, n, d))
        .reduce(Counts::default, Counts::plus);
    summary(mapping, layout, elem_bytes, n, (1, n.saturating_sub(1)), counts)
}
