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

mod made_up {
    //! Every figure and table of the chapter drawn from made-up results on four GPUs, on two
    //! and on one: each passes the audit, and the runs with several GPUs write every stem the
    //! chapter declares (one GPU writes what one GPU measures).

    use std::path::Path;

    use cmbook::harness::ceiling::CopyResult;
    use cmbook::harness::{plot, record, run, Stats};
    use cmbook::multi_gpu::atax::{gpu_counts, AtaxPoint};
    use cmbook::multi_gpu::cmm::CmmPoint;
    use cmbook::multi_gpu::collectives::{self, CollectivePoint};
    use cmbook::multi_gpu::devices::PairInfo;
    use cmbook::multi_gpu::measure::{Device, Results};
    use cmbook::multi_gpu::nccl::Collective;
    use cmbook::multi_gpu::peer::{
        copy_sizes, sweep_blocks, ChaseTarget, InFlightPoint, Latency, PairCopy,
        PairPoint, Path as CopyPath, PeerPoint,
    };
    use cmbook::multi_gpu::{internode, torch, CHAPTER};

    /// Times (ms) spread around `ms`, so that every point has an error bar.
    fn stats(ms: f64) -> Stats {
        Stats::from_samples(&[ms, ms * 1.04, ms * 0.98]).unwrap()
    }

    /// Milliseconds to move `bytes` at `gbps` after `us` microseconds of fixed cost.
    fn ms_at(bytes: usize, gbps: f64, us: f64) -> f64 {
        us * 1e-3 + bytes as f64 / (gbps * 1e6)
    }

    /// PyTorch's CSV for `ranks` GPUs, up to `max` bytes, a little slower than ours.
    fn torch_csv(ranks: usize, max: usize) -> torch::TorchReference {
        let mut text = format!(
            "# gpu: {ranks} × NVIDIA H100 80GB HBM3\n# torch: 2.9.0\n# nccl: 2.27.5\n\
             # method: made up\n\
             collective,ranks,bytes,time_us,time_us_min,time_us_max,algbw_gbps,busbw_gbps\n"
        );
        for b in collectives::sizes(max) {
            let us = ms_at(b, 300.0, 25.0) * 1e3;
            let algbw = b as f64 / us / 1e3;
            let bus = algbw * Collective::AllReduce.bus_factor(ranks);
            text.push_str(&format!(
                "all-reduce,{ranks},{b},{us},{},{},{algbw},{bus}\n",
                us * 0.97,
                us * 1.05
            ));
        }
        torch::parse(&text).unwrap()
    }

