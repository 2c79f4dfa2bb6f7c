//! Records written to break the redraw: metadata values that are not numbers or are absurd
//! ones, names that imitate the SVG's own markers, files under `data/` that are not files, and
//! a generated stream of such records. Each is drawn the way `--redraw-only` draws it, in
//! process; each must be refused with a message that names what is wrong, or drawn as a
//! well-formed SVG, and none may panic or take more than a moment.

use std::time::{Duration, Instant};

use cmbook::harness::plot::draw_svg;
use cmbook::harness::record::{self, markdown_table, parse_csv, REQUIRED_KEYS};
use proptest::prelude::*;

/// Far more than any record here takes (a few milliseconds), far less than a hang.
const PER_RECORD: Duration = Duration::from_secs(2);

fn provenance() -> String {
    REQUIRED_KEYS.iter().map(|k| format!("# {k}: test {k}\n")).collect()
}

/// What `--redraw-only` makes of one record's text ([`record::redraw_records`] for one file):
/// a figure's SVG where the metadata has `plot`, else the table's Markdown.
fn redraw(text: &str) -> anyhow::Result<String> {
    let rec = parse_csv(text)?;
    if rec.meta.get("plot").is_some() {
        draw_svg(&rec, "hostile.csv")
    } else {
        markdown_table(&rec, "figures/data/hostile.csv")
    }
}

/// [`redraw`], timed: the result, checked to come within [`PER_RECORD`].
fn redraw_in_time(text: &str) -> anyhow::Result<String> {
    let start = Instant::now();
    let drawn = redraw(text);
    let took = start.elapsed();
    assert!(took < PER_RECORD, "{took:?} to redraw\n{text}");
    drawn
}

/// A figure record: provenance, `keys` (`key: value` lines), then `rows` under the points'
/// header.
fn figure(keys: &[&str], rows: &str) -> String {
    let keys: String = keys.iter().map(|k| format!("# {k}\n")).collect();
    format!("{}{keys}series,x,y,y_min,y_max\n{rows}", provenance())
}

const LINE: &str = "plot: line";
const PLAIN: [&str; 5] =
    ["title: t", "x_label: x", "y_label: y", "x_log: false", "y_log: false"];
const TWO_POINTS: &str = "s,1,1,1,1\ns,2,2,2,2\n";

