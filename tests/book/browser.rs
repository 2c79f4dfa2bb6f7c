//! The built book in a real browser, offline: headless Chromium opens every page from `file://`
//! with the network disabled (every request goes to a proxy that does not exist), and a script
//! injected into a copy of each page records failed loads, console errors and uncaught
//! exceptions, and checks that every image decoded and that no table scrolls sideways in a
//! desktop window (the text column at its full width). Search must find "coalescing". A
//! screenshot of every chapter in the light and the dark theme is saved for review, into
//! `target/book-screenshots/` (or `$CMBOOK_SCREENSHOTS`).
//!
//! The explorers of chapter 3 are driven through their forms and checked against the Rust
//! models they draw (`explorers`).
//!
//! CI installs Debian's `chromium`; where build.rs finds no browser, the test is compiled as
//! ignored and the test runner says why.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{book_root, build_book, chapters};

mod explorers;

/// The browser build.rs found (the test is compiled as ignored where it found none).
fn chromium() -> PathBuf {
    let names = [
        std::env::var("CHROMIUM").ok(),
        Some("chromium".into()),
        Some("chromium-browser".into()),
        Some("google-chrome".into()),
    ];
    names
        .into_iter()
        .flatten()
        .find(|n| {
            Command::new(n).arg("--version").output().is_ok_and(|o| o.status.success())
        })
        .map(PathBuf::from)
        .expect("build.rs found a browser on PATH, but none runs")
}

/// Runs headless Chromium on `url` with the network disabled; `extra` selects the output
/// (`--dump-dom`, `--screenshot=…`). Returns stdout.
fn headless(browser: &Path, profile: &Path, url: &str, extra: &[String]) -> String {
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-sync",
            "--disable-background-networking",
            "--disable-component-update",
            "--hide-scrollbars",
        ])
        // No network: every http(s) request goes to a closed local port.
        .args(["--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--virtual-time-budget=5000")
        .args(extra)
        .arg(url)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// One run of headless Chromium: the page and the switches that select its output.
struct Job {
    url: String,
    extra: Vec<String>,
}

/// Runs every job on headless Chromium, a few at a time, and returns each one's stdout in the
/// order of `jobs`. Starting Chromium is what a run costs (about two seconds, against a few
/// tens of milliseconds for the page itself; the virtual time budget adds nothing measurable),
/// and while one instance starts another can lay out its page, so the runs overlap. Each
/// worker keeps its own profile under `profiles`: Chromium locks a profile to one process.
fn headless_each(browser: &Path, profiles: &Path, jobs: &[Job]) -> Vec<String> {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let workers = (2 * cores).min(jobs.len()).max(1);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let outputs = std::sync::Mutex::new(vec![String::new(); jobs.len()]);
    std::thread::scope(|scope| {
        for worker in 0..workers {
            let (next, outputs) = (&next, &outputs);
            scope.spawn(move || {
                let profile = profiles.join(worker.to_string());
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(job) = jobs.get(i) else { break };
                    let out = headless(browser, &profile, &job.url, &job.extra);
                    outputs.lock().unwrap()[i] = out;
                }
            });
        }
    });
    outputs.into_inner().unwrap()
}

