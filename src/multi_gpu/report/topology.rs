//! The GPUs and what links them, drawn from the run's topology table (`multi_gpu-topology`):
//! one box per GPU and, for every pair, a bracket above or below the boxes labelled with the
//! link `nvidia-smi topo -m` names for it. Nothing is drawn that the table does not hold: where
//! every pair shows `NV18`, the drawing shows eighteen links of each GPU on every path, as
//! nvidia-smi counts them, whether they run to switches or to the other GPU.

use plotters::style::text_anchor::HPos;

use crate::harness::plot::{Fill, Ink, Shape};
use crate::harness::record::Record;

/// The stem of the drawing.
pub const STEM: &str = "multi_gpu-topology-diagram";
/// Its title.
pub const TITLE: &str =
    "What links the GPUs: every pair and the link nvidia-smi topo -m names for it";
/// What computed its shapes, as its footer names it.
pub const COMPUTED_BY: &str = "multi_gpu::report::topology";

/// Width and height of a GPU's box, and the gap between two boxes (where the labels go: no
/// bracket rises there), in units.
const BOX_W: f64 = 3.0;
const BOX_H: f64 = 1.2;
const GAP: f64 = 2.0;
/// Height between two brackets, and of a label beyond its bracket.
const LEVEL: f64 = 1.2;
const LABEL_ABOVE: f64 = 0.5;

/// One unordered pair of the table: its GPUs and the link of each direction.
#[derive(Debug, Clone, PartialEq)]
struct Pair {
    a: usize,
    b: usize,
    link: String,
}

/// What the table says, read by column name.
struct Topology {
    gpus: usize,
    pairs: Vec<Pair>,
    /// Peer access of every ordered pair.
    access: Vec<bool>,
    /// Native atomics of every ordered pair.
    atomics: Vec<bool>,
}

fn read_pairs(rec: &Record) -> anyhow::Result<Topology> {
    let (from, to) = (rec.column("from")?, rec.column("to")?);
    let (smi, access, atomics) = (
        rec.column("nvidia-smi")?,
        rec.column("peer access")?,
        rec.column("native atomics")?,
    );
    let mut rows = Vec::new();
    for r in &rec.rows {
        let f: usize = r[from].parse()?;
        let t: usize = r[to].parse()?;
        rows.push((f, t, r[smi].clone(), r[access] == "yes", r[atomics] == "yes"));
    }
    anyhow::ensure!(!rows.is_empty(), "the topology table has no pair");
    let gpus = rows.iter().map(|r| r.0.max(r.1)).max().unwrap_or(0) + 1;
    let mut pairs = Vec::new();
    for a in 0..gpus {
        for b in a + 1..gpus {
            let cell = |f: usize, t: usize| {
                rows.iter().find(|r| r.0 == f && r.1 == t).map(|r| r.2.clone())
            };
            let (ab, ba) = (cell(a, b), cell(b, a));
            let link = match (ab, ba) {
                (Some(x), Some(y)) if x == y => x,
                (Some(x), Some(y)) => format!("{x} / {y}"),
                (Some(x), None) | (None, Some(x)) => x,
                (None, None) => anyhow::bail!("the table lacks the pair {a}, {b}"),
            };
            pairs.push(Pair { a, b, link });
        }
    }
    let access = rows.iter().map(|r| r.3).collect();
    let atomics = rows.iter().map(|r| r.4).collect();
    Ok(Topology { gpus, pairs, access, atomics })
}

/// `every pair`, `no pair`, or `k of n ordered pairs`.
fn how_many(flags: &[bool]) -> String {
    let yes = flags.iter().filter(|f| **f).count();
    match yes {
        0 => "no pair".into(),
        y if y == flags.len() => "every pair, both ways".into(),
        y => format!("{y} of {} ordered pairs", flags.len()),
    }
}

/// Whether brackets `p` and `q` over a row of GPUs cross when drawn on the same side: their
/// ends interleave.
fn interleave(p: &Pair, q: &Pair) -> bool {
    (p.a < q.a && q.a < p.b && p.b < q.b) || (q.a < p.a && p.a < q.b && q.b < p.b)
}

/// Whether `p` and `q` share more than an end (one holds the other, or they interleave).
fn overlap(p: &Pair, q: &Pair) -> bool {
    p.a.max(q.a) < p.b.min(q.b)
}

/// One bracket as drawn: its pair, its side (above the boxes or below) and its level (1 is
/// nearest the boxes).
struct Bracket {
    pair: Pair,
    above: bool,
    level: usize,
}

