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
