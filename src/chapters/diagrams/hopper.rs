//! The Hopper chapter's diagrams: the `cp.async` stream's stages as its loop fills and
//! drains them (`stream_stages` in `kernels/hopper_async.cu`, replayed by [`stream`]), one
//! TMA copy and its mbarrier (`tma_copy` in `kernels/hopper_tma.cu`, replayed by
//! [`tma_copy_steps`] on a model of the barrier, [`Mbarrier`]), and the warp-tiled multiply's block tile, warp tiles and lanes (`kernels/hopper_sgemm.cuh`,
//! by the index arithmetic of [`warp_layout::result`]).

use plotters::style::text_anchor::HPos;

use super::Diagram;
use crate::harness::kernels;
use crate::harness::plot::{Fill, Ink, Shape};
use crate::harness::tma;
use crate::hopper_memory::sgemm::{warp_layout, Variant, KERNELS, THREADS, TILE};
use crate::hopper_memory::HopperKernel as K;

/// The kernel file of the stream with stages.
pub(super) const STREAM_FILE: &str = "hopper_async.cu";

/// The stages drawn: one of the kernel's instances (`stream_cp_async_3`).
pub(super) const STAGES: usize = 3;
/// The elements one thread streams in the drawing: twice the stages, so that the loop runs
/// full for a while and then drains.
pub(super) const ELEMENTS: usize = 2 * STAGES;

/// The stream's loop as `stream_stages` writes it, in terms of `STAGES`: the copies its
/// prologue issues, the argument of its `cp_async_wait` and how far ahead each refill reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct StreamLoop {
    pub stages: usize,
    pub prologue: usize,
    pub wait_group: usize,
    pub ahead: usize,
}

impl StreamLoop {
    /// The loop of [`STREAM_FILE`] for `stages`, read from its source.
    pub(super) fn of_kernel(stages: usize) -> Self {
        let source =
            kernels::source(STREAM_FILE).expect("the stream kernel is embedded").source;
        let start =
            source.find("void stream_stages(").expect("stream_stages is defined");
        let body = &source[start..];
        let body = &body[..body.find("\n}\n").expect("stream_stages ends")];
        // `STAGES` or `STAGES - d` after `pattern`, as the number it is for `stages`.
        let term = |pattern: &str| -> usize {
            let at = body.find(pattern).unwrap_or_else(|| {
                panic!("{STREAM_FILE}: stream_stages no longer has `{pattern}`")
            }) + pattern.len();
            let rest = body[at..].strip_prefix("STAGES").expect("a count of stages");
            match rest.strip_prefix(" - ") {
                Some(d) => {
                    let digits: String =
                        d.chars().take_while(char::is_ascii_digit).collect();
                    stages - digits.parse::<usize>().expect("STAGES - a number")
                }
                None => stages,
            }
        };
        Self {
            stages,
            prologue: term("for (int s = 0; s < "),
            wait_group: term("cp_async_wait<"),
            ahead: term("const long long j = i + "),
        }
    }
}

/// What one stage holds while the thread reads element `k`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Held {
    /// Nothing: the stream has no element left for it.
    Empty,
    /// Element `e`, its copy still in flight.
    InFlight(usize),
    /// Element `e`, landed (its group waited for) and read now.
    Read(usize),
}