fn keys<'a>(first: &'a str, more: &[&'a str]) -> Vec<&'a str> {
    [first].into_iter().chain(PLAIN).chain(more.iter().copied()).collect()
}

/// Checks that `svg` is well-formed XML as far as a figure uses it: every tag closed in order
/// inside one `<svg>`, attribute values quoted, no character XML forbids, and every `&` the
/// start of an entity. (No XML parser is among the dependencies.)
fn assert_well_formed(svg: &str) {
    let bad = svg.chars().find(|&c| {
        (c.is_control() && !matches!(c, '\n' | '\t' | '\r'))
            || c == '\u{FFFE}'
            || c == '\u{FFFF}'
    });
    assert!(bad.is_none(), "{bad:?} is not allowed in XML\n{svg}");
    let entity_ok = |rest: &str| {
        ["&lt;", "&gt;", "&amp;", "&quot;", "&apos;", "&#"]
            .iter()
            .any(|e| rest.starts_with(e))
    };
    let mut open: Vec<&str> = Vec::new();
    let mut roots = 0;
    let mut rest = svg;
    while let Some(lt) = rest.find('<') {
        let text = &rest[..lt];
        for (i, _) in text.match_indices('&') {
            assert!(entity_ok(&text[i..]), "a bare `&` in {text:?}\n{svg}");
        }
        assert!(!text.contains('>'), "a bare `>` in {text:?}");
        let tag_end = rest[lt..].find('>').map(|e| lt + e).expect("an unclosed tag");
        let tag = &rest[lt + 1..tag_end];
        assert!(!tag.contains('<'), "`<` inside the tag <{tag}>");
        assert_eq!(tag.matches('"').count() % 2, 0, "unbalanced quotes in <{tag}>");
        let name =
            tag.trim_start_matches('/').split([' ', '/', '\n']).next().unwrap_or("");
        if tag.starts_with('?') || tag.starts_with('!') {
        } else if tag.starts_with('/') {
            assert_eq!(open.pop(), Some(name), "</{name}> closes another tag\n{svg}");
        } else if !tag.ends_with('/') {
            if open.is_empty() {
                roots += 1;
                assert_eq!(name, "svg", "the root is <{name}>");
            }
            open.push(name);
        }
        rest = &rest[tag_end + 1..];
    }
    assert!(rest.trim().is_empty(), "text after the root: {rest:?}");
    assert!(open.is_empty(), "{open:?} never closed\n{svg}");
    assert_eq!(roots, 1, "{roots} root elements");
}

#[test]
fn a_second_axis_factor_that_draws_no_axis_is_refused_by_key_and_value() {
    for scale in ["NaN", "inf", "-inf", "0", "-0", "-2.5", "1e999"] {
        let y2 = format!("y2_scale: {scale}");
        let text = figure(&keys(LINE, &["y2_label: GFLOP/s", &y2]), TWO_POINTS);
        let err = format!("{:#}", redraw_in_time(&text).unwrap_err());
        assert!(err.contains(&format!("`y2_scale: {scale}`")), "{scale}: {err}");
        assert!(err.contains("finite number above 0"), "{scale}: {err}");
    }
    let text =
        figure(&keys(LINE, &["y2_label: GFLOP/s", "y2_scale: 516.37"]), TWO_POINTS);
    assert_well_formed(&redraw_in_time(&text).unwrap());
}

#[test]
fn an_x_reference_line_where_x_holds_categories_is_refused() {
    for (plot, log) in [
        ("plot: bar", "y_log: false"),
        ("plot: bar", "y_log: true"),
        ("plot: dot", "y_log: false"),
    ] {
        let text = format!(
            "{}# {plot}\n# title: t\n# x_label: x\n# y_label: y\n# x_log: false\n# {log}\n\
             # ref_lines: x = 5: label\nseries,x,y,y_min,y_max\ns,a,1,1,1\ns,b,2,2,2\n",
            provenance()
        );
        let err = format!("{:#}", redraw_in_time(&text).unwrap_err());
        assert!(
            err.contains("reference line `x = 5: label`")
                && err.contains("holds categories"),
            "{plot}, {log}: {err}"
        );
    }
}

#[test]
fn a_reference_line_far_beyond_the_data_widens_the_axis_or_is_refused_by_its_range() {
    let huge = ["1e300", "-1e300", "1e308", "-1.7976931348623157e308", "1e-300"];
    for plot in ["plot: line", "plot: bar", "plot: dot"] {
        for log in ["y_log: false", "y_log: true"] {
            for v in huge {
                let line = format!("ref_lines: y = {v}: big");
                let text = format!(
                    "{}# {plot}\n# title: t\n# x_label: x\n# y_label: y\n# x_log: false\n# {log}\n\
                     # {line}\nseries,x,y,y_min,y_max\ns,1,1,1,1\ns,2,2,2,2\n",
                    provenance()
                );
                match redraw_in_time(&text) {
                    Ok(svg) => assert_well_formed(&svg),
                    Err(e) => {
                        let e = format!("{e:#}");
                        assert!(
                            e.contains("too wide a range to draw")
                                || e.contains("a log axis cannot show"),
                            "{plot}, {log}, {v}: {e}"
                        );
                    }
                }
            }
        }
    }
    // On a linear axis the audit's own case is drawn: the line on top, the data squeezed.
    let text = figure(&keys(LINE, &["ref_lines: y = 1e300: big"]), TWO_POINTS);
    assert_well_formed(&redraw_in_time(&text).unwrap());
    // A reference line that is not a number is named.
    for v in ["NaN", "inf", "-inf"] {
        let line = format!("ref_lines: y = {v}: big");
        let err = format!(
            "{:#}",
            redraw_in_time(&figure(&keys(LINE, &[&line]), TWO_POINTS)).unwrap_err()
        );
        assert!(
            err.contains(&format!("`y = {v}: big`"))
                && err.contains("not a finite number"),
            "{err}"
        );
    }
}

#[test]
fn names_like_the_hover_sentinels_draw_well_formed_svg() {
    let names = [
        "cmbook-hover-group-close",
        "cmbook-hover-group-open:0",
        "cmbook-hover-group-open:99",
        "\u{1}cmbook-hover-group-close",
        "<script>alert(1)</script>",
        "a & b \u{7} c",
    ];
    for plot in ["plot: line", "plot: bar"] {
        let mut rows = String::new();
        for n in names {
            let quoted = format!("\"{}\"", n.replace('"', "\"\""));
            rows.push_str(&format!("{quoted},1,1,0.5,1.5\n{quoted},2,2,2,2\n"));
        }
        let text = format!(
            "{}# {plot}\n# title: cmbook-hover-group-close\n# x_label: cmbook-hover-group-open:0\n\
             # y_label: y\n# x_log: false\n# y_log: false\nseries,x,y,y_min,y_max\n{rows}",
            provenance()
        );
        let svg = redraw_in_time(&text).unwrap();
        assert_well_formed(&svg);
        assert!(
            svg.contains("cmbook-hover-group-close") && svg.contains("&lt;script&gt;")
        );
        // One hover group per point (and per line of a line chart), every one closed.
        let groups = svg.lines().filter(|l| *l == "<g>").count();
        let lines = if plot == "plot: line" { names.len() } else { 0 };
        assert_eq!(groups, names.len() * 2 + lines, "{plot}\n{svg}");
    }
}

/// Runs `f` on another thread and fails, rather than hangs, when it takes more than a few
/// seconds.
fn within_seconds<T: Send + 'static>(
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(f()));
    rx.recv_timeout(Duration::from_secs(20)).unwrap_or_else(|_| panic!("{what} hangs"))
}