/// The counts a passing browser test reports, written to stderr itself: the test runner
/// keeps what a passing test prints with `println!`, and CI's log should show them.
fn report_counts(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Installed at the top of `<head>`, before any of the page's own scripts: records resource
/// load failures, uncaught errors and console errors; after load, checks the images and writes
/// a JSON report into the DOM for `--dump-dom` to carry out.
const CHECKER: &str = r#"<script>
window.__cmbookProblems = [];
window.addEventListener('error', function (e) {
  var t = e.target;
  window.__cmbookProblems.push(t && t !== window ? 'failed to load ' + (t.src || t.href || t.tagName) : 'uncaught: ' + e.message);
}, true);
var __cmbookConsoleError = console.error;
console.error = function () { window.__cmbookProblems.push('console.error: ' + Array.prototype.join.call(arguments, ' ')); __cmbookConsoleError.apply(console, arguments); };
window.addEventListener('load', function () { setTimeout(function () {
  var images = document.images, broken = [];
  for (var i = 0; i < images.length; i++) { if (!(images[i].complete && images[i].naturalWidth > 0)) broken.push(images[i].src); }
  document.querySelectorAll('.table-wrapper').forEach(function (w) {
    if (w.scrollWidth > w.clientWidth + 1) {
      var th = w.querySelector('th');
      window.__cmbookProblems.push('a table scrolls sideways, ' + w.scrollWidth + ' px in a ' + w.clientWidth + '-px column: ' + (th ? th.textContent.trim() : '?') + ' ...');
    }
  });
  var report = document.createElement('pre');
  report.id = 'cmbook-report';
  report.textContent = JSON.stringify({ images: images.length, broken: broken, problems: window.__cmbookProblems });
  document.body.appendChild(report);
}, 300); });
</script>"#;

#[derive(Debug)]
struct PageReport {
    images: usize,
    broken: Vec<String>,
    problems: Vec<String>,
}

/// A screenshot of `url` in a window 1280 pixels wide and `height` high, into `png` (whether
/// it was written is checked once the job has run).
fn screenshot_job(url: String, png: &Path, height: u32) -> Job {
    Job {
        url,
        extra: vec![
            format!("--window-size=1280,{height}"),
            format!("--screenshot={}", png.display()),
        ],
    }
}

/// What every browser test starts from: the browser, the book built into a temporary folder
/// (mdBook logging no error or warning), a fresh browser profile, and the screenshot folder
/// (`$CMBOOK_SCREENSHOTS`, else `target/book-screenshots`).
struct Session {
    browser: PathBuf,
    book: tempfile::TempDir,
    profile: tempfile::TempDir,
    shots: PathBuf,
}

fn session() -> Session {
    let browser = chromium();
    let book = tempfile::tempdir().unwrap();
    let log = build_book(book.path());
    assert!(log.is_empty(), "mdbook logged errors or warnings:\n{}", log.join("\n"));
    let profile = tempfile::tempdir().unwrap();
    let shots = std::env::var("CMBOOK_SCREENSHOTS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| book_root().join("target/book-screenshots"));
    std::fs::create_dir_all(&shots).unwrap();
    Session { browser, book, profile, shots }
}

/// The text of an element as `--dump-dom` escapes it, unescaped; `&amp;` last, so an escaped
/// `&amp;lt;` becomes `&lt;` and not `<`.
fn unescape_html(text: &str) -> String {
    text.replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

fn parse_report(dom: &str) -> Option<PageReport> {
    let start =
        dom.find("<pre id=\"cmbook-report\">")? + "<pre id=\"cmbook-report\">".len();
    let json = dom[start..].split("</pre>").next().map(unescape_html)?;
    let images =
        json.split("\"images\":").nth(1)?.split(',').next()?.trim().parse().ok()?;
    let list = |key: &str| -> Vec<String> {
        let body = json
            .split(&format!("\"{key}\":["))
            .nth(1)
            .and_then(|r| r.split(']').next())
            .unwrap_or("");
        body.split("\",\"")
            .map(|s| s.trim_matches('"').to_string())
            .filter(|s| !s.is_empty())
            .collect()
    };
    Some(PageReport { images, broken: list("broken"), problems: list("problems") })
}

#[test]
#[cfg_attr(
    cmbook_no_browser,
    ignore = "needs Chromium on PATH (apt-get install chromium, or CHROMIUM=path); found none at build time"
)]
fn every_page_loads_offline_with_its_images_and_no_errors_and_search_works() {
    let Session { browser, book, profile, shots } = session();

    // Every page the book links from its table of contents, plus the front page and print view.
    let mut pages: Vec<String> =
        chapters().iter().map(|c| c.replace(".md", ".html")).collect();
    pages.extend(["index.html".to_string(), "print.html".to_string()]);
    let mut jobs = Vec::new();
    for page in &pages {
        let html = std::fs::read_to_string(book.path().join(page))
            .unwrap_or_else(|e| panic!("{page}: {e}"));
        let checked = page.replace(".html", ".cmbook-check.html");
        std::fs::write(
            book.path().join(&checked),
            html.replacen("<head>", &format!("<head>{CHECKER}"), 1),
        )
        .unwrap();
        // A desktop window: the text column at mdBook's full 750 px, beside the sidebar.
        jobs.push(Job {
            url: format!("file://{}", book.path().join(&checked).display()),
            extra: vec![
                "--window-size=1280,2000".to_string(),
                "--dump-dom".to_string(),
            ],
        });
    }

    // Search runs in the page's own JavaScript from the index shipped with the book.
    jobs.push(Job {
        url: format!(
            "file://{}?search=coalescing",
            book.path().join("index.html").display()
        ),
        extra: vec!["--dump-dom".to_string()],
    });

    // Screenshots of every chapter in the light and the dark (navy) theme, chosen the way a
    // reader's stored choice selects them. Every page of a file:// book shares one storage, so
    // both versions set the theme explicitly.
    let mut screenshots = Vec::new();
    for page in chapters().iter().map(|c| c.replace(".md", ".html")) {
        let html = std::fs::read_to_string(book.path().join(&page)).unwrap();
        for (theme, mdbook_theme) in [("light", "light"), ("dark", "navy")] {
            let file = page.replace(".html", &format!(".cmbook-{theme}.html"));
            let choose = format!("<head><script>try {{ localStorage.setItem('mdbook-theme', '{mdbook_theme}'); }} catch (e) {{}}</script>");
            std::fs::write(
                book.path().join(&file),
                html.replacen("<head>", &choose, 1),
            )
            .unwrap();
            let png =
                shots.join(format!("{}-{theme}.png", page.trim_end_matches(".html")));
            let url = format!("file://{}", book.path().join(&file).display());
            jobs.push(screenshot_job(url, &png, 2000));
            screenshots.push((png, file));
        }
    }

    let outputs = headless_each(&browser, profile.path(), &jobs);
    let (mut images, mut failures) = (0, Vec::new());
    for (page, dom) in pages.iter().zip(&outputs) {
        match parse_report(dom) {
            None => failures.push(format!(
                "{page}: the page did not finish loading (no report in the DOM)"
            )),
            Some(r) => {
                images += r.images;
                failures.extend(
                    r.broken
                        .iter()
                        .map(|b| format!("{page}: image did not decode: {b}")),
                );
                failures.extend(r.problems.iter().map(|p| format!("{page}: {p}")));
            }
        }
    }
    let search = &outputs[pages.len()];
    let hits = search
        .split("search results for")
        .next()
        .and_then(|h| h.rsplit('>').next())
        .and_then(|n| n.trim().parse::<usize>().ok())
        .unwrap_or(0);
    if hits == 0 || !search.contains("coalescing.html") {
        failures.push("search for \"coalescing\" found nothing".into());
    }
    for (png, file) in &screenshots {
        assert!(png.exists(), "no screenshot was written for {file}");
    }
    let taken = screenshots.len();

    report_counts(&format!(
        "browser: {} pages loaded offline, {images} images decoded, {} problems, search found {hits} results for \"coalescing\", {taken} screenshots in {}",
        pages.len(),
        failures.len(),
        shots.display()
    ));
    assert!(failures.is_empty(), "problems in the browser:\n{}", failures.join("\n"));
    assert!(images > 0);
}

/// Run in a page that holds every figure inline at its own size: for each SVG, the boxes the
/// browser gives its texts (with the fonts it really has) must not overlap each other or a
/// data mark (anything inside a `<g>` carrying a `<title>`), nor leave the figure. Writes
/// `{"stem": [problems…], …}` into the DOM for `--dump-dom`.
const FIGURE_CHECKER: &str = r#"<script>
window.addEventListener('load', function () { setTimeout(function () {
  var out = {};
  function hits(a, b) { return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1; }
  function segHits(r, p, q) {
    var t0 = 0, t1 = 1, dx = q[0] - p[0], dy = q[1] - p[1];
    var e = [[-dx, p[0] - r.x0], [dx, r.x1 - p[0]], [-dy, p[1] - r.y0], [dy, r.y1 - p[1]]];
    for (var i = 0; i < 4; i++) {
      var pp = e[i][0], qq = e[i][1];
      if (pp === 0) { if (qq <= 0) return false; }
      else { var k = qq / pp; if (pp < 0) t0 = Math.max(t0, k); else t1 = Math.min(t1, k); if (t0 >= t1) return false; }
    }
    return true;
  }
  document.querySelectorAll('div.figure').forEach(function (div) {
    var svg = div.querySelector('svg'), o = svg.getBoundingClientRect(), problems = [];
    function box(el, shrink) {
      var r = el.getBoundingClientRect();
      return { x0: r.left - o.left + shrink, y0: r.top - o.top + shrink, x1: r.right - o.left - shrink, y1: r.bottom - o.top - shrink };
    }
    var texts = Array.prototype.map.call(svg.querySelectorAll('text'), function (t) {
      return { s: t.textContent.trim(), b: box(t, 1) };
    });
    var marks = [];
    svg.querySelectorAll('g').forEach(function (g) {
      var title = g.querySelector('title');
      if (!title) return;
      Array.prototype.forEach.call(g.children, function (c) {
        if (c.tagName === 'polyline' || c.tagName === 'line') {
          var pts = c.tagName === 'line'
            ? [[+c.getAttribute('x1'), +c.getAttribute('y1')], [+c.getAttribute('x2'), +c.getAttribute('y2')]]
            : c.getAttribute('points').trim().split(/\s+/).map(function (p) { return p.split(',').map(Number); });
          for (var i = 1; i < pts.length; i++) marks.push({ t: title.textContent, seg: [pts[i - 1], pts[i]] });
        } else if (c.tagName !== 'title') {
          marks.push({ t: title.textContent, b: box(c, 0) });
        }
      });
    });
    var w = +svg.getAttribute('width'), h = +svg.getAttribute('height');
    texts.forEach(function (a, i) {
      if (a.b.x0 < -1 || a.b.y0 < -1 || a.b.x1 > w + 1 || a.b.y1 > h + 1) problems.push('`' + a.s + '` runs outside the figure');
      for (var j = i + 1; j < texts.length; j++) if (hits(a.b, texts[j].b)) problems.push('`' + a.s + '` overlaps `' + texts[j].s + '`');
      marks.forEach(function (m) {
        if (m.b ? hits(a.b, m.b) : segHits(a.b, m.seg[0], m.seg[1])) problems.push('`' + a.s + '` covers the mark `' + m.t + '`');
      });
    });
    out[div.id] = problems;
  });
  var report = document.createElement('pre');
  report.id = 'cmbook-figures';
  report.textContent = JSON.stringify(out);
  document.body.appendChild(report);
}, 300); });
</script>"#;

/// Two texts over each other and a text over a bar.
const SELF_TEST_FIGURE: &str = r#"<div class="figure" id="cmbook-selftest"><svg width="200" height="100" viewBox="0 0 200 100" xmlns="http://www.w3.org/2000/svg">
<text x="10" y="10" dy="0.76em" font-family="sans-serif" font-size="12.9">hello world</text>
<text x="20" y="12" dy="0.76em" font-family="sans-serif" font-size="12.9">overlap</text>
<g><title>s, a: 1</title><rect x="60" y="5" width="10" height="50" fill="blue"/></g>
</svg></div>"#;

/// The committed figures, as (stem, SVG text).
fn committed_figures() -> Vec<(String, String)> {
    let mut figures: Vec<(String, String)> =
        std::fs::read_dir(book_root().join("figures"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "svg"))
            .map(|p| {
                (
                    p.file_stem().unwrap().to_string_lossy().into_owned(),
                    std::fs::read_to_string(&p).unwrap(),
                )
            })
            .collect();
    figures.sort();
    figures
}

/// The smallest `font-size` in an SVG.
fn smallest_font(svg: &str) -> f64 {
    svg.split("font-size=\"")
        .skip(1)
        .filter_map(|r| r.split('"').next()?.parse::<f64>().ok())
        .fold(f64::INFINITY, f64::min)
}

/// Every figure in the browser: each one laid out with the fonts Chromium really has (no text
/// over another text or a data mark), its smallest text at 11 CSS px or more where its chapter
/// shows it, and a screenshot of it on its page in the light and the navy theme, scrolled into
/// view, in `target/book-screenshots/figure-<stem>-<theme>.png` for review.
#[test]
#[cfg_attr(
    cmbook_no_browser,
    ignore = "needs Chromium on PATH (apt-get install chromium, or CHROMIUM=path); found none at build time"
)]
fn every_figure_reads_in_the_browser_and_is_screenshot_on_its_page() {
    let Session { browser, book, profile, shots } = session();
    // CMBOOK_FIGURES=stem,stem limits the run to those figures (while reviewing a change).
    let only = std::env::var("CMBOOK_FIGURES").ok();
    let figures: Vec<(String, String)> = committed_figures()
        .into_iter()
        .filter(|(s, _)| only.as_ref().is_none_or(|o| o.split(',').any(|x| x == s)))
        .collect();
    assert!(!figures.is_empty());

    let mut failures = Vec::new();

    // 1. Every figure inline at its own size, checked with the browser's own text boxes.
    let mut page = format!("<!DOCTYPE html><html><head><meta charset=\"utf-8\">{FIGURE_CHECKER}</head><body style=\"margin:0\">");
    for (stem, svg) in &figures {
        page.push_str(&format!("<div class=\"figure\" id=\"{stem}\">{svg}</div>"));
    }
    // A figure with an overlap and a covered mark, so a checker that sees nothing fails.
    page.push_str(SELF_TEST_FIGURE);
    page.push_str("</body></html>");
    let all = book.path().join("cmbook-all-figures.html");
    std::fs::write(&all, page).unwrap();
    let mut jobs = vec![Job {
        url: format!("file://{}", all.display()),
        extra: vec!["--window-size=1280,2000".to_string(), "--dump-dom".to_string()],
    }];

    // 2. Each figure on its chapter's page: its displayed width, and a screenshot per theme.
    // The light run also dumps the DOM, which carries the displayed width.
    struct Shown<'a> {
        stem: &'a str,
        svg: &'a str,
        page: String,
        theme: &'static str,
        png: PathBuf,
    }
    let mut on_pages = Vec::new();
    let mut shown = std::collections::BTreeSet::new();
    for page in chapters().iter().map(|c| c.replace(".md", ".html")) {
        let html = std::fs::read_to_string(book.path().join(&page)).unwrap();
        for (stem, svg) in &figures {
            let src = format!("figures/{stem}.svg");
            if !html.contains(&format!("src=\"{src}\"")) {
                continue;
            }
            shown.insert(stem.clone());
            for (theme, mdbook_theme) in [("light", "light"), ("dark", "navy")] {
                // The reader's stored theme; the chapter's text before the figure hidden, so the
                // figure sits at the top of its page (headless screenshots ignore scrolling);
                // its displayed width written into the DOM for --dump-dom.
                let script = format!(
                    "<head><script>try {{ localStorage.setItem('mdbook-theme', '{mdbook_theme}'); }} catch (e) {{}}\
                     document.addEventListener('DOMContentLoaded', function () {{\
                     var i = document.querySelector('img[src=\"{src}\"]'); if (!i) return;\
                     var b = i; while (b.parentElement && b.parentElement.tagName !== 'MAIN') b = b.parentElement;\
                     for (var e = b.previousElementSibling; e; e = e.previousElementSibling) e.style.display = 'none';\
                     }});\
                     window.addEventListener('load', function () {{\
                     var i = document.querySelector('img[src=\"{src}\"]'); if (!i) return;\
                     var p = document.createElement('pre'); p.id = 'cmbook-width'; p.textContent = i.getBoundingClientRect().width + ' ' + i.naturalWidth; document.body.appendChild(p);\
                     }});</script>"
                );
                let file = format!("cmbook-figure-{stem}-{theme}.html");
                std::fs::write(
                    book.path().join(&file),
                    html.replacen("<head>", &script, 1),
                )
                .unwrap();
                let url = format!("file://{}", book.path().join(&file).display());
                let png = shots.join(format!("figure-{stem}-{theme}.png"));
                let mut job = screenshot_job(url, &png, 1000);
                if theme == "light" {
                    job.extra.push("--dump-dom".to_string());
                }
                jobs.push(job);
                on_pages.push(Shown { stem, svg, page: page.clone(), theme, png });
            }
        }
    }

    let outputs = headless_each(&browser, profile.path(), &jobs);
    let json = outputs[0]
        .split("<pre id=\"cmbook-figures\">")
        .nth(1)
        .and_then(|r| r.split("</pre>").next())
        .map(unescape_html)
        .unwrap_or_else(|| {
            panic!("the figure page did not report (no report in the DOM)")
        });
    let selftest = json.split("\"cmbook-selftest\":[").nth(1).unwrap_or("");
    assert!(
        selftest.contains("overlaps") && selftest.contains("covers the mark"),
        "the browser's figure checker missed the planted overlaps: {json}"
    );
    for (stem, _) in &figures {
        let key = format!("\"{stem}\":[");
        let Some(body) = json.split(&key).nth(1).and_then(|r| r.split(']').next())
        else {
            failures.push(format!("{stem}: not checked in the browser"));
            continue;
        };
        failures.extend(
            body.split("\",\"")
                .map(|p| p.trim_matches('"'))
                .filter(|p| !p.is_empty())
                .map(|p| format!("{stem}.svg in Chromium: {p}")),
        );
    }

    for (Shown { stem, svg, page, theme, png }, dom) in
        on_pages.iter().zip(&outputs[1..])
    {
        assert!(png.exists(), "no screenshot was written for {stem} ({theme})");
        if *theme != "light" {
            continue;
        }
        let widths: Vec<f64> = dom
            .split("<pre id=\"cmbook-width\">")
            .nth(1)
            .and_then(|r| r.split("</pre>").next())
            .map(|w| w.split_whitespace().filter_map(|n| n.parse().ok()).collect())
            .unwrap_or_default();
        match widths[..] {
            [shown_w, natural] if natural > 0.0 => {
                let px = smallest_font(svg) * shown_w / natural;
                if px < 11.0 {
                    failures.push(format!("{stem}.svg on {page}: shown {shown_w} px wide, its smallest text is {px:.1} px"));
                }
            }
            _ => failures.push(format!("{stem}.svg on {page}: no displayed width")),
        }
    }
    let taken = on_pages.len();
    for (stem, _) in &figures {
        if !shown.contains(stem) {
            failures.push(format!("{stem}.svg is on no chapter page"));
        }
    }
    report_counts(&format!(
        "browser: {} figures checked, {taken} figure screenshots in {}",
        figures.len(),
        shots.display()
    ));
    assert!(
        failures.is_empty(),
        "{} problems:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn the_page_checker_reports_what_it_sees() {
    let dom = r#"<body><pre id="cmbook-report">{&quot;images&quot;:3,&quot;broken&quot;:[&quot;file:///x.svg&quot;],&quot;problems&quot;:[&quot;failed to load file:///a.js&quot;,&quot;uncaught: boom&quot;]}</pre></body>"#;
    let r = parse_report(dom).unwrap();
    assert_eq!(r.images, 3);
    assert_eq!(r.broken, ["file:///x.svg"]);
    assert_eq!(r.problems, ["failed to load file:///a.js", "uncaught: boom"]);
    let clean = r#"<pre id="cmbook-report">{&quot;images&quot;:0,&quot;broken&quot;:[],&quot;problems&quot;:[]}</pre>"#;
    let r = parse_report(clean).unwrap();
    assert!(r.broken.is_empty() && r.problems.is_empty());
    assert!(parse_report("<body></body>").is_none());
}

#[test]
fn dumped_text_is_unescaped_once() {
    assert_eq!(unescape_html("&quot;a&quot; &lt;b&gt; &amp;lt;"), "\"a\" <b> &lt;");
}
