//! Every kernel file compiles with NVRTC for compute_90 (the H100), on a machine with no GPU.
//!
//! NVRTC is a plain library: CI installs the pinned 13.0 wheel. Where build.rs finds no
//! libnvrtc.so.13, these tests are compiled as ignored and the test runner says why.

use cmbook::harness::kernels;

#[test]
#[cfg_attr(
    cmbook_no_nvrtc,
    ignore = "needs libnvrtc.so.13 on the loader path (see README)"
)]
fn every_kernel_compiles_for_compute_90() {
    assert!(!kernels::ALL.is_empty());
    // Where the sources are at hand (not on a GPU machine that only got the binary), the
    // registry must hold every kernels/*.cu.
    if let Ok(dir) = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/kernels"))
    {
        let on_disk = dir
            .filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".cu"))
            })
            .count();
        assert_eq!(
            on_disk,
            kernels::ALL.len(),
            "the registry must hold every kernels/*.cu"
        );
    }
    let mut failures = Vec::new();
    for k in kernels::ALL {
        match kernels::compile(k.file, "compute_90") {
            Ok(ptx) => {
                let text = ptx.ptx;
                assert!(
                    text.contains(".target sm_90"),
                    "{}: PTX is not for sm_90",
                    k.file
                );
                eprintln!("compiled kernels/{} ({} bytes of PTX)", k.file, text.len());
            }
            Err(e) => failures.push(e.to_string()),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
#[cfg_attr(
    cmbook_no_nvrtc,
    ignore = "needs libnvrtc.so.13 on the loader path (see README)"
)]
fn a_broken_kernel_names_its_file_and_carries_the_log() {
    let broken =
        "extern \"C\" __global__ void oops(float* x) { x[0] = undefined_name; }";
    let err = kernels::compile_source("broken.cu", broken, "compute_90").unwrap_err();
    let text = err.to_string();
    assert!(text.contains("kernels/broken.cu"), "{text}");
    assert!(
        text.contains("undefined_name"),
        "NVRTC's log should name the error: {text}"
    );
}

#[test]
fn an_unknown_kernel_file_is_an_error_not_a_panic() {
    let err = kernels::compile("no_such_file.cu", "compute_90").unwrap_err();
    assert!(err.to_string().contains("no_such_file.cu"));
}
