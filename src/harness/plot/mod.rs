//! Figures: SVG drawn from a record alone.
//!
//! A figure's CSV holds its provenance, how to draw it and its points
//! (`series,x,y,y_min,y_max`). [`draw_svg`] needs nothing else, so any figure can be redrawn
//! without a GPU, and a test can check that every committed SVG is exactly what its CSV draws.
//!
//! How to draw a figure is a handful of `# key: value` lines ([`Spec`]). Always present:
//! `plot` (`line`, `bar` or `dot`), `title`, `x_label`, `y_label`, `x_log`, `y_log`. Each of
//! the others is off unless its key is there:
//!
//! | key | value | effect |
//! |---|---|---|
//! | `markers_only` | series names, ` \| `-separated | markers without a joining line |
//! | `panels` | `x first word`, `x last word`, `series first word`, `series last word`, `series`, `series before colon` | small multiples: one panel per value of that part, the rest names the category or series |
//! | `panel_columns` | a count | panels per row (1 when absent) |
//! | `panel_y` | `independent` | each panel its own value axis |
//! | `ref_lines` | `y = 1: label \| x = l2_mib MiB: L2 {}` | dashed reference lines; the value may name another metadata key and a byte unit; `{}` in the label is the value |
//! | `dashed` | series names | drawn dashed with hollow markers (e.g. a paper's numbers) |
//! | `grey` | series names | drawn in grey: the points the figure does not name |
//! | `colors` | palette indices, one per series in order of appearance | pairs of series sharing a hue |
//! | `point_labels` | `x = label \| …` | names the markers of a markers-only series, by their x (`x @ y` names one of several at one x) |
//! | `x_unit` | `bytes` | x ticks at powers of two, written in KiB/MiB/GiB |
//! | `x_ticks`, `y_ticks` | `dense`, `data`, or a list of numbers | tick positions |
//! | `y2_label`, `y2_scale` | a label; a factor | a second value axis on the right: y × factor |
//! | `series_shown` | series names as in the data | draws only these series (a name no point has draws nothing); the others stay in the record |
//! | `series_labels` | `recorded name = label \| …` | the name drawn for a series (what it is, not the code's option); applied before `panels` splits names |
//! | `x_is_series` | `true` | series names along x, x values as the series (bars grouped by variant, coloured by kernel) |
//! | `y_from_zero` | `true` | the value axis includes zero, so heights compare as lengths (bars always do) |
//!
//! A bar chart's value axis is always linear: a `bar` record with `y_log: true` is drawn as a
//! dot plot (markers with min–max bars on a log axis), never as bars on a log axis.
//!
//! Layout rules every figure follows (and the tests check): every text is at least
//! [`MIN_DISPLAY_FONT_PX`] high when the figure is shown [`BOOK_DISPLAY_WIDTH`] pixels wide; no
//! text overlaps another text or a data mark (texts are placed by estimating their boxes with
//! DejaVu Sans' advance widths, the widest of the usual sans-serif fonts); axes end near the
//! data; a legend sits inside the plot only where it covers nothing, and above the plot
//! otherwise; every bar and point carries a `<title>` with its values (shown on hover where the
//! SVG is opened by itself). Figures are drawn on their own white card with dark ink, so they
//! read the same in mdBook's light and dark themes; a one-line footer names the GPU (or the
//! CPU) and the data file, whose metadata holds the rest of the provenance.
//!
//! The code, by concern: `types.rs` (points, chart kinds, panels, reference lines, ticks) and
//! `spec.rs` ([`Spec`] and its metadata round trip); `style.rs` (palette, font sizes, text
//! widths, wrapping) and `numbers.rs` (number and tick labels); `axis.rs` (axis ranges and
//! ticks); `scene.rs` (boxes, texts and drawing operations in page pixels) and `figure.rs`
//! (points split into panels and series with their styles); `layout.rs` ([`draw_svg`], the
//! shared layout and the footer), `grid.rs` (line and bar charts on a grid of panels),
//! `lines.rs`, `bars.rs` and `dot.rs` (drawing each kind), `legend.rs` (legends and
//! reference-line labels); `render.rs` (SVG text and hover titles); `records.rs` (writing,
//! redrawing and auditing figures); `read.rs` (reading an SVG back, [`layout_problems`]).

mod axis;
mod bars;
mod diagram;
mod dot;
mod figure;
mod grid;
mod layout;
mod legend;
mod lines;
mod numbers;
mod read;
mod records;
mod render;
mod scene;
mod spec;
mod style;
#[cfg(test)]
mod testing;
mod types;

pub use diagram::{
    diagram_meta, shapes_of, write_diagram, Fill, Ink, Shape, ShapeKind, MAX_UNIT_PX,
};
pub use layout::draw_svg;
pub use read::{layout_problems, read_svg_layout, SvgLayout, SvgMark, SvgText};
pub use records::{audit_figures, redraw, redraw_all, write_figure};
pub use scene::Bx;
pub use spec::{Spec, LABEL_AT};
pub use style::{
    text_width, BOOK_DISPLAY_WIDTH, MIN_DISPLAY_FONT_PX, PLOTTERS_SVG_FONT_SCALE, WIDTH,
};
pub use types::{Axis, Kind, PanelBy, Point, RefLine, Ticks};