/// Sides and levels: shorter pairs first; each goes above unless it would cross a bracket
/// there, then below unless it would cross one there (four GPUs need no crossing: every
/// pair fits on two sides), else above. Its level is one more than that of any bracket on
/// its side it overlaps, so brackets that share a stretch never share a height.
fn place(mut pairs: Vec<Pair>) -> Vec<Bracket> {
    pairs.sort_by_key(|p| (p.b - p.a, p.a));
    let mut placed: Vec<Bracket> = Vec::new();
    for pair in pairs {
        let crosses = |above: bool| {
            placed.iter().any(|b| b.above == above && interleave(&b.pair, &pair))
        };
        let above = !crosses(true) || crosses(false);
        let level = 1 + placed
            .iter()
            .filter(|b| b.above == above && overlap(&b.pair, &pair))
            .map(|b| b.level)
            .max()
            .unwrap_or(0);
        placed.push(Bracket { pair, above, level });
    }
    placed
}

/// The shapes of the drawing of the topology table `rec`.
pub fn shapes(rec: &Record) -> anyhow::Result<Vec<Shape>> {
    let Topology { gpus, pairs, access, atomics } = read_pairs(rec)?;
    const PANEL: &str = "";
    let left = |g: usize| g as f64 * (BOX_W + GAP);
    let brackets = place(pairs);
    let levels = |above: bool| {
        brackets.iter().filter(|b| b.above == above).map(|b| b.level).max().unwrap_or(0)
    };
    let top = levels(true) as f64 * LEVEL + LABEL_ABOVE + 0.6;
    let bottom = top + BOX_H;
    // Where bracket `i` meets GPU `g`: on its side of the box, the brackets that leave to the
    // left innermost first, then those that leave to the right outermost first, so that
    // brackets that hold one another never cross.
    let end = |i: usize, g: usize| {
        let b = &brackets[i];
        let mut ends: Vec<(usize, bool, usize)> = brackets
            .iter()
            .enumerate()
            .filter(|(_, o)| o.above == b.above && (o.pair.a == g || o.pair.b == g))
            .map(|(k, o)| (k, o.pair.b == g, o.level))
            .collect();
        // Leaving left (the GPU is the pair's right end): level ascending; then right:
        // level descending.
        ends.sort_by_key(|&(k, leaves_left, level)| {
            if leaves_left {
                (0, level as isize, k)
            } else {
                (1, -(level as isize), k)
            }
        });
        let slot = ends.iter().position(|e| e.0 == i).expect("the bracket ends here");
        left(g) + (slot as f64 + 0.5) * BOX_W / ends.len() as f64
    };
    let mut links: Vec<String> = Vec::new();
    let mut shapes = Vec::new();
    for g in 0..gpus {
        let name = format!("GPU {g}");
        shapes.push(Shape::cell(
            PANEL,
            left(g),
            top,
            BOX_W,
            BOX_H,
            Fill::Tint(0),
            &name,
        ));
    }
    for (i, b) in brackets.iter().enumerate() {
        let p = &b.pair;
        let (edge, y, label_y) = if b.above {
            let y = top - b.level as f64 * LEVEL;
            (top, y, y - LABEL_ABOVE)
        } else {
            let y = bottom + b.level as f64 * LEVEL;
            (bottom, y, y + LABEL_ABOVE)
        };
        let class = match links.iter().position(|l| *l == p.link) {
            Some(i) => i,
            None => {
                links.push(p.link.clone());
                links.len() - 1
            }
        };
        let ink = Ink::Colour((1 + class) % 8);
        let (xa, xb) = (end(i, p.a), end(i, p.b));
        shapes.push(Shape::line(PANEL, (xa, edge), (xa, y), ink));
        shapes.push(Shape::line(PANEL, (xa, y), (xb, y), ink));
        shapes.push(Shape::line(PANEL, (xb, y), (xb, edge), ink));
        // In the gap between two boxes nearest the bracket's middle: no bracket rises
        // there, and any other label there belongs to a bracket at another height.
        let middle_gap = (p.a + p.b - 1) / 2;
        let gap_mid = left(middle_gap) + BOX_W + GAP / 2.0;
        shapes.push(Shape::text(PANEL, gap_mid, label_y, HPos::Center, &p.link));
    }
    let mut y = bottom + levels(false) as f64 * LEVEL + LABEL_ABOVE + 1.0;
    for link in &links {
        let words = link
            .split(" / ")
            .map(super::super::devices::describe_link)
            .collect::<Vec<_>>()
            .join(" one way, ");
        shapes.push(Shape::text(
            PANEL,
            0.0,
            y,
            HPos::Left,
            &format!("{link}: {words}"),
        ));
        y += 0.8;
    }
    let flags = format!(
        "peer access: {}; native atomics: {}",
        how_many(&access),
        how_many(&atomics)
    );
    shapes.push(Shape::text(PANEL, 0.0, y, HPos::Left, &flags));
    Ok(shapes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::plot::{self, ShapeKind};
    use crate::harness::record::{self, Meta};

    /// A topology table of `gpus` GPUs, every pair linked as `link(from, to)` says.
    pub(crate) fn table(gpus: usize, link: impl Fn(usize, usize) -> String) -> Record {
        let mut text = String::from(
            "from,to,peer access,native atomics,performance rank,nvidia-smi,link\n",
        );
        for f in 0..gpus {
            for t in (0..gpus).filter(|&t| t != f) {
                text.push_str(&format!("{f},{t},yes,yes,0,{},x\n", link(f, t)));
            }
        }
        record::parse_csv(&text).unwrap()
    }

    fn drawn(shapes: &[Shape]) -> String {
        let meta = plot::diagram_meta(
            Meta::for_cpu("cargo test").with("commit", "abc"),
            TITLE,
            COMPUTED_BY,
            1,
        );
        let text = record::to_csv_string(&meta, shapes).unwrap();
        plot::draw_svg(&record::parse_csv(&text).unwrap(), "t.csv").unwrap()
    }

    #[test]
    fn every_pair_gets_one_bracket_with_its_link() {
        for gpus in [2, 3, 4, 8] {
            let s = shapes(&table(gpus, |_, _| "NV18".into())).unwrap();
            let boxes = s.iter().filter(|s| s.shape == ShapeKind::Cell).count();
            let lines = s.iter().filter(|s| s.shape == ShapeKind::Line).count();
            let labels = s.iter().filter(|s| s.label == "NV18").count();
            let pairs = gpus * (gpus - 1) / 2;
            assert_eq!((boxes, lines, labels), (gpus, 3 * pairs, pairs), "{gpus} GPUs");
            assert!(s.iter().any(|s| s.label == "NV18: NVLink, 18 links of each GPU"));
            assert!(s
                .iter()
                .any(|s| s.label.ends_with("native atomics: every pair, both ways")));
            let svg = drawn(&s);
            let problems = plot::layout_problems(&svg);
            assert!(problems.is_empty(), "{gpus} GPUs: {}", problems.join("\n"));
        }
    }

    #[test]
    fn four_gpus_draw_without_a_crossing_and_nested_brackets_stack() {
        let placed = place(read_pairs(&table(4, |_, _| "NV18".into())).unwrap().pairs);
        for (i, p) in placed.iter().enumerate() {
            for q in &placed[i + 1..] {
                let same_side = p.above == q.above;
                assert!(!(same_side && interleave(&p.pair, &q.pair)), "a crossing");
                if same_side && overlap(&p.pair, &q.pair) {
                    assert_ne!(p.level, q.level);
                }
            }
        }
        let below: Vec<(usize, usize)> =
            placed.iter().filter(|b| !b.above).map(|b| (b.pair.a, b.pair.b)).collect();
        assert_eq!(below, [(1, 3)]);
        assert_eq!(placed.iter().map(|b| b.level).max(), Some(3));
    }

    #[test]
    fn mixed_links_are_each_named_and_keyed() {
        // GPUs 0-1 and 2-3 on NVLink, the rest across the sockets.
        let link = |f: usize, t: usize| {
            if f / 2 == t / 2 {
                "NV4".to_string()
            } else {
                "SYS".to_string()
            }
        };
        let s = shapes(&table(4, link)).unwrap();
        assert_eq!(s.iter().filter(|s| s.label == "NV4").count(), 2);
        assert_eq!(s.iter().filter(|s| s.label == "SYS").count(), 4);
        assert!(s.iter().any(|s| s.label.starts_with("SYS: PCIe")));
        assert!(plot::layout_problems(&drawn(&s)).is_empty());
        let one_way =
            shapes(&table(2, |f, _| if f == 0 { "NV2".into() } else { "PHB".into() }));
        assert!(one_way.unwrap().iter().any(|s| s.label == "NV2 / PHB"));
    }

    #[test]
    fn a_table_without_pairs_draws_nothing() {
        let empty = record::parse_csv(
            "from,to,peer access,native atomics,performance rank,nvidia-smi,link\n",
        )
        .unwrap();
        assert!(shapes(&empty).is_err());
    }
}