#[cfg(unix)]
#[test]
fn a_redraw_and_a_comparison_leave_what_is_not_a_file_alone_and_never_wait_on_it() {
    use std::os::unix::fs::symlink;
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().to_path_buf();
    let data = out.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let table = format!("{}# title: t\n# rows: 1\na,b\n1,2\n", provenance());
    std::fs::write(data.join("a-table.csv"), &table).unwrap();
    let name = std::ffi::CString::new(data.join("zz.csv").to_str().unwrap()).unwrap();
    // SAFETY: a valid, NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    symlink("/dev/zero", data.join("zero.csv")).unwrap();
    let dir = out.clone();
    let (count, left_alone) = within_seconds("--redraw-only's redraw", move || {
        record::redraw_records(&dir, |_| true)
    })
    .unwrap();
    assert_eq!(count, 1);
    assert_eq!(
        left_alone,
        ["zero.csv (a link out of the folder)", "zz.csv (not a regular file)"]
    );
    let dir = out.clone();
    assert!(!within_seconds("--compare's was_quick", move || {
        cmbook::harness::compare::was_quick(&dir)
    }));
    let dir = out.clone();
    let problems =
        within_seconds("the audit", move || cmbook::harness::plot::audit_figures(&dir))
            .unwrap();
    assert!(problems.is_empty(), "{problems:?}");
}

