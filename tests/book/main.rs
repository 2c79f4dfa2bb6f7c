//! The book as mdBook builds it and a reader sees it, in one test binary: its links, pages and
//! includes (`book`, `pages`), the built book in a real browser (`browser`), and its Rust
//! snippets compiled by skeptic (`skeptic`).

#[path = "../common/mod.rs"]
mod common;

mod book;
mod browser;
mod pages;
mod skeptic;