/// One thread's stages, column by column: after the prologue, then at each iteration `k`
/// once its `cp_async_wait` has returned, while it reads element `k` (before it refills).
/// Replays the loop's copies and groups: a group completes only when a wait lets no more
/// than `wait_group` groups stay in flight, so a copy is in flight until a wait says
/// otherwise. Panics where the loop would read an element that has not landed or refill a
/// stage whose element is unread.
pub(super) fn stream(l: StreamLoop, elements: usize) -> Vec<Vec<Held>> {
    let mut stages = vec![Held::Empty; l.stages];
    // The groups committed and not yet waited for, oldest first: each the stage and
    // element of its copy, or none (a group committed past the end is empty).
    let mut groups: std::collections::VecDeque<Option<(usize, usize)>> =
        Default::default();
    let mut columns = Vec::new();
    let issue = |stages: &mut Vec<Held>, e: usize| {
        let s = e % l.stages;
        assert!(
            matches!(stages[s], Held::Empty | Held::Read(_)),
            "element {e} would overwrite stage {s} before it is read"
        );
        stages[s] = Held::InFlight(e);
        Some((s, e))
    };
    for e in 0..l.prologue {
        let group = if e < elements { issue(&mut stages, e) } else { None };
        groups.push_back(group);
    }
    // A stage read at the previous iteration that nothing refilled is empty now.
    columns.push(stages.clone());
    for k in 0..elements {
        for s in stages.iter_mut() {
            if let Held::Read(_) = s {
                *s = Held::Empty;
            }
        }
        while groups.len() > l.wait_group {
            if let Some((s, e)) = groups.pop_front().expect("a group") {
                assert_eq!(stages[s], Held::InFlight(e), "stage {s}");
            }
        }
        let s = k % l.stages;
        assert_eq!(stages[s], Held::InFlight(k), "element {k} is in stage {s}");
        let landed = !groups.iter().flatten().any(|&(_, e)| e == k);
        assert!(landed, "element {k} is read before its copy has landed");
        stages[s] = Held::Read(k);
        columns.push(stages.clone());
        let j = k + l.ahead;
        let group = if j < elements { issue(&mut stages, j) } else { None };
        groups.push_back(group);
    }
    columns
}

/// The stream's stages over its loop: a row per stage, a column per iteration.
pub fn pipeline() -> Diagram {
    let l = StreamLoop::of_kernel(STAGES);
    let columns = stream(l, ELEMENTS);
    let panel = "";
    let (w, pitch) = (2.0, 2.5);
    let mut shapes = Vec::new();
    for (c, column) in columns.iter().enumerate() {
        let x = c as f64 * pitch;
        let head =
            if c == 0 { "prologue".to_string() } else { format!("k = {}", c - 1) };
        shapes.push(Shape::text(panel, x + w / 2.0, -0.6, HPos::Center, &head));
        for (s, held) in column.iter().enumerate() {
            let y = s as f64 * 1.25;
            let (fill, label) = match *held {
                Held::Empty => (Fill::Unused, String::new()),
                Held::InFlight(e) => (Fill::Tint(0), e.to_string()),
                Held::Read(e) => (Fill::Tint(1), e.to_string()),
            };
            shapes.push(Shape::cell(panel, x, y, w, 1.0, fill, &label));
        }
    }
    for s in 0..l.stages {
        let y = s as f64 * 1.25 + 0.5;
        shapes.push(Shape::text(panel, -0.3, y, HPos::Right, &format!("stage {s}")));
    }
    // The key: a swatch of each state and what it means.
    let key_y = l.stages as f64 * 1.25 + 0.5;
    let keys = [
        (Fill::Tint(0), "copy in flight (the element's number)".to_string()),
        (
            Fill::Tint(1),
            format!("landed (wait_group<{}> returned), read", l.wait_group),
        ),
        (Fill::Unused, "no element left to copy".to_string()),
    ];
    for (i, (fill, text)) in keys.iter().enumerate() {
        let y = key_y + i as f64 * 1.0;
        shapes.push(Shape::cell(panel, 0.0, y, 0.75, 0.5, *fill, ""));
        shapes.push(Shape::text(panel, 1.1, y + 0.25, HPos::Left, text));
    }
    Diagram {
        stem: "hopper_memory-diagram-pipeline",
        title: format!(
            "One thread's {STAGES} stages in the cp.async stream: the prologue puts \
             {} copies in flight; iteration k waits until element k has landed, reads it \
             and refills its stage with element k + {}",
            l.prologue, l.ahead
        ),
        computed_by: "kernels/hopper_async.cu and diagrams::hopper::stream",
        panel_columns: 1,
        shapes,
        provenance: None,
    }
}

/// The kernel file of the TMA copy.
pub(super) const TMA_FILE: &str = "hopper_tma.cu";