#[test]
fn a_record_cut_at_a_line_boundary_is_refused_by_file_and_counts() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let whole = figure(&keys(LINE, &["rows: 3"]), "s,1,1,1,1\ns,2,2,2,2\ns,3,3,3,3\n");
    assert_well_formed(&redraw_in_time(&whole).unwrap());
    let cut = whole.strip_suffix("s,3,3,3,3\n").unwrap();
    std::fs::write(data.join("cut.csv"), cut).unwrap();
    let err =
        format!("{:#}", record::redraw_records(tmp.path(), |_| true).unwrap_err());
    assert!(
        err.contains(
            "cut.csv is not a record: 2 rows found where `# rows: 3` declares 3"
        ),
        "{err}"
    );
}

/// Numbers as a record may write them, absurd ones first.
fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec![
            "NaN", "nan", "inf", "-inf", "1e300", "-1e300", "1e308", "-1e308", "1e-300",
            "5e-324", "0", "-0", "1", "-1", "2.5", "1e999", "", "abc", "18446744073709551615",
            "99999999999999999999999", "0x10", "1_000",
        ])
        .prop_map(str::to_string),
        2 => (-1e4f64..1e4).prop_map(|v| v.to_string()),
        1 => any::<f64>().prop_map(|v| v.to_string()),
        1 => (0u32..3000).prop_map(|v| v.to_string()),
    ]
}

/// Text as a record may hold it: empty, huge-looking, HTML, the SVG's markers, non-ASCII,
/// the separators of list-valued keys.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec![
            "", " ", "<script>alert(1)</script>", "<img src=x onerror=alert(3)>", "a & b",
            "cmbook-hover-group-close", "cmbook-hover-group-open:0", "\u{1}cmbook-hover-group-open:0",
            "ünïcødé ✓ 漢字 😀", "a | b", " | ", "{}", "x = 1", "y = 1: l", "l2_mib MiB", "\"",
            "tab\there", "]]>", "<!--", "&amp;", "\u{FFFE}", "\u{202E}rtl",
        ])
        .prop_map(str::to_string),
        2 => "[ -~]{0,24}",
        1 => "\\PC{0,12}",
        1 => number(),
    ]
}

/// Mostly `good`, sometimes `hostile`: a record with one bad value among good ones reaches
/// further into the drawing than one that is bad throughout.
fn mostly(
    good: BoxedStrategy<String>,
    hostile: BoxedStrategy<String>,
) -> BoxedStrategy<String> {
    prop_oneof![9 => good, 1 => hostile].boxed()
}

