//! The chapter "Memory across GPUs" without a GPU: NCCL refuses to start with NVLink multicast
//! on, the PyTorch reference's CSV is what the chapter reads, and the split of ATAX's rows adds
//! up to the whole.

use cmbook::atax::reference;
use cmbook::harness::inputs;
use cmbook::multi_gpu::{atax, nccl, torch};

#[test]
fn nvlink_multicast_counts_as_off_only_when_set_to_zero() {
    assert!(nccl::multicast_off(Some("0")));
    for v in [None, Some("1"), Some(""), Some("false"), Some(" 0")] {
        assert!(!nccl::multicast_off(v), "{v:?}");
    }
    if !nccl::nvls_off() {
        // This process has not set it: NCCL is refused before it starts.
        let err = nccl::Comms::new(&[]).err().expect("refused").to_string();
        assert!(err.contains(nccl::NVLS_VARIABLE), "{err}");
    }
}

#[test]
fn the_torch_scripts_header_is_the_one_the_chapter_reads() {
    let script = include_str!("../../src/multi_gpu/torch_reference.py");
    let header = script
        .lines()
        .find_map(|l| l.trim().strip_prefix("f.write(\"collective,"))
        .map(|rest| format!("collective,{}", rest.split("\\n").next().unwrap()))
        .expect("the script writes a CSV header");
    let csv = format!("# torch: x\n# nccl: 2.28.9\n{header}\nall-reduce,2,1024,20.5,20.1,22.0,0.05,0.05\n");
    let t = torch::parse(&csv).unwrap_or_else(|e| panic!("{e:#}: {csv}"));
    assert_eq!(t.points[0].bytes, 1024);
    for key in
        ["NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS"]
    {
        assert!(script.contains(key), "the script keeps {key} set");
    }
}

#[test]
fn partial_ys_of_a_split_add_up_to_the_whole_at_odd_sizes() {
    for (m, n, parts) in [(1003, 17, 2), (5, 1003, 3), (64, 64, 8)] {
        let a = inputs::random_f32(m * n, m as u64);
        let x = inputs::random_f32(n, n as u64);
        let whole = reference::atax(&a, &x, m, n);
        let tol = whole.tolerance(f32::EPSILON as f64, m, n);
        let mut total = vec![0f64; n];
        for r in atax::split_rows(m, parts) {
            let part = reference::atax(&a[r.start * n..r.end * n], &x, r.len(), n);
            total.iter_mut().zip(&part.y).for_each(|(t, p)| *t += p);
        }
        for (t, w) in total.iter().zip(&whole.y) {
            assert!(tol.accepts(*t, *w), "{m}×{n} over {parts}: {t} vs {w}");
        }
    }
}
