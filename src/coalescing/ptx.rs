//! Which global load instructions the compiler emitted for a kernel, read from its PTX.
//!
//! `ld.global` is an ordinary load; `ld.global.nc` a *non-coherent* one, which promises that
//! nothing writes the data while the kernel runs. That promise is what lets the read-only path
//! serve it and lets the assembler move it above stores.

/// Memory instructions of one kernel's PTX.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Census {
    /// `ld.global` without `.nc`.
    pub coherent_loads: usize,
    /// `ld.global.nc`.
    pub non_coherent_loads: usize,
    /// `st.global`.
    pub stores: usize,
}

/// The body of `.entry name(...) { ... }` in `ptx`, or `None` when there is no such entry.
pub fn entry_body<'a>(ptx: &'a str, name: &str) -> Option<&'a str> {
    let start = ptx.match_indices(".entry ").find_map(|(i, _)| {
        let rest = &ptx[i + ".entry ".len()..];
        let ident_end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
        (&rest[..ident_end] == name).then_some(i)
    })?;
    let open = start + ptx[start..].find('{')?;
    let mut depth = 0usize;
    for (i, ch) in ptx[open..].char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&ptx[open + 1..open + i]);
                }
            }
            _ => {}
        }
    }
    None
}

/// Counts the global loads and stores of kernel `name` in `ptx`.
pub fn census(ptx: &str, name: &str) -> Option<Census> {
    let body = entry_body(ptx, name)?;
    let mut c = Census::default();
    for line in body.lines() {
        let mut words = line.split_whitespace();
        let Some(mut op) = words.next() else { continue };
        if op.starts_with('@') {
            op = words.next().unwrap_or(""); // a predicated instruction: `@%p1 ld.global.f32 ...`
        }
        if op.starts_with("ld.global.nc") {
            c.non_coherent_loads += 1;
        } else if op.starts_with("ld.global") {
            c.coherent_loads += 1;
        } else if op.starts_with("st.global") {
            c.stores += 1;
        }
    }
    Some(c)
}

/// Memory instructions of one kernel's machine code (SASS), and the schedule the assembler
/// chose for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SassCensus {
    /// `LDG` without `.CONSTANT`: an ordinary global load.
    pub coherent_loads: usize,
    /// `LDG.E.CONSTANT`: what `ld.global.nc` becomes.
    pub non_coherent_loads: usize,
    /// `STG`.
    pub stores: usize,
    /// The longest run of global loads with no global store between them: how many loads
    /// the assembler issues before it waits for a store.
    pub loads_before_a_store: usize,
}

/// Counts the global loads and stores of one disassembled kernel.
pub fn sass_census(f: &crate::harness::sass::Function) -> SassCensus {
    use crate::harness::sass::{is_global_load, is_global_store, is_non_coherent_load};
    let mut c = SassCensus::default();
    let mut run = 0;
    for i in &f.instrs {
        if is_global_load(i) {
            if is_non_coherent_load(i) {
                c.non_coherent_loads += 1;
            } else {
                c.coherent_loads += 1;
            }
            run += 1;
            c.loads_before_a_store = c.loads_before_a_store.max(run);
        } else if is_global_store(i) {
            c.stores += 1;
            run = 0;
        }
    }
    c
}