    pub(super) fn results(gpus: usize) -> Results {
        let peer_max = 64 << 20;
        let devices = (0..gpus)
            .map(|i| Device {
                ordinal: i,
                name: "NVIDIA H100 80GB HBM3".into(),
                pci_bus_id: format!("00000000:{:02X}:00.0", 0x18 + 0x10 * i),
                memory_gib: 79.2,
                sms: 132,
                l2_mib: 50,
            })
            .collect();
        let mut pairs = Vec::new();
        for from in 0..gpus {
            for to in (0..gpus).filter(|&t| t != from) {
                pairs.push(PairInfo {
                    from,
                    to,
                    access: true,
                    native_atomics: true,
                    performance_rank: 0,
                    link: Some("NV18".into()),
                });
            }
        }
        let mut peer = Vec::new();
        let mut in_flight = Vec::new();
        let mut pair_copies = Vec::new();
        if gpus >= 2 {
            for bytes in copy_sizes(peer_max) {
                for path in CopyPath::ALL {
                    let gbps = match path {
                        CopyPath::Local => 1400.0,
                        CopyPath::HostStaged | CopyPath::HostStagedPipelined => 40.0,
                        _ => 380.0,
                    };
                    let time = stats(ms_at(path.directions() * bytes, gbps, 8.0));
                    peer.push(PeerPoint { path, bytes, time });
                }
            }
            for path in [CopyPath::KernelPull, CopyPath::KernelPush] {
                for blocks in sweep_blocks(1056) {
                    let gbps = (blocks as f64 * 12.0).min(370.0);
                    let time = stats(ms_at(peer_max, gbps, 0.0));
                    in_flight.push(InFlightPoint {
                        path,
                        blocks,
                        bytes: peer_max,
                        time,
                    });
                }
            }
            for copy in PairCopy::all(gpus) {
                let time = stats(ms_at(copy.copies().len() * peer_max, 390.0, 8.0));
                pair_copies.push(PairPoint { copy, bytes: peer_max, time });
            }
        }
        let mut latency = vec![
            Latency {
                target: ChaseTarget::Own,
                footprint: 256 << 20,
                steps: 20_000,
                time: stats(20_000.0 * 640e-6),
            },
            Latency {
                target: ChaseTarget::Host,
                footprint: 256 << 20,
                steps: 20_000,
                time: stats(20_000.0 * 1300e-6),
            },
        ];
        if gpus >= 2 {
            latency.insert(
                1,
                Latency {
                    target: ChaseTarget::Peer,
                    footprint: 256 << 20,
                    steps: 20_000,
                    time: stats(20_000.0 * 1000e-6),
                },
            );
        }
        let collective_max = 1 << 30;
        let ranks: Vec<usize> =
            gpu_counts(gpus).into_iter().filter(|&k| k >= 2).collect();
        let mut collective_points = Vec::new();
        for &k in &ranks {
            for c in Collective::ALL {
                for bytes in collectives::sizes(collective_max) {
                    let gbps = 340.0 / c.bus_factor(k).max(0.5);
                    let time = stats(ms_at(bytes, gbps, 10.0 + 2.0 * k as f64));
                    collective_points.push(CollectivePoint {
                        collective: c,
                        ranks: k,
                        bytes,
                        time,
                    });
                }
            }
        }
        let torch = ranks.iter().map(|&k| torch_csv(k, collective_max)).collect();
        let mut atax = Vec::new();
        for g in gpu_counts(gpus) {
            for rows in [1024, 4096, 16384] {
                let one = rows as f64 * 16384.0 * 4.0 / 3.2e9;
                let kernels = stats(one / g as f64 + 0.02);
                let reduce = (g > 1).then(|| stats(0.013));
                atax.push(AtaxPoint {
                    gpus: g,
                    rows,
                    cols: 16384,
                    kernels: kernels.clone(),
                    with_all_reduce: reduce
                        .as_ref()
                        .map(|_| stats(one / g as f64 + 0.035)),
                    all_reduce: reduce,
                    end_to_end: stats(20.0 * one / g as f64 + 0.1),
                });
            }
        }
        let cmm = gpu_counts(gpus)
            .into_iter()
            .map(|g| CmmPoint {
                gpus: g,
                chains: 256,
                n: 1024,
                most_per_gpu: 256 / g,
                config: "u32 costs + DPX, u32 sweep in quadrants".into(),
                time: stats(27.0 / g as f64 + 0.9),
            })
            .collect();
        Results {
            devices,
            nccl_version: "2.27.5".into(),
            pairs,
            local_copy: CopyResult {
                bytes: peer_max,
                kernel: stats(ms_at(2 * peer_max, 2900.0, 0.0)),
                memcpy: stats(ms_at(2 * peer_max, 2800.0, 0.0)),
                read: stats(ms_at(peer_max, 3000.0, 0.0)),
                write: stats(ms_at(peer_max, 3000.0, 0.0)),
            },
            peer,
            in_flight,
            pair_copies,
            chase_gpu: if gpus >= 2 { 1 } else { 0 },
            latency,
            collectives: collective_points,
            torch,
            atax,
            cmm,
            skipped: Vec::new(),
        }
    }

    fn written(dir: &Path) -> Vec<String> {
        let mut stems: Vec<String> = std::fs::read_dir(dir.join("data"))
            .unwrap()
            .map(|e| {
                e.unwrap().path().file_stem().unwrap().to_string_lossy().into_owned()
            })
            .collect();
        stems.sort();
        stems
    }

