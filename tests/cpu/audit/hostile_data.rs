//! The audit's table 3, hostile or corrupted data: a copy of the book's `figures/` with one
//! record damaged, then `reproduce --redraw-only` and `reproduce --compare` on it. A damaged
//! record is refused by file before anything is written; text from the data reaches pages
//! escaped; files that are not records are left alone, and said so; nothing hangs.

use std::path::Path;

use cmbook::chapters::ALL;

use super::{copy_figures, run_all, unchanged, After, Case, Folder};

/// A figure no headline or claim reads (the comparison leaves it alone), and one it reads.
const FIGURE: &str = "coalescing-stride";
const HEADLINE: &str = "ceilings-summary";
/// A table no headline or claim reads.
const TABLE: &str = "coalescing-patterns";

/// Whether `--compare` reads the record `stem`.
fn compared(stem: &str) -> bool {
    ALL.iter().any(|c| {
        c.headlines.iter().any(|h| h.pick.stem == stem)
            || c.claims
                .iter()
                .any(|cl| cl.a.stem == stem || cl.b.is_some_and(|b| b.stem == stem))
    })
}

fn csv(f: &Folder, stem: &str) -> std::path::PathBuf {
    f.out.join("data").join(format!("{stem}.csv"))
}

/// Rewrites the record `stem` with `edit`.
fn edit(f: &Folder, stem: &str, edit: &dyn Fn(&str) -> String) {
    let path = csv(f, stem);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, edit(&text)).unwrap();
}

/// `text` with the first data row's cell `column` (0-based) set to `value`.
fn with_cell(text: &str, column: usize, value: &str) -> String {
    let mut header_seen = false;
    let mut done = false;
    text.lines()
        .map(|l| {
            if l.starts_with('#') || done {
                return format!("{l}\n");
            }
            if !header_seen {
                header_seen = true;
                return format!("{l}\n");
            }
            done = true;
            let mut cells = split_csv(l);
            cells[column] = value.to_string();
            format!("{}\n", cells.join(","))
        })
        .collect()
}

/// A CSV line's cells, keeping their quotes.
fn split_csv(line: &str) -> Vec<String> {
    let mut cells = vec![String::new()];
    let mut quoted = false;
    for ch in line.chars() {
        match ch {
            '"' => {
                quoted = !quoted;
                cells.last_mut().unwrap().push(ch);
            }
            ',' if !quoted => cells.push(String::new()),
            _ => cells.last_mut().unwrap().push(ch),
        }
    }
    cells
}

/// `text` with metadata line `line` added after the first one.
fn with_meta(text: &str, line: &str) -> String {
    let (first, rest) = text.split_once('\n').unwrap();
    format!("{first}\n{line}\n{rest}")
}

/// No page in the folder holds `needle` (raw HTML that the data carried).
fn nowhere(needle: &'static str) -> After {
    Box::new(move |f: &Folder| {
        for (rel, bytes) in super::snapshot(&f.out) {
            let name = rel.to_string_lossy();
            let page = [".md", ".svg", ".html"].iter().any(|e| name.ends_with(e));
            if page && String::from_utf8_lossy(&bytes).contains(needle) {
                return Err(format!("{name} holds `{needle}` unescaped"));
            }
        }
        Ok(())
    })
}

/// One damage, tried with both modes: each must be refused naming the file (`refused`) or
/// succeed (`accepted`); the comparison accepts damage to a record it does not read.
fn both(
    cases: &mut Vec<Case>,
    what: &str,
    stem: &'static str,
    damage: impl Fn(&Folder) + Sync + Clone + 'static,
    refused: Option<&'static str>,
    after_ok: fn() -> After,
) {
    for mode in ["--redraw-only", "--compare"] {
        let base = Case::new(
            format!("{what} ({stem}), {mode}"),
            "reproduce",
            &["--out", "{out}", mode],
        );
        let damage = damage.clone();
        let base = base.prepare(move |f| {
            copy_figures(&f.out);
            damage(f)
        });
        let refuse = refused.filter(|_| mode == "--redraw-only" || compared(stem));
        cases.push(match refuse {
            Some(words) => {
                let file = format!("{stem}.csv");
                base.refused(&[&file, words]).after(|f| unchanged()(f))
            }
            None => base.ok(&[]).after(move |f| after_ok()(f)),
        });
    }
}