/// The bytes of the box one TMA copy moves: [`tma::BOX`] of the floats the maps take.
pub(super) fn box_bytes() -> u64 {
    let (rows, cols) = tma::BOX;
    u64::from(rows * cols) * std::mem::size_of::<f32>() as u64
}

/// What `tma_copy` arms its barrier with and how: the arrivals of `mbar_init` and the
/// bytes of `mbar_expect_bytes`, `sizeof(tile)` for a `float tile[TILE * TILE]`, read
/// from its source.
pub(super) fn tma_kernel_arms() -> (u32, u64) {
    let source =
        kernels::source(TMA_FILE).expect("the TMA kernels are embedded").source;
    let start = source.find("void tma_copy(").expect("tma_copy is defined");
    let body = &source[start..];
    let body = &body[..body.find("\n}\n").expect("tma_copy ends")];
    for line in [
        "__shared__ __align__(128) float tile[TILE * TILE];",
        "mbar_expect_bytes(&bar, sizeof(tile));",
        "tma_load_2d(tile, &src, x, y, &bar);",
        "mbar_wait(&bar, 0);",
    ] {
        assert!(body.contains(line), "tma_copy no longer has `{line}`");
    }
    let init =
        body.split("mbar_init(&bar, ").nth(1).expect("tma_copy inits its barrier");
    let arrivals = init[..init.find(')').expect("a count")].parse().expect("a number");
    let tile: u64 = source
        .lines()
        .find_map(|l| l.strip_prefix("#define TILE "))
        .and_then(|v| v.trim().parse().ok())
        .expect("hopper_tma.cu defines TILE");
    (arrivals, tile * tile * std::mem::size_of::<f32>() as u64)
}

/// An mbarrier as PTX describes it: a phase completes when its pending arrivals and its
/// transaction bytes are both zero, and the next phase starts with the arrivals it was
/// initialised with; a wait on a parity returns once the phase of that parity has completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Mbarrier {
    pub phase: u32,
    pub arrivals: u32,
    pub arrivals_due: u32,
    pub bytes_due: u64,
}

impl Mbarrier {
    pub(super) fn init(arrivals: u32) -> Self {
        Self { phase: 0, arrivals, arrivals_due: arrivals, bytes_due: 0 }
    }
    /// `mbarrier.arrive.expect_tx`: the bytes to come, then one arrival.
    pub(super) fn arrive_expect_tx(&mut self, bytes: u64) {
        self.bytes_due += bytes;
        self.arrivals_due =
            self.arrivals_due.checked_sub(1).expect("an arrival too many");
        self.complete_if_done();
    }
    /// The copy engine's `complete_tx`: bytes that have landed.
    pub(super) fn complete_tx(&mut self, bytes: u64) {
        self.bytes_due =
            self.bytes_due.checked_sub(bytes).expect("more bytes than armed");
        self.complete_if_done();
    }
    fn complete_if_done(&mut self) {
        if self.arrivals_due == 0 && self.bytes_due == 0 {
            self.phase += 1;
            self.arrivals_due = self.arrivals;
        }
    }
    /// `mbarrier.try_wait.parity`: has the phase of this parity completed?
    pub(super) fn try_wait_parity(&self, parity: u32) -> bool {
        self.phase % 2 != parity
    }
    /// What the barrier waits for, as drawn: a phase that has completed and nothing armed
    /// for the next one yet reads as the phase completed.
    fn state(&self) -> String {
        if self.phase > 0 && self.arrivals_due == self.arrivals && self.bytes_due == 0 {
            return format!("phase {} complete", self.phase - 1);
        }
        let mut due = Vec::new();
        if self.arrivals_due > 0 {
            let s = if self.arrivals_due == 1 { "" } else { "s" };
            due.push(format!("{} arrival{s}", self.arrivals_due));
        }
        if self.bytes_due > 0 {
            due.push(format!("{} B", self.bytes_due));
        }
        format!("phase {}: {} due", self.phase, due.join(", "))
    }
}

/// The lanes of the TMA timeline, as drawn left to right.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lane {
    Thread0,
    OtherThreads,
    Engine,
}

