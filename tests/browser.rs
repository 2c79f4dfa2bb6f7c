//! The built book in a real browser, offline: headless Chromium opens every page from `file://`
//! with the network disabled (every request goes to a proxy that does not exist), and a script
//! injected into a copy of each page records failed loads, console errors and uncaught
//! exceptions, and checks that every image decoded. Search must find "coalescing". A
//! screenshot of every chapter in the light and the dark theme is saved for review, into
//! `target/book-screenshots/` (or `$CMBOOK_SCREENSHOTS`).
//!
//! CI installs Debian's `chromium`; where build.rs finds no browser, the test is compiled as
//! ignored and the test runner says why.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{build_book, chapters, ROOT};

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

fn parse_report(dom: &str) -> Option<PageReport> {
    let start =
        dom.find("<pre id=\"cmbook-report\">")? + "<pre id=\"cmbook-report\">".len();
    let json = dom[start..]
        .split("</pre>")
        .next()?
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">");
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
    let browser = chromium();
    let book = tempfile::tempdir().unwrap();
    let log = build_book(book.path());
    assert!(log.is_empty(), "mdbook logged errors or warnings:\n{}", log.join("\n"));
    let profile = tempfile::tempdir().unwrap();
    let shots = std::env::var("CMBOOK_SCREENSHOTS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| Path::new(ROOT).join("target/book-screenshots"));
    std::fs::create_dir_all(&shots).unwrap();

    // Every page the book links from its table of contents, plus the front page and print view.
    let mut pages: Vec<String> =
        chapters().iter().map(|c| c.replace(".md", ".html")).collect();
    pages.extend(["index.html".to_string(), "print.html".to_string()]);
    let (mut images, mut failures) = (0, Vec::new());
    for page in &pages {
        let html = std::fs::read_to_string(book.path().join(page))
            .unwrap_or_else(|e| panic!("{page}: {e}"));
        let checked = page.replace(".html", ".cmbook-check.html");
        std::fs::write(
            book.path().join(&checked),
            html.replacen("<head>", &format!("<head>{CHECKER}"), 1),
        )
        .unwrap();
        let url = format!("file://{}", book.path().join(&checked).display());
        let dom = headless(&browser, profile.path(), &url, &["--dump-dom".to_string()]);
        match parse_report(&dom) {
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

    // Search runs in the page's own JavaScript from the index shipped with the book.
    let search = headless(
        &browser,
        profile.path(),
        &format!(
            "file://{}?search=coalescing",
            book.path().join("index.html").display()
        ),
        &["--dump-dom".to_string()],
    );
    let hits = search
        .split("search results for")
        .next()
        .and_then(|h| h.rsplit('>').next())
        .and_then(|n| n.trim().parse::<usize>().ok())
        .unwrap_or(0);
    if hits == 0 || !search.contains("coalescing.html") {
        failures.push("search for \"coalescing\" found nothing".into());
    }

    // Screenshots of every chapter in the light and the dark (navy) theme, chosen the way a
    // reader's stored choice selects them. Every page of a file:// book shares one storage, so
    // both versions set the theme explicitly.
    let mut taken = 0;
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
            headless(
                &browser,
                profile.path(),
                &url,
                &[
                    "--window-size=1280,2000".to_string(),
                    format!("--screenshot={}", png.display()),
                ],
            );
            assert!(png.exists(), "no screenshot was written for {file}");
            taken += 1;
        }
    }

    println!(
        "browser: {} pages loaded offline, {images} images decoded, {} problems, search found {hits} results for \"coalescing\", {taken} screenshots in {}",
        pages.len(),
        failures.len(),
        shots.display()
    );
    assert!(failures.is_empty(), "problems in the browser:\n{}", failures.join("\n"));
    assert!(images > 0);
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
