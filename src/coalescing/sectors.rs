//! From a warp's addresses to the 32-byte sectors and 128-byte lines the memory system moves.
//!
//! A warp-wide load or store is one instruction for 32 threads. The load/store unit collects
//! the 32 addresses and asks the memory system for every 32-byte **sector** that holds at least
//! one of the requested bytes; caches keep sectors in groups of four, one 128-byte **line**
//! per tag. Whatever the lanes asked for, a sector crosses whole: 4 useful bytes in a sector
//! cost as much transfer as 32. Two views of the cost follow:
//!
//! * per request ([`footprint`]): the sectors one instruction touches, the unit in which L1
//!   and L2 serve it;
//! * per kernel ([`traffic`]): the distinct sectors all warps load, plus the distinct sectors
//!   they store to. When caches catch every reuse, each such sector crosses the DRAM interface
//!   once (and once more, written back, if it was stored to): the bytes DRAM must move.
//!
//! Addresses are byte offsets from a 256-byte aligned allocation (every `cuMemAlloc` result
//! is), so offsets decide sector and line membership exactly as absolute addresses do.

/// Threads in a warp.
pub const WARP_SIZE: u64 = 32;
/// The unit in which DRAM, L2 and L1 move data.
pub const SECTOR_BYTES: u64 = 32;
/// Four sectors under one cache tag.
pub const LINE_BYTES: u64 = 128;

/// What one warp request asks for and what it touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footprint {
    /// Active lanes.
    pub lanes: u64,
    /// Bytes the lanes use: lanes × bytes per lane.
    pub requested_bytes: u64,
    /// Distinct 32-byte sectors holding at least one requested byte.
    pub sectors: u64,
    /// Distinct 128-byte lines among those sectors.
    pub lines: u64,
}

impl Footprint {
    /// Bytes that cross: whole sectors.
    pub fn moved_bytes(&self) -> u64 {
        self.sectors * SECTOR_BYTES
    }

    /// Requested over moved bytes: 1 when every byte of every sector is used.
    pub fn efficiency(&self) -> f64 {
        self.requested_bytes as f64 / self.moved_bytes() as f64
    }
}

// ANCHOR: footprint
/// What one warp-wide memory instruction touches. `addresses` holds the byte address
/// each active lane accesses, `bytes_per_lane` how wide each access is. Every 32-byte
/// sector holding a requested byte moves once, however many lanes asked for it.
pub fn footprint(addresses: &[u64], bytes_per_lane: u64) -> Footprint {
    assert!(bytes_per_lane > 0, "an access is at least one byte wide");
    let mut sectors: Vec<u64> = addresses
        .iter()
        // An access touches every sector from the one holding its first byte to the
        // one holding its last (one sector for an aligned 4- or 8-byte access).
        .flat_map(|&a| a / SECTOR_BYTES..=(a + bytes_per_lane - 1) / SECTOR_BYTES)
        .collect();
    sectors.sort_unstable();
    sectors.dedup();
    let mut lines: Vec<u64> =
        sectors.iter().map(|s| s * SECTOR_BYTES / LINE_BYTES).collect();
    lines.dedup(); // sorted sectors give sorted lines: equal lines are neighbours
    Footprint {
        lanes: addresses.len() as u64,
        requested_bytes: addresses.len() as u64 * bytes_per_lane,
        sectors: sectors.len() as u64,
        lines: lines.len() as u64,
    }
}
// ANCHOR_END: footprint

/// Where thread `t` of a kernel points in one of its memory instructions: `bytes` bytes at
/// `base + first_byte + t × pitch`. One form covers every pattern of the chapter: a strided
/// array is a pitch of stride × element size, a struct field is a pitch of the record size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    /// Where the array starts (256-byte aligned; arrays of one kernel get distinct bases).
    pub base: u64,
    /// Bytes from the base to thread 0's access.
    pub first_byte: u64,
    /// Bytes between the accesses of consecutive threads.
    pub pitch: u64,
    /// Width of each access.
    pub bytes: u64,
}