/// One step of the TMA copy: what each lane does, the barrier after it, and what the
/// block's waits on parity 0 return (None where nobody waits).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct TmaStep {
    pub actions: Vec<(Lane, String)>,
    pub barrier: Mbarrier,
    pub barrier_label: String,
    pub wait_returns: Option<bool>,
}

/// `tma_copy`'s block, step by step, on the barrier model: thread 0 initialises it with
/// `arrivals` and arms it with `armed` bytes and its own arrival, then asks for the box;
/// the block meets at `__syncthreads` and waits on parity 0 while the engine writes the
/// box's `box_bytes` and completes them on the barrier; the waits then return.
pub(super) fn tma_copy_steps(
    arrivals: u32,
    armed: u64,
    box_bytes: u64,
) -> Vec<TmaStep> {
    use Lane::*;
    let mut bar = Mbarrier::init(arrivals);
    let mut steps = Vec::new();
    let mut step = |bar: &Mbarrier, actions: Vec<(Lane, String)>| {
        let wait = actions
            .iter()
            .any(|(_, a)| a.starts_with("wait"))
            .then(|| bar.try_wait_parity(0));
        steps.push(TmaStep {
            actions,
            barrier: *bar,
            barrier_label: bar.state(),
            wait_returns: wait,
        });
    };
    step(&bar, vec![(Thread0, format!("mbarrier.init({arrivals})"))]);
    bar.arrive_expect_tx(armed);
    step(&bar, vec![(Thread0, format!("expect_tx {armed} B"))]);
    let (rows, cols) = tma::BOX;
    step(
        &bar,
        vec![
            (Thread0, "tensor copy (x, y)".into()),
            (Engine, format!("reads {rows} × {cols} box")),
        ],
    );
    step(
        &bar,
        vec![(Thread0, "__syncthreads".into()), (OtherThreads, "__syncthreads".into())],
    );
    step(
        &bar,
        vec![
            (Thread0, "wait parity 0: spins".into()),
            (OtherThreads, "wait parity 0: spins".into()),
        ],
    );
    bar.complete_tx(box_bytes);
    step(&bar, vec![(Engine, format!("complete_tx {box_bytes} B"))]);
    step(
        &bar,
        vec![(Thread0, "wait returns".into()), (OtherThreads, "wait returns".into())],
    );
    steps
}

/// The TMA copy's timeline: a column per lane, a row per step, time running down.
pub fn tma() -> Diagram {
    let (arrivals, armed) = tma_kernel_arms();
    let steps = tma_copy_steps(arrivals, armed, box_bytes());
    let panel = "";
    let (w, pitch, row) = (5.0, 5.5, 1.25);
    let others = format!("threads 1 to {}", tma::COPY_THREADS - 1);
    let lanes = [
        (Lane::Thread0, "thread 0", Fill::Tint(0)),
        (Lane::OtherThreads, others.as_str(), Fill::Tint(0)),
        (Lane::Engine, "TMA engine", Fill::Tint(1)),
    ];
    let mut shapes = Vec::new();
    for (i, (_, head, _)) in lanes.iter().enumerate() {
        let x = i as f64 * pitch + w / 2.0;
        shapes.push(Shape::text(panel, x, -0.6, HPos::Center, head));
    }
    let bx = lanes.len() as f64 * pitch;
    let bw = 6.0;
    shapes.push(Shape::text(panel, bx + bw / 2.0, -0.6, HPos::Center, "mbarrier"));
    for (s, step) in steps.iter().enumerate() {
        let y = s as f64 * row;
        for (i, (lane, _, fill)) in lanes.iter().enumerate() {
            for (_, action) in step.actions.iter().filter(|(l, _)| l == lane) {
                let x = i as f64 * pitch;
                shapes.push(Shape::cell(panel, x, y, w, 1.0, *fill, action));
            }
        }
        let fill = if step.barrier_label.ends_with("complete") {
            Fill::Tint(2)
        } else {
            Fill::Plain
        };
        shapes.push(Shape::cell(panel, bx, y, bw, 1.0, fill, &step.barrier_label));
    }
    // Time runs down the left edge.
    let end = (steps.len() - 1) as f64 * row + 1.0;
    shapes.push(Shape::arrow(panel, (-0.5, 0.0), (-0.5, end), Ink::Muted));
    shapes.push(Shape::text(panel, -0.8, end / 2.0, HPos::Right, "time"));
    Diagram {
        stem: "hopper_memory-diagram-tma",
        title: format!(
            "One TMA copy (tma_copy): thread 0 arms the mbarrier with the box's {armed} \
             bytes and asks for the box; the engine writes it and completes the bytes, \
             the phase completes, and the block's waits on parity 0 return"
        ),
        computed_by: "kernels/hopper_tma.cu and diagrams::hopper::Mbarrier",
        panel_columns: 1,
        shapes,
        provenance: None,
    }
}