fn unchanged_pages() -> After {
    Box::new(|_| Ok(()))
}

fn cases() -> Vec<Case> {
    let mut c = Vec::new();
    let cut_mid_row = |t: &str| t[..t.len() - 20].to_string();
    let drop_rows = |t: &str| {
        let lines: Vec<&str> = t.lines().collect();
        lines[..lines.len() - 2].iter().map(|l| format!("{l}\n")).collect()
    };
    for stem in [HEADLINE, "tiling-traversal", FIGURE] {
        both(
            &mut c,
            "cut mid-row",
            stem,
            move |f| edit(f, stem, &cut_mid_row),
            Some(""),
            unchanged_pages,
        );
        both(
            &mut c,
            "cut at a line boundary",
            stem,
            move |f| edit(f, stem, &drop_rows),
            Some("rows"),
            unchanged_pages,
        );
        both(
            &mut c,
            "emptied",
            stem,
            move |f| edit(f, stem, &|_| String::new()),
            Some(""),
            unchanged_pages,
        );
        both(
            &mut c,
            "random bytes",
            stem,
            move |f| {
                std::fs::write(csv(f, stem), [0x8f, 0x00, 0xff, 0x13, 0x37, 0xc3, 0x28])
                    .unwrap()
            },
            Some(""),
            unchanged_pages,
        );
        let not_utf8 = move |f: &Folder| {
            let mut bytes = std::fs::read(csv(f, stem)).unwrap();
            let at = bytes.len() - 5;
            bytes[at] = 0xff;
            std::fs::write(csv(f, stem), bytes).unwrap();
        };
        both(
            &mut c,
            "a byte that is not UTF-8",
            stem,
            not_utf8,
            Some(""),
            unchanged_pages,
        );
        both(
            &mut c,
            "an unterminated quote",
            stem,
            move |f| edit(f, stem, &|_| "lorem,,,\"unterminated\n".into()),
            Some(""),
            unchanged_pages,
        );
        both(
            &mut c,
            "CRLF line endings",
            stem,
            move |f| edit(f, stem, &|t| t.replace('\n', "\r\n")),
            None,
            unchanged_pages,
        );
        both(
            &mut c,
            "a byte order mark",
            stem,
            move |f| edit(f, stem, &|t| format!("\u{feff}{t}")),
            None,
            unchanged_pages,
        );
    }
    // Values a figure cannot draw, and values a headline cannot be.
    for (bad, words) in [("NaN", "NaN"), ("1e309", "inf"), ("-5", "")] {
        let damage = move |f: &Folder| {
            edit(f, FIGURE, &|t| {
                with_cell(
                    &with_meta(t, "# y_log: true").replacen("# y_log: false\n", "", 1),
                    2,
                    bad,
                )
            })
        };
        both(
            &mut c,
            &format!("{bad} in a figure"),
            FIGURE,
            damage,
            Some(words),
            unchanged_pages,
        );
    }
    both(
        &mut c,
        "1e300 in a figure",
        FIGURE,
        |f| edit(f, FIGURE, &|t| with_cell(t, 2, "1e300")),
        None,
        unchanged_pages,
    );
    for bad in ["NaN", "-3030", "1e300"] {
        both(
            &mut c,
            &format!("{bad} as a headline median"),
            HEADLINE,
            move |f| edit(f, HEADLINE, &|t| with_cell(t, 1, bad)),
            Some("median"),
            unchanged_pages,
        );
    }
    // Text that would be HTML in a page.
    let script = "<script>alert(1)</script>";
    for stem in [HEADLINE, FIGURE] {
        let device = move |t: &str| {
            t.replacen("# gpu: NVIDIA H100 80GB HBM3", &format!("# gpu: {script}"), 1)
        };
        let damage = move |f: &Folder| edit(f, stem, &device);
        both(&mut c, "a device name that is a script", stem, damage, None, || {
            nowhere("<script>")
        });
    }
    both(
        &mut c,
        "a table cell that is an image",
        TABLE,
        |f| edit(f, TABLE, &|t| with_cell(t, 0, "\"<img src=x onerror=alert(3)>\"")),
        None,
        || nowhere("<img"),
    );
    both(
        &mut c,
        "a table cell with a pipe and a link",
        TABLE,
        |f| {
            edit(f, TABLE, &|t| with_cell(t, 0, "\"x | y ` [z](javascript:alert(4))\""))
        },
        None,
        || nowhere("[z]("),
    );
    both(
        &mut c,
        "a series and title that are scripts",
        FIGURE,
        move |f| {
            edit(f, FIGURE, &|t| {
                with_cell(
                    &t.replacen("# title: ", "# title: <script>&", 1),
                    0,
                    "\"<script>&\"",
                )
            })
        },
        None,
        || nowhere("<script>"),
    );
    for sentinel in ["cmbook-hover-group-close", "cmbook-hover-group-open:0"] {
        both(
            &mut c,
            &format!("a series named {sentinel}"),
            FIGURE,
            move |f| edit(f, FIGURE, &|t| t.replace("\"float, measured\"", sentinel)),
            None,
            unchanged_pages,
        );
    }
    // Malformed records: refused by the redraw, left to the redraw by the comparison.
    for (what, damage) in [
        (
            "a row with an extra field",
            (|t: &str| with_cell(t, 0, "a,b")) as fn(&str) -> String,
        ),
        ("a header without y_max", |t: &str| t.replacen(",y_max\n", "\n", 1)),
        ("a header with y twice", |t: &str| {
            t.replacen("series,x,y,", "series,x,y,y,", 1)
        }),
        ("metadata only", |t: &str| {
            t.lines().filter(|l| l.starts_with('#')).map(|l| format!("{l}\n")).collect()
        }),
        ("a metadata line without a colon", |t: &str| with_meta(t, "# plot line")),
        ("an unknown plot kind", |t: &str| {
            t.replacen("# plot: line", "# plot: pie", 1)
        }),
        ("a second axis of factor NaN", |t: &str| with_meta(t, "# y2_scale: NaN")),
        ("a second axis of factor inf", |t: &str| with_meta(t, "# y2_scale: inf")),
        ("a second axis of factor 0", |t: &str| with_meta(t, "# y2_scale: 0")),
    ] {
        both(
            &mut c,
            what,
            FIGURE,
            move |f| edit(f, FIGURE, &damage),
            Some(""),
            unchanged_pages,
        );
    }
    both(
        &mut c,
        "a fold beyond any number",
        TABLE,
        |f| edit(f, TABLE, &|t| with_meta(t, "# fold: 99999999999999999999999")),
        Some("fold"),
        unchanged_pages,
    );
    // A bar chart with an x reference line (the layout of atax-bandwidth, a bar chart).
    both(
        &mut c,
        "an x reference line on a bar chart",
        "atax-bandwidth",
        |f| edit(f, "atax-bandwidth", &|t| with_meta(t, "# ref_lines: x = 5: label")),
        Some("reference line"),
        unchanged_pages,
    );
    both(
        &mut c,
        "an extra column in every row",
        FIGURE,
        |f| {
            edit(f, FIGURE, &|t| {
                t.lines()
                    .map(|l| {
                        if l.starts_with('#') {
                            format!("{l}\n")
                        } else {
                            format!("{l},extra\n")
                        }
                    })
                    .collect()
            })
        },
        None,
        unchanged_pages,
    );
    for line in ["# ref_lines: y = 1e300: big", "# ref_lines: y = -1e300: small"] {
        c.push(
            Case::new(
                format!("{line} (no hang)"),
                "reproduce",
                &["--out", "{out}", "--redraw-only"],
            )
            .prepare(move |f| {
                copy_figures(&f.out);
                edit(f, FIGURE, &|t| with_meta(t, line));
            })
            .answered_or_refused()
            .after(|_| Ok(())),
        );
    }
    // A record over the size limit: refused before it is read.
    both(
        &mut c,
        "a 17 MiB figure",
        FIGURE,
        |f| {
            edit(f, FIGURE, &|t| {
                let row = "\"float, measured\",1,0.5,0.4,0.6\n";
                let mut big =
                    t.replacen(&format!("# rows: {}", rows(t)), "# rows: 600000", 1);
                big.push_str(&row.repeat(600_000));
                big
            })
        },
        Some("a record may hold"),
        unchanged_pages,
    );
    // Files under data/ that are not the book's records: left alone, and said so.
    for (what, make) in [
        (
            "a FIFO",
            (|p: &Path| {
                let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
                // SAFETY: a path this test owns.
                assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
            }) as fn(&Path),
        ),
        ("a folder", |p: &Path| std::fs::create_dir(p).unwrap()),
        ("a link to /dev/zero", |p: &Path| {
            std::os::unix::fs::symlink("/dev/zero", p).unwrap()
        }),
        ("a link to /etc/passwd", |p: &Path| {
            std::os::unix::fs::symlink("/etc/passwd", p).unwrap()
        }),
        ("a stem that is HTML", |p: &Path| {
            std::fs::write(p.with_file_name("x<img src=x>.csv"), "# gpu: x\na\n1\n")
                .unwrap()
        }),
    ] {
        for mode in ["--redraw-only", "--compare"] {
            c.push(
                Case::new(
                    format!("data/zz.csv is {what}, {mode}"),
                    "reproduce",
                    &["--out", "{out}", mode],
                )
                .prepare(move |f| {
                    copy_figures(&f.out);
                    make(&f.out.join("data/zz.csv"));
                })
                .ok(&[])
                .after(|f| nowhere("<img")(f)),
            );
        }
    }
    c.push(
        Case::new(
            "a figure that is a link out of the folder",
            "reproduce",
            &["--out", "{out}", "--redraw-only"],
        )
        .prepare(|f| {
            copy_figures(&f.out);
            std::fs::write(f.root.join("victim.txt"), "outside").unwrap();
            let link = f.out.join("ceilings-copy.svg");
            std::fs::remove_file(&link).unwrap();
            std::os::unix::fs::symlink(f.root.join("victim.txt"), link).unwrap();
        })
        .refused(&["outside its folder"])
        .after(|f| {
            match std::fs::read_to_string(f.root.join("victim.txt")).as_deref() {
                Ok("outside") => unchanged()(f),
                _ => Err("the file outside the folder was written".into()),
            }
        }),
    );
    c.push(
        Case::new(
            "data/ a link to another folder",
            "reproduce",
            &["--out", "{out}", "--redraw-only"],
        )
        .prepare(|f| {
            copy_figures(&f.root.join("elsewhere"));
            std::fs::create_dir_all(&f.out).unwrap();
            for e in std::fs::read_dir(f.root.join("elsewhere")).unwrap() {
                let e = e.unwrap();
                if e.file_name() != "data" {
                    std::fs::rename(e.path(), f.out.join(e.file_name())).unwrap();
                }
            }
            std::os::unix::fs::symlink(
                f.root.join("elsewhere/data"),
                f.out.join("data"),
            )
            .unwrap();
        })
        .ok(&["exactly what its CSV draws"]),
    );
    c
}

/// The row count a record declares.
fn rows(text: &str) -> usize {
    text.lines()
        .find_map(|l| l.strip_prefix("# rows: "))
        .and_then(|n| n.trim().parse().ok())
        .expect("the record declares its rows")
}

#[test]
fn damaged_and_hostile_records_are_refused_by_file_escaped_or_left_alone() {
    run_all(&cases(), "hostile data");
}