    #[test]
    fn every_figure_and_table_is_drawn_from_made_up_results_on_four_two_and_one_gpu() {
        for gpus in [4, 2, 1] {
            let dir = tempfile::tempdir().unwrap();
            let results = results(gpus);
            {
                let run = run::offline(&CHAPTER, dir.path()).unwrap();
                cmbook::multi_gpu::report(&run, &results).unwrap();
            }
            let problems = plot::audit_figures(dir.path()).unwrap();
            assert!(problems.is_empty(), "{gpus} GPUs: {}", problems.join("\n"));
            let stems = written(dir.path());
            if gpus >= 2 {
                let mut declared: Vec<String> =
                    CHAPTER.writes.iter().map(|s| s.to_string()).collect();
                declared.sort();
                assert_eq!(stems, declared, "{gpus} GPUs write every declared stem");
            } else {
                for stem in
                    ["multi_gpu-devices", "multi_gpu-latency", "multi_gpu-atax-table"]
                {
                    assert!(stems.contains(&stem.to_string()), "one GPU: {stem}");
                }
                assert!(!stems
                    .iter()
                    .any(|s| s.contains("pairs") || s.contains("torch")));
            }
            for stem in &stems {
                let svg = dir.path().join(format!("{stem}.svg"));
                if svg.exists() {
                    let text = std::fs::read_to_string(&svg).unwrap();
                    let problems = plot::layout_problems(&text);
                    assert!(problems.is_empty(), "{stem}: {}", problems.join("\n"));
                }
            }
        }
    }

    #[test]
    fn the_scaling_tables_carry_every_gpu_count() {
        let dir = tempfile::tempdir().unwrap();
        {
            let run = run::offline(&CHAPTER, dir.path()).unwrap();
            cmbook::multi_gpu::report(&run, &results(4)).unwrap();
        }
        let read = |stem: &str| {
            record::read_csv(&dir.path().join(format!("data/{stem}.csv"))).unwrap()
        };
        let column = |stem: &str, name: &str| -> Vec<String> {
            let rec = read(stem);
            let c = rec.column(name).unwrap();
            rec.rows.iter().map(|r| r[c].clone()).collect()
        };
        let mut counts = column("multi_gpu-collectives-table", "GPUs");
        counts.dedup();
        assert_eq!(counts, ["2", "4"]);
        assert_eq!(column("multi_gpu-cmm", "GPUs"), ["1", "2", "4"]);
        assert_eq!(column("multi_gpu-pairs", "from").len(), 12);
        assert_eq!(column("multi_gpu-fan-out", "from"), ["0", "1", "2", "3"]);
        let mut torch = column("multi_gpu-torch", "GPUs");
        torch.dedup();
        assert_eq!(torch, ["2", "4"]);
        let scaling = read("multi_gpu-scaling");
        let x = scaling.column("x").unwrap();
        let mut xs: Vec<&str> = scaling.rows.iter().map(|r| r[x].as_str()).collect();
        xs.sort();
        xs.dedup();
        assert_eq!(xs, ["1", "2", "4"]);
        // The model names itself and its assumption, and predicts a slower second node.
        let model = read("multi_gpu-two-nodes");
        assert!(model.meta.get("computed").unwrap().contains("alpha–beta model"));
        let ratio = model.column("two nodes / one").unwrap();
        assert!(model.rows.iter().all(|r| r[ratio].parse::<f64>().unwrap() > 1.0));
        let links =
            std::fs::read_to_string(dir.path().join("multi_gpu-two-nodes-links.md"))
                .unwrap();
        assert!(links.contains(internode::IB_NAME) && links.contains("Computed by"));
        let diagram = read("multi_gpu-topology-diagram");
        assert_eq!(diagram.meta.get("plot"), Some("diagram"));
        let label = diagram.column("label").unwrap();
        assert_eq!(diagram.rows.iter().filter(|r| r[label] == "NV18").count(), 6);
    }
}