impl Access {
    /// Thread `t` accesses element `offset + t × stride` of an array of `elem_bytes`-byte
    /// elements.
    pub fn strided(elem_bytes: u64, stride: u64, offset: u64) -> Self {
        Self {
            base: 0,
            first_byte: offset * elem_bytes,
            pitch: stride * elem_bytes,
            bytes: elem_bytes,
        }
    }

    /// Thread `t` accesses the `field_bytes`-wide field at `field_offset` of record `t`, in an
    /// array of `record_bytes`-byte records.
    pub fn field(record_bytes: u64, field_offset: u64, field_bytes: u64) -> Self {
        Self {
            base: 0,
            first_byte: field_offset,
            pitch: record_bytes,
            bytes: field_bytes,
        }
    }

    /// The same access in an array that starts at byte `base` (a multiple of 256).
    pub fn at_base(self, base: u64) -> Self {
        assert_eq!(base % 256, 0, "allocations are 256-byte aligned");
        Self { base, ..self }
    }

    /// The byte address thread `thread` accesses.
    pub fn address(&self, thread: u64) -> u64 {
        self.base + self.first_byte + thread * self.pitch
    }

    /// The addresses of the 32 lanes of warp `warp` (threads `32 warp .. 32 warp + 31`).
    pub fn warp_addresses(&self, warp: u64) -> Vec<u64> {
        (0..WARP_SIZE).map(|lane| self.address(warp * WARP_SIZE + lane)).collect()
    }

    /// The footprint of warp `warp`'s request.
    pub fn warp_footprint(&self, warp: u64) -> Footprint {
        footprint(&self.warp_addresses(warp), self.bytes)
    }
}

/// What a whole kernel moves, in the two views of the module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Traffic {
    /// Threads (one element, record or particle each).
    pub threads: u64,
    /// Bytes the threads use, loads and stores together.
    pub useful_bytes: u64,
    /// Sectors summed over every warp request, as if no request shared a sector with another.
    pub request_sectors: u64,
    /// Distinct sectors any warp loads plus distinct sectors any warp stores to: every sector
    /// read once, and every sector stored to written back once.
    pub dram_sectors: u64,
}

impl Traffic {
    /// Useful over moved bytes when every request's sectors cross: the fraction of the copy
    /// ceiling the kernel reaches if nothing is shared between requests.
    pub fn per_request_fraction(&self) -> f64 {
        self.useful_bytes as f64 / (self.request_sectors * SECTOR_BYTES) as f64
    }

    /// Useful over moved bytes when each distinct sector crosses once: the fraction of the copy
    /// ceiling a DRAM-bound kernel reaches.
    pub fn dram_fraction(&self) -> f64 {
        self.useful_bytes as f64 / (self.dram_sectors * SECTOR_BYTES) as f64
    }
}

// ANCHOR: traffic
/// The traffic of a kernel in which each of `warps` × 32 threads performs every
/// access of `loads` and every access of `stores` once.
pub fn traffic(loads: &[Access], stores: &[Access], warps: u64) -> Traffic {
    let mut useful_bytes = 0;
    let mut request_sectors = 0;
    let mut dram_sectors = 0;
    for accesses in [loads, stores] {
        let mut distinct: Vec<u64> = Vec::new();
        for access in accesses {
            for warp in 0..warps {
                let addresses = access.warp_addresses(warp);
                let request = footprint(&addresses, access.bytes);
                useful_bytes += request.requested_bytes;
                request_sectors += request.sectors;
                for a in addresses {
                    let last_byte = a + access.bytes - 1;
                    distinct.extend(a / SECTOR_BYTES..=last_byte / SECTOR_BYTES);
                }
            }
        }
        distinct.sort_unstable();
        distinct.dedup();
        dram_sectors += distinct.len() as u64;
    }
    let threads = warps * WARP_SIZE;
    Traffic { threads, useful_bytes, request_sectors, dram_sectors }
}
// ANCHOR_END: traffic