fn words(v: &[&'static str]) -> BoxedStrategy<String> {
    prop::sample::select(v.to_vec()).prop_map(str::to_string).boxed()
}

/// Values of a list-valued key: up to four items joined by its separator.
fn list(item: BoxedStrategy<String>) -> BoxedStrategy<String> {
    prop::collection::vec(item, 0..5).prop_map(|v| v.join(" | ")).boxed()
}

/// Plain numbers, as a chapter writes them.
fn good_number() -> BoxedStrategy<String> {
    prop_oneof![
        (0.001f64..1e4).prop_map(|v| v.to_string()),
        (1u32..5000).prop_map(|v| v.to_string())
    ]
    .boxed()
}

/// The names the points' series and categories take in [`body`].
fn name() -> BoxedStrategy<String> {
    words(&["a", "b", "c d", "MINI float", "x y z", "1", "2", "4096"])
}

/// A `# key: value` line for each key the plotter and the tables read: the six every figure
/// has, nearly always there; the optional ones now and then; each value mostly one a chapter
/// would write, sometimes a hostile one.
fn metadata() -> impl Strategy<Value = String> {
    let kv = |key: &'static str, p: f64, value: BoxedStrategy<String>| {
        prop::option::weighted(p, value)
            .prop_map(move |v| v.map(|v| format!("# {key}: {v}\n")).unwrap_or_default())
            .boxed()
    };
    let hostile = || prop_oneof![text(), number()].boxed();
    let ref_line = mostly(
        (
            words(&["x", "y"]),
            good_number(),
            words(&["L2 {}", "target", "1× (no speedup)"]),
        )
            .prop_map(|(a, v, l)| format!("{a} = {v}: {l}"))
            .boxed(),
        (
            words(&["x", "y", "z", "", "y ="]),
            prop_oneof![number(), words(&["l2_mib MiB", "gpu", "1 TiB", "l2_mib"])],
            text(),
        )
            .prop_map(|(a, v, l)| format!("{a} = {v}: {l}"))
            .boxed(),
    );
    let numbers = |n: usize| {
        mostly(
            prop::collection::vec(good_number(), 0..n)
                .prop_map(|v| v.join(" "))
                .boxed(),
            prop::collection::vec(number(), 0..n.max(60))
                .prop_map(|v| v.join(" "))
                .boxed(),
        )
    };
    let ticks = mostly(
        prop_oneof![words(&["auto", "dense", "data"]), numbers(12)].boxed(),
        text().boxed(),
    );
    let flag = mostly(words(&["true", "false"]), hostile());
    let label =
        mostly(words(&["t", "size (bytes)", "GB/s", "µs – median"]), text().boxed());
    let column = mostly(words(&["series", "x", "y", "y_min", "y_max"]), text().boxed());
    let groups = (
        (
            kv(
                "plot",
                0.85,
                prop_oneof![12 => words(&["line", "bar", "dot"]), 1 => hostile()]
                    .boxed(),
            ),
            kv("title", 0.99, label.clone()),
            kv("x_label", 0.99, label.clone()),
            kv("y_label", 0.99, label.clone()),
            kv("x_log", 0.99, flag.clone()),
            kv("y_log", 0.99, flag),
            kv("markers_only", 0.15, list(mostly(name(), text().boxed()))),
            kv(
                "panels",
                0.2,
                mostly(
                    words(&[
                        "x first word",
                        "x last word",
                        "series first word",
                        "series last word",
                        "series",
                    ]),
                    hostile(),
                ),
            ),
        ),
        (
            kv(
                "panel_columns",
                0.15,
                mostly(words(&["1", "2", "3"]), number().boxed()),
            ),
            kv("panel_y", 0.1, mostly(words(&["independent", "shared"]), hostile())),
            kv("ref_lines", 0.3, list(ref_line)),
            kv("dashed", 0.15, list(mostly(name(), text().boxed()))),
            kv(
                "colors",
                0.15,
                mostly(
                    prop::collection::vec(0u32..20, 0..6)
                        .prop_map(|v| {
                            v.iter().map(u32::to_string).collect::<Vec<_>>().join(" ")
                        })
                        .boxed(),
                    numbers(6),
                ),
            ),
            kv(
                "point_labels",
                0.15,
                list(
                    (mostly(good_number(), number().boxed()), label.clone())
                        .prop_map(|(x, l)| format!("{x} = {l}"))
                        .boxed(),
                ),
            ),
            kv("x_unit", 0.15, mostly(words(&["bytes"]), hostile())),
            kv("x_ticks", 0.15, ticks.clone()),
        ),
        (
            kv("y_ticks", 0.15, ticks),
            // The two keys of a second axis go together, nearly always.
            prop_oneof![
                12 => (label.clone(), mostly(good_number(), number().boxed()))
                    .prop_map(|(l, v)| format!("# y2_label: {l}\n# y2_scale: {v}\n")),
                1 => kv("y2_label", 0.5, label.clone()),
                1 => kv("y2_scale", 0.5, number().boxed()),
            ]
            .prop_flat_map(|both| prop::option::weighted(0.15, Just(both)))
            .prop_map(Option::unwrap_or_default)
            .boxed(),
            kv("l2_mib", 0.2, mostly(good_number(), number().boxed())),
            kv(
                "headers",
                0.2,
                list(
                    (column.clone(), label.clone())
                        .prop_map(|(c, h)| format!("{c} = {h}"))
                        .boxed(),
                ),
            ),
            kv("columns", 0.2, list(column.clone())),
            kv("code", 0.2, list(column.clone())),
            kv(
                "fold",
                0.2,
                mostly(
                    prop_oneof![
                        words(&["1", "2"]),
                        (column, name())
                            .prop_map(|(c, v)| format!("{c} = {v}"))
                            .boxed(),
                    ]
                    .boxed(),
                    hostile(),
                ),
            ),
        ),
        (
            kv("computed", 0.1, label.clone()),
            kv("empty", 0.1, label),
            kv("rows", 0.05, hostile()),
        ),
    );
    groups.prop_map(|(a, b, c, d)| {
        [a.0, a.1, a.2, a.3, a.4, a.5, a.6, a.7]
            .into_iter()
            .chain([b.0, b.1, b.2, b.3, b.4, b.5, b.6, b.7])
            .chain([c.0, c.1, c.2, c.3, c.4, c.5, c.6])
            .chain([d.0, d.1, d.2])
            .collect::<String>()
    })
}