/// The warp-tiled kernel drawn: `sgemm_warp_128_k8`, a block tile of 128 × 128.
pub(super) fn warp_kernel() -> Variant {
    *KERNELS.iter().find(|v| v.kernel == K::Warp128K8).expect("the kernel is listed")
}

/// Elements of C per side of a cell of the warp tile: a lane's results come in 4 × 4.
pub(super) const PATCH: usize = 4;
/// Elements of C per unit in the drawing of the whole block tile.
pub(super) const BLOCK_UNIT: usize = 16;
/// The warp whose tile is drawn enlarged: one in the block tile's right column, so that the
/// lines of the zoom cross no other warp.
pub(super) const WARP: usize = 1;
/// The lane whose results are marked in every quadrant of the warp tile.
pub(super) const LANE: usize = 13;

/// The owner `(warp, lane)` of every result of the block tile, row by row, by the kernel's
/// index arithmetic ([`warp_layout::result`]); panics on a result owned twice.
pub(super) fn owners(bn: usize) -> Vec<Option<(usize, usize)>> {
    let mut owner = vec![None; TILE * bn];
    for tid in 0..THREADS as usize {
        for i in 0..8 {
            for j in 0..bn / 16 {
                let (r, c) = warp_layout::result(tid, bn, (i, j));
                let o = &mut owner[r * bn + c];
                assert!(o.is_none(), "({r}, {c}) is computed twice");
                *o = Some((tid / 32, tid % 32));
            }
        }
    }
    owner
}

/// The rows and columns of the block tile that `warp`'s results span: (row, column, rows,
/// columns).
pub(super) fn warp_extent(
    owner: &[Option<(usize, usize)>],
    bn: usize,
    warp: usize,
) -> (usize, usize, usize, usize) {
    let mine =
        (0..owner.len()).filter(|&e| matches!(owner[e], Some((w, _)) if w == warp));
    let (mut r0, mut c0, mut r1, mut c1) = (usize::MAX, usize::MAX, 0, 0);
    for e in mine {
        let (r, c) = (e / bn, e % bn);
        (r0, c0, r1, c1) = (r0.min(r), c0.min(c), r1.max(r + 1), c1.max(c + 1));
    }
    (r0, c0, r1 - r0, c1 - c0)
}

