//! Shared-memory banks: which bank each lane of a warp hits, and how many passes that costs.
//!
//! Shared memory is split into 32 banks, each 4 bytes wide: the 4-byte word at word address
//! `w` lives in bank `w mod 32`. A bank delivers one word per pass, so a warp request whose
//! lanes want `d` different words of one bank takes `d` passes (a `d`-way conflict); lanes that
//! want the *same* word share its pass. The model here is for 4-byte accesses, which is what
//! every shared-memory access of this chapter is.

/// Banks of shared memory.
pub const BANKS: u64 = 32;
/// Width of a bank: one 4-byte word.
pub const BANK_BYTES: u64 = 4;

/// The bank holding 4-byte word `word`.
pub fn bank_of(word: u64) -> u64 {
    word % BANKS
}

// ANCHOR: conflict_degree
/// Passes one warp request needs: the largest number of *distinct* words that fall
/// into one bank (lanes reading the same word share it). 1 means conflict-free.
pub fn conflict_degree(words: &[u64]) -> u64 {
    let mut words_in_bank: Vec<Vec<u64>> = vec![Vec::new(); BANKS as usize];
    for &word in words {
        let bank = &mut words_in_bank[bank_of(word) as usize];
        if !bank.contains(&word) {
            bank.push(word);
        }
    }
    words_in_bank.iter().map(|w| w.len() as u64).max().unwrap_or(0)
}
// ANCHOR_END: conflict_degree

/// The words a warp reads when lane `l` reads row `l`, column `column` of a tile
/// stored row after row, `row_words` words per row: `tile_shared[lane][column]`.
pub fn column_read_words(row_words: u64, column: u64) -> Vec<u64> {
    (0..32).map(|lane| lane * row_words + column).collect()
}

/// The words a warp reads when lane `l` reads row `row`, column `l`:
/// `tile_shared[row][lane]`.
pub fn row_read_words(row_words: u64, row: u64) -> Vec<u64> {
    (0..32).map(|lane| row * row_words + lane).collect()
}

/// One lane of a column read, for the chapter's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaneBank {
    pub lane: u64,
    pub word: u64,
    pub bank: u64,
}

/// Lane by lane, the word and bank of a column read of a tile with `row_words` words per row.
pub fn column_read_lanes(row_words: u64, column: u64) -> Vec<LaneBank> {
    column_read_words(row_words, column)
        .into_iter()
        .enumerate()
        .map(|(lane, word)| LaneBank { lane: lane as u64, word, bank: bank_of(word) })
        .collect()
}