/// The header and rows: mostly the points' columns with fields that are mostly good (written
/// as a CSV writer quotes them), sometimes other columns, sometimes raw lines.
fn body() -> impl Strategy<Value = String> {
    let value = || mostly(good_number(), number().boxed());
    let row = (
        mostly(name(), text().boxed()),
        mostly(prop_oneof![9 => good_number(), 1 => name()].boxed(), text().boxed()),
        value(),
        value(),
        value(),
    );
    let points = prop::collection::vec(row, 0..10).prop_map(|rows| {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(["series", "x", "y", "y_min", "y_max"]).unwrap();
        for (s, x, y, lo, hi) in rows {
            w.write_record([s, x, y, lo, hi]).unwrap();
        }
        String::from_utf8(w.into_inner().unwrap()).unwrap()
    });
    let other = prop::collection::vec(prop::collection::vec(text(), 1..4), 0..6)
        .prop_map(|rows| {
            let mut w =
                csv::WriterBuilder::new().flexible(true).from_writer(Vec::new());
            for r in rows {
                w.write_record(r).unwrap();
            }
            String::from_utf8(w.into_inner().unwrap()).unwrap()
        });
    let raw = prop::collection::vec(text(), 0..6).prop_map(|lines| lines.join("\n"));
    prop_oneof![8 => points, 1 => other, 1 => raw]
}

proptest! {
    // 10 000 records, each drawn in milliseconds: a few seconds in a release build.
    #![proptest_config(ProptestConfig {
        cases: 10_000,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Whatever a record holds, the redraw refuses it with a message or draws a well-formed
    /// SVG (or a table), within [`PER_RECORD`], and never panics.
    #[test]
    fn any_record_is_refused_or_drawn_well_formed_in_time(
        prov in prop::bool::weighted(0.9),
        meta in metadata(),
        body in body(),
    ) {
        let text = format!("{}{meta}{body}", if prov { provenance() } else { String::new() });
        match redraw_in_time(&text) {
            Ok(drawn) if drawn.starts_with("<svg") => assert_well_formed(&drawn),
            Ok(_) => {}
            // A refusal says what it refuses.
            Err(e) => {
                let message = format!("{e:#}");
                prop_assert!(!message.trim().is_empty(), "an empty message for\n{}", text);
            }
        }
    }
}

#[test]
fn the_generated_records_reach_the_drawing() {
    // The property above is only worth its cases if many of them draw: a generator whose
    // records were all refused at parsing would test nothing.
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let (mut drawn, mut tables) = (0, 0);
    for _ in 0..500 {
        let meta = metadata().new_tree(&mut runner).unwrap().current();
        let body = body().new_tree(&mut runner).unwrap().current();
        match redraw_in_time(&format!("{}{meta}{body}", provenance())) {
            Ok(d) if d.starts_with("<svg") => drawn += 1,
            Ok(_) => tables += 1,
            Err(_) => {}
        }
    }
    assert!(
        drawn >= 50 && tables >= 40,
        "{drawn} figures and {tables} tables drawn of 500"
    );
}