/// The block tile split into its warps' tiles, and one warp's tile split into its lanes'.
pub fn warp_tile() -> Diagram {
    let v = warp_kernel();
    let bn = v.bn;
    let owner = owners(bn);
    let warps = THREADS as usize / 32;
    let panel = "";
    let unit = |elements: usize| elements as f64 / BLOCK_UNIT as f64;
    let mut shapes = Vec::new();
    for w in 0..warps {
        let (r, c, h, wd) = warp_extent(&owner, bn, w);
        let fill = if w == WARP { Fill::Tint(0) } else { Fill::Plain };
        shapes.push(Shape::cell(
            panel,
            unit(c),
            unit(r),
            unit(wd),
            unit(h),
            fill,
            &format!("warp {w}"),
        ));
    }
    // The warp's tile, a cell per 4 × 4 results, right of the block at a larger scale.
    let (r0, c0, rows, cols) = warp_extent(&owner, bn, WARP);
    let gap = 2.5;
    let x0 = unit(bn) + gap;
    let lane_of = |pr: usize, pc: usize| -> usize {
        let cell = &owner[(r0 + pr * PATCH) * bn + c0 + pc * PATCH..];
        let (w, lane) = cell[0].expect("every result has an owner");
        assert_eq!(w, WARP);
        lane
    };
    let (quad_rows, quad_cols) = (rows / PATCH / 2, cols / PATCH / 2);
    for pr in 0..rows / PATCH {
        for pc in 0..cols / PATCH {
            let lane = lane_of(pr, pc);
            let first_quadrant = pr < quad_rows && pc < quad_cols;
            let (fill, label) = if lane == LANE {
                (Fill::Tint(1), lane.to_string())
            } else if first_quadrant {
                (Fill::Plain, lane.to_string())
            } else {
                (Fill::Plain, String::new())
            };
            shapes.push(Shape::cell(
                panel,
                x0 + pc as f64,
                pr as f64,
                1.0,
                1.0,
                fill,
                &label,
            ));
        }
    }
    // The quadrants the lanes repeat in.
    for (qr, qc) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
        let (x, y) = (x0 + (qc * quad_cols) as f64, (qr * quad_rows) as f64);
        let (w, h) = (quad_cols as f64, quad_rows as f64);
        shapes.push(Shape::frame(panel, x, y, w, h, Ink::Dark));
    }
    // The zoom: the warp's corners in the block to the corners of its enlarged tile.
    let (wx, wy, ww, wh) = (unit(c0), unit(r0), unit(cols), unit(rows));
    shapes.push(Shape::line(panel, (wx + ww, wy), (x0, 0.0), Ink::Muted));
    shapes.push(Shape::line(
        panel,
        (wx + ww, wy + wh),
        (x0, (rows / PATCH) as f64),
        Ink::Muted,
    ));
    let below = unit(TILE).max((rows / PATCH) as f64) + 0.7;
    let notes = [
        format!(
            "block tile {TILE} × {bn} of C: {warps} warps, each {rows} × {cols}; warp {WARP} to the right"
        ),
        format!(
            "warp {WARP}: a cell per {PATCH} × {PATCH} results, numbered by the lane that computes them"
        ),
        format!(
            "lane {LANE} (orange) computes the same cell of each {} × {} quadrant: {} results",
            quad_rows * PATCH,
            quad_cols * PATCH,
            8 * bn / 16
        ),
    ];
    for (i, note) in notes.iter().enumerate() {
        shapes.push(Shape::text(panel, 0.0, below + i as f64 * 0.9, HPos::Left, note));
    }
    Diagram {
        stem: "hopper_memory-diagram-warptile",
        title: format!(
            "Who computes what in the warp-tiled multiply (sgemm_warp_{bn}_k{}): the block's \
             tile of C split among its warps, and warp {WARP}'s tile among its 32 lanes",
            v.bk
        ),
        computed_by: "hopper_memory::sgemm::warp_layout::result",
        panel_columns: 1,
        shapes,
        provenance: None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::panel;
    use super::*;
    use crate::harness::plot::ShapeKind;

    #[test]
    fn the_pipeline_is_the_kernels_loop() {
        let source =
            kernels::source(STREAM_FILE).expect("the stream kernel is embedded").source;
        assert!(
            source.contains(&format!("STREAM_CP_ASYNC({STAGES})")),
            "the kernel has an instance of {STAGES} stages"
        );
        let l = StreamLoop::of_kernel(STAGES);
        // The prologue fills every stage; the wait leaves all but the oldest in flight;
        // each refill reaches a full turn of the stages ahead.
        assert_eq!(
            l,
            StreamLoop { stages: 3, prologue: 3, wait_group: 2, ahead: 3 },
            "read from {STREAM_FILE}"
        );
        for stages in 1..=4 {
            let l = StreamLoop::of_kernel(stages);
            let columns = stream(l, 3 * stages + 1);
            for (k, column) in columns.iter().skip(1).enumerate() {
                // Element k is read from stage k mod STAGES, landed; while it is read,
                // at most wait_group copies are in flight, which keep the stages full.
                assert_eq!(column[k % stages], Held::Read(k));
                let in_flight =
                    column.iter().filter(|h| matches!(h, Held::InFlight(_))).count();
                assert!(in_flight <= l.wait_group, "{stages} stages, k = {k}");
                assert!(in_flight < stages);
                let left = 3 * stages + 1 - k - 1;
                assert_eq!(in_flight, left.min(stages - 1), "{stages} stages, k = {k}");
            }
        }
    }

    #[test]
    fn the_cells_drawn_are_the_replayed_stages() {
        let d = pipeline();
        let l = StreamLoop::of_kernel(STAGES);
        let columns = stream(l, ELEMENTS);
        let shapes = panel(&d, "");
        let cells: Vec<&&Shape> = shapes
            .iter()
            .filter(|s| s.shape == ShapeKind::Cell && s.w == 2.0)
            .collect();
        assert_eq!(cells.len(), columns.len() * STAGES);
        // Every element is read exactly once, in order, and every element is in flight
        // in the column before the one that reads it.
        let read: Vec<usize> = cells
            .iter()
            .filter(|s| s.fill().ok() == Some(Fill::Tint(1)))
            .map(|s| s.label.parse().unwrap())
            .collect();
        assert_eq!(read, (0..ELEMENTS).collect::<Vec<_>>());
        for (c, column) in columns.iter().enumerate().skip(1) {
            let k = c - 1;
            assert!(columns[c - 1].contains(&Held::InFlight(k)), "element {k}");
            for (s, held) in column.iter().enumerate() {
                let cell = cells[c * STAGES + s];
                let want = match held {
                    Held::Empty => String::new(),
                    Held::InFlight(e) | Held::Read(e) => e.to_string(),
                };
                assert_eq!(cell.label, want);
            }
        }
        // The prologue: the first STAGES elements in flight, one a stage.
        assert_eq!(columns[0], (0..STAGES).map(Held::InFlight).collect::<Vec<_>>());
    }

    #[test]
    fn every_result_of_the_block_has_one_warp_and_lane() {
        let v = warp_kernel();
        assert_eq!((v.bn, v.bk), (128, 8));
        let owner = owners(v.bn);
        assert!(owner.iter().all(Option::is_some), "a result no thread computes");
        // The index arithmetic warp_layout::result follows is the kernel's.
        let header = kernels::HEADERS.iter().find(|h| h.file == "hopper_sgemm.cuh");
        let source = header.expect("the warp-tiled kernels are embedded").source;
        for line in [
            "#define WT_BM 128",
            "const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;",
            "const int a_off = (warp / 2) * 32 + (lane / 8) * 4;",
            "const int b_off = (warp % 2) * (BN / 2) + (lane % 8) * 4;",
            "const int row = block_row + a_off + (i / 4) * 16 + i % 4;",
            "const int col = block_col + b_off + 32 * q;",
        ] {
            assert!(source.contains(line), "hopper_sgemm.cuh no longer has `{line}`");
        }
        let d = warp_tile();
        let cells: Vec<&Shape> =
            d.shapes.iter().filter(|s| s.shape == ShapeKind::Cell).collect();
        // The warps' cells: 8, tiling the block tile, each the extent of its results,
        // every one of which it owns.
        let warps: Vec<&&Shape> =
            cells.iter().filter(|s| s.label.starts_with("warp ")).collect();
        assert_eq!(warps.len(), THREADS as usize / 32);
        let u = BLOCK_UNIT as f64;
        let area: f64 = warps.iter().map(|s| s.w * s.h * u * u).sum();
        assert_eq!(area as usize, TILE * v.bn);
        for (w, cell) in warps.iter().enumerate() {
            let (r, c, h, wd) = (cell.y * u, cell.x * u, cell.h * u, cell.w * u);
            let (r, c, h, wd) = (r as usize, c as usize, h as usize, wd as usize);
            assert_eq!((r, c, h, wd), warp_extent(&owner, v.bn, w), "warp {w}");
            let count =
                owner.iter().filter(|o| matches!(o, Some((x, _)) if *x == w)).count();
            assert_eq!(count, h * wd, "warp {w} owns its whole tile");
            assert_eq!(count, 32 * 8 * v.bn / 16);
        }
        // The warp's lanes: one cell per 4 × 4 results, the lane written in it the owner of
        // each of those results; each lane labelled once in the first quadrant, and lane
        // LANE in all four.
        let (r0, c0, rows, cols) = warp_extent(&owner, v.bn, WARP);
        let x0 = warps.iter().map(|s| s.x + s.w).fold(0.0, f64::max) + 2.5;
        let lanes: Vec<&&Shape> =
            cells.iter().filter(|s| !s.label.starts_with("warp ")).collect();
        assert_eq!(lanes.len(), rows * cols / (PATCH * PATCH));
        let mut labelled = vec![0; 32];
        for cell in lanes.iter().filter(|s| !s.label.is_empty()) {
            let lane: usize = cell.label.parse().unwrap();
            labelled[lane] += 1;
            let (pr, pc) = (cell.y as usize, (cell.x - x0) as usize);
            for r in r0 + pr * PATCH..r0 + (pr + 1) * PATCH {
                for c in c0 + pc * PATCH..c0 + (pc + 1) * PATCH {
                    assert_eq!(owner[r * v.bn + c], Some((WARP, lane)), "({r}, {c})");
                }
            }
        }
        let want: Vec<usize> = (0..32).map(|l| if l == LANE { 4 } else { 1 }).collect();
        assert_eq!(labelled, want);
    }

    #[test]
    fn the_barrier_is_armed_with_the_boxs_bytes_and_completes_when_they_land() {
        let (arrivals, armed) = tma_kernel_arms();
        assert_eq!(arrivals, 1, "thread 0's arrival alone");
        assert_eq!(armed, box_bytes(), "the kernel expects the bytes of the maps' box");
        assert_eq!(armed, 4096);
        // The block drawn is the launch's: one warp, as the kernel's comment says.
        let source = kernels::source(TMA_FILE).unwrap().source;
        let launch =
            format!("32), ceil(rows / 32)); blocks of {} threads.", tma::COPY_THREADS);
        assert!(source.contains(&launch), "tma_copy's launch: {launch}");
        let steps = tma_copy_steps(arrivals, armed, box_bytes());
        // The phase completes at the engine's step and no earlier; the waits spin before
        // it and return after it.
        let complete: Vec<usize> =
            (0..steps.len()).filter(|&s| steps[s].barrier.phase == 1).collect();
        let engine_writes = steps
            .iter()
            .position(|s| {
                s.actions
                    .iter()
                    .any(|(l, a)| *l == Lane::Engine && a.starts_with("complete_tx"))
            })
            .unwrap();
        assert_eq!(complete.first(), Some(&engine_writes));
        let waits: Vec<bool> = steps.iter().filter_map(|s| s.wait_returns).collect();
        assert_eq!(waits, [false, true]);
        // Armed with more bytes than the box holds, the phase never completes.
        let short = tma_copy_steps(arrivals, armed + 4, box_bytes());
        assert!(short.iter().all(|s| s.barrier.phase == 0));
        assert_eq!(
            short.iter().filter_map(|s| s.wait_returns).next_back(),
            Some(false)
        );
        // The diagram: a cell per action and a barrier cell per step, the armed and the
        // written bytes the box's.
        let d = tma();
        let cells: Vec<&Shape> =
            d.shapes.iter().filter(|s| s.shape == ShapeKind::Cell).collect();
        let actions: usize = steps.iter().map(|s| s.actions.len()).sum();
        assert_eq!(cells.len(), actions + steps.len());
        let labels: Vec<&str> = cells.iter().map(|c| c.label.as_str()).collect();
        assert!(labels.contains(&format!("expect_tx {} B", box_bytes()).as_str()));
        assert!(labels.contains(&format!("complete_tx {} B", box_bytes()).as_str()));
        assert!(labels.contains(&format!("phase 0: {} B due", box_bytes()).as_str()));
        assert!(labels.contains(&"phase 0 complete"));
    }
}
