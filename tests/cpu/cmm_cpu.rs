//! CPU checks of the chained-matrix-multiplication chapter: the dynamic program against brute
//! force, the paper's worked example, the diagonal-major index, the overflow guards and the
//! traffic counts. No GPU needed.

use cmbook::cmm::dp::{
    cost_upper_bound, gpu_safe_bound, gpu_safe_bound_u32, random_dims, solve_parallel,
    solve_serial, validate_dims, DpTable,
};
use cmbook::cmm::layout::{
    diag_index, diag_index_inverse, diagonal_major_memory, diagonal_offset,
    packed_row_index, render_matrix, render_memory, row_major_memory, triangle_len,
    Layout,
};
use cmbook::cmm::paper;
use cmbook::cmm::paren::{enumerate_orders, optimal_tree, parenthesization, ParenTree};
use cmbook::cmm::traffic::{
    diagonal_traffic, dp_traffic, lanes_split_k, load_footprint, warp_step_traffic,
    Operand, WarpMapping,
};
use cmbook::cmm::CmmError;

/// Optimal cost of `dims` by trying every parenthesization.
fn brute_force_optimum(dims: &[u32]) -> u128 {
    enumerate_orders(dims).unwrap().iter().map(|order| order.cost).min().unwrap()
}

#[test]
fn dp_equals_brute_force_on_random_chains() {
    for n in 1..=10usize {
        for seed in 0..12u64 {
            // Small dimensions make ties between splits common, which exercises the tie rule.
            let max_dim = if seed % 2 == 0 { 3 } else { 60 };
            let dims = random_dims(n, max_dim, 1000 * n as u64 + seed);
            let table = solve_serial(&dims).unwrap();
            let orders = enumerate_orders(&dims).unwrap();
            let optimum = orders.iter().map(|order| order.cost).min().unwrap();
            assert_eq!(u128::from(table.optimal_cost()), optimum, "dims {dims:?}");
            // Tie rule: the recorded top split is the smallest among all optimal orders.
            if n >= 2 {
                let smallest_optimal_split = orders
                    .iter()
                    .filter(|order| order.cost == optimum)
                    .map(|order| order.tree.factors().unwrap().0.last())
                    .min()
                    .unwrap();
                assert_eq!(
                    table.split(1, n) as usize,
                    smallest_optimal_split,
                    "dims {dims:?}"
                );
            }
            // Every cell is the optimum of its own sub-chain (cheap enough up to n = 8).
            if n <= 8 {
                for i in 1..=n {
                    for j in i..=n {
                        let sub_chain = &dims[i - 1..=j];
                        assert_eq!(
                            u128::from(table.cost(i, j)),
                            brute_force_optimum(sub_chain),
                            "cell ({i}, {j}) of dims {dims:?}"
                        );
                    }
                }
            }
        }
    }
}

/// The paper's letter notation (`A(B(CD))`, outer parentheses left out) in ours.
fn from_paper_letters(order: &str) -> String {
    let numbered: String = order
        .chars()
        .map(|c| match c {
            'A'..='Z' => format!("A{}", c as u32 - 'A' as u32 + 1),
            other => other.to_string(),
        })
        .collect();
    format!("({numbered})")
}

#[test]
fn worked_example_of_the_paper() {
    let dims = paper::WORKED_EXAMPLE_DIMS;
    let table = solve_serial(&dims).unwrap();
    assert_eq!(table.optimal_cost(), 1232);
    assert_eq!(table.optimal_cost(), paper::WORKED_EXAMPLE_OPTIMUM);
    assert_eq!(parenthesization(&table), "(A1((A2A3)A4))");

    let orders = enumerate_orders(&dims).unwrap();
    let listed: Vec<(String, u128)> =
        orders.iter().map(|order| (order.tree.to_string(), order.cost)).collect();
    assert_eq!(
        listed,
        vec![
            ("(A1(A2(A3A4)))".to_string(), 3680),
            ("(A1((A2A3)A4))".to_string(), 1232),
            ("((A1A2)(A3A4))".to_string(), 8880),
            ("((A1(A2A3))A4)".to_string(), 3120),
            ("(((A1A2)A3)A4)".to_string(), 10320),
        ]
    );
    // The paper's own list: every order it names has the cost it prints, and it names them all.
    for (paper_order, paper_cost) in paper::WORKED_EXAMPLE_ORDERS {
        let tree = ParenTree::parse(&from_paper_letters(paper_order)).unwrap();
        assert_eq!(tree.cost(&dims).unwrap(), u128::from(paper_cost), "{paper_order}");
        assert!(orders.iter().any(|order| order.tree == tree), "{paper_order}");
    }
    assert_eq!(orders.len(), paper::WORKED_EXAMPLE_ORDERS.len());
}

#[test]
fn reconstructed_order_costs_the_optimum() {
    for (n, seed) in [(1usize, 1u64), (2, 2), (17, 3), (64, 4), (200, 5), (333, 6)] {
        let dims = random_dims(n, 100, seed);
        let table = solve_serial(&dims).unwrap();
        let text = parenthesization(&table);
        let tree = optimal_tree(&table);
        assert_eq!(tree.to_string(), text);
        assert_eq!(ParenTree::parse(&text).unwrap(), tree);
        assert_eq!(
            tree.cost(&dims).unwrap(),
            u128::from(table.optimal_cost()),
            "n = {n}"
        );
    }
}

#[test]
fn rayon_program_equals_serial_program() {
    for (n, max_dim, seed) in
        [(1usize, 10u32, 1u64), (2, 10, 2), (31, 3, 3), (257, 1000, 4), (400, 50, 5)]
    {
        let dims = random_dims(n, max_dim, seed);
        let serial = solve_serial(&dims).unwrap();
        let parallel = solve_parallel(&dims).unwrap();
        assert_eq!(serial.difference_from(&parallel), None, "n = {n}");
        assert_eq!(serial, parallel);
    }
    // The 128-bit fallback path (bound above u64::MAX, optimum below) agrees as well.
    let dims = [1, 2_642_246, 1, 2_642_246, 1, 7, 2_642_246, 1];
    assert!(cost_upper_bound(&dims).unwrap() > u128::from(u64::MAX));
    assert_eq!(solve_serial(&dims).unwrap(), solve_parallel(&dims).unwrap());
}

#[test]
fn contiguous_program_equals_serial_program() {
    for (n, max_dim, seed) in [
        (1usize, 10u32, 11u64),
        (2, 10, 12),
        (31, 3, 13),
        (257, 1000, 14),
        (700, 2, 15),
    ] {
        let dims = random_dims(n, max_dim, seed);
        let serial = solve_serial(&dims).unwrap();
        let contiguous = cmbook::cmm::dp::solve_contiguous(&dims).unwrap();
        assert_eq!(serial.difference_from(&contiguous), None, "n = {n}");
        assert_eq!(serial, contiguous);
    }
    // It needs plain u64 arithmetic, as the kernels do, and says so.
    assert!(cmbook::cmm::dp::solve_contiguous(&[
        1, 2_642_246, 1, 2_642_246, 1, 7, 2_642_246, 1
    ])
    .is_err());
}

#[test]
fn chains_are_validated() {
    assert_eq!(validate_dims(&[]), Err(CmmError::TooFewDims { len: 0 }));
    assert_eq!(validate_dims(&[5]), Err(CmmError::TooFewDims { len: 1 }));
    assert_eq!(validate_dims(&[5, 0, 3]), Err(CmmError::ZeroDim { index: 1 }));
    assert_eq!(validate_dims(&[5, 3]), Ok(1));
    assert_eq!(solve_serial(&[4, 0]).unwrap_err(), CmmError::ZeroDim { index: 1 });
    let message = CmmError::ZeroDim { index: 1 }.to_string();
    assert!(message.contains("dims[1]"), "{message}");
    // A single matrix costs nothing and needs no parentheses.
    let single = solve_serial(&[4, 9]).unwrap();
    assert_eq!(
        (single.optimal_cost(), parenthesization(&single)),
        (0, "A1".to_string())
    );
}

#[test]
fn overflow_is_refused_not_wrapped() {
    // 2642245^3 < 2^64 < 2642246^3: one product of three equal sides, just under and just over.
    let just_under = [2_642_245u32; 3];
    assert_eq!(solve_serial(&just_under).unwrap().optimal_cost(), 2_642_245u64.pow(3));
    assert_eq!(gpu_safe_bound(&just_under), Ok(()));

    let just_over = [2_642_246u32; 3];
    assert_eq!(
        solve_serial(&just_over).unwrap_err(),
        CmmError::CostOverflow { i: 1, j: 2 }
    );
    assert_eq!(
        solve_parallel(&just_over).unwrap_err(),
        CmmError::CostOverflow { i: 1, j: 2 }
    );
    assert!(matches!(
        gpu_safe_bound(&just_over),
        Err(CmmError::KernelBoundExceeded { bits: 64, .. })
    ));

    // An intermediate cell that overflows is refused even though the whole chain's optimum,
    // (A1(A2A3)) = 2 * big^2, would fit.
    let big = 3_000_000u32;
    let dims = [big, big, big, 1];
    assert_eq!(solve_serial(&dims).unwrap_err(), CmmError::CostOverflow { i: 1, j: 2 });

    // 32-bit kernels: 1625^3 < 2^32 < 1626^3, and the bound grows with n - 1.
    assert_eq!(gpu_safe_bound_u32(&[1625; 3]), Ok(()));
    assert!(gpu_safe_bound_u32(&[1626; 3]).is_err());
    assert!(gpu_safe_bound_u32(&[1625; 4]).is_err());
    assert_eq!(cost_upper_bound(&[1625; 4]), Ok(2 * 1625u128.pow(3)));
    assert_eq!(cost_upper_bound(&[7, 9]), Ok(0));
}

#[test]
fn tables_convert_between_layouts() {
    let dims = random_dims(37, 20, 9);
    let table = solve_serial(&dims).unwrap();
    for layout in Layout::ALL {
        let cost = table.cost_in(layout);
        let split = table.split_in(layout);
        assert_eq!(cost.len(), layout.dp_len(37));
        assert_eq!(DpTable::from_layout(layout, 37, &cost, &split).unwrap(), table);
    }
    assert_eq!(table.cost_in(Layout::RowMajor), table.cost_row_major());
    let mut wrong = table.cost_in(Layout::DiagonalMajor);
    wrong[triangle_len(37) - 1] += 1; // M[1][37], the last cell of the last diagonal
    let split = table.split_in(Layout::DiagonalMajor);
    let read_back =
        DpTable::from_layout(Layout::DiagonalMajor, 37, &wrong, &split).unwrap();
    let difference = table.difference_from(&read_back).unwrap();
    assert_eq!((difference.i, difference.j), (1, 37));
    assert_eq!(
        DpTable::from_layout(Layout::DiagonalMajor, 37, &wrong[1..], &split),
        Err(CmmError::TableSize {
            expected: triangle_len(37),
            got: triangle_len(37) - 1
        })
    );
}

#[test]
fn diagonal_major_index_is_a_bijection_for_every_n_up_to_2000() {
    for n in 1..=2000usize {
        let len = triangle_len(n);
        // Diagonal d occupies [offset(d), offset(d) + n - d), and the diagonals tile [0, len).
        assert_eq!(diagonal_offset(n, 0), 0);
        for d in 0..n {
            assert_eq!(
                diagonal_offset(n, d + 1),
                diagonal_offset(n, d) + (n - d),
                "n {n} d {d}"
            );
            // First and last cell of the diagonal, where an inverse by a rounded root would
            // slip to a neighbouring diagonal.
            let (first, last) = ((0, d), (n - 1 - d, n - 1));
            for (row, col) in [first, last] {
                let index = diag_index(n, row, col);
                assert_eq!(diag_index_inverse(n, index), (row, col), "n {n}");
            }
            assert_eq!(diag_index(n, first.0, first.1), diagonal_offset(n, d));
            assert_eq!(diag_index(n, last.0, last.1) + 1, diagonal_offset(n, d + 1));
        }
        assert_eq!(diagonal_offset(n, n), len);
    }
    // Every cell, both directions, for small n and a few large ones.
    for n in (1..=96).chain([1000, 1024, 2000]) {
        let mut seen = vec![false; triangle_len(n)];
        for row in 0..n {
            for col in row..n {
                let index = diag_index(n, row, col);
                assert!(!seen[index], "n {n}: index {index} used twice");
                seen[index] = true;
                assert_eq!(diag_index_inverse(n, index), (row, col));
            }
        }
        assert!(seen.iter().all(|&used| used), "n {n}: an index is never used");
    }
}

#[test]
fn stepping_the_load_indices_matches_recomputing_them() {
    // The kernels walk M[i][k] and M[k+1][j] along the k loop by adding left_step and
    // right_step; every intermediate index must equal dp_index.
    for n in 1..=60usize {
        for layout in Layout::ALL {
            for i in 1..=n {
                for j in i + 1..=n {
                    let mut left = layout.dp_index(n, i, i) as isize;
                    let mut right = layout.dp_index(n, i + 1, j) as isize;
                    for k in i..j {
                        assert_eq!(
                            left,
                            layout.dp_index(n, i, k) as isize,
                            "{layout:?} n {n}"
                        );
                        assert_eq!(
                            right,
                            layout.dp_index(n, k + 1, j) as isize,
                            "{layout:?} n {n}"
                        );
                        left += layout.left_step(n, i, k);
                        right += layout.right_step(n, j, k);
                    }
                }
            }
        }
    }
}

#[test]
fn paper_figures_come_out_of_the_index_functions() {
    assert_eq!(
        render_matrix(6),
        "A B C D E F\n. G H I J K\n. . L M N O\n. . . P Q R\n. . . . S T\n. . . . . U\n"
    );
    let letters = |slots: Vec<Option<String>>| -> String {
        slots.into_iter().map(|slot| slot.unwrap_or_else(|| "_".into())).collect()
    };
    // Figure 3: rows one after another, the cells below the diagonal left unused.
    assert_eq!(letters(row_major_memory(6)), "ABCDEF_GHIJK__LMNO___PQR____ST_____U");
    // Figure 4: diagonals one after another.
    assert_eq!(letters(diagonal_major_memory(6)), "AGLPSUBHMQTCINRDJOEKF");
    assert_eq!(packed_row_index(6, 5, 5), 20);
    let figure_4 = render_memory(&diagonal_major_memory(6), 18);
    assert!(figure_4.starts_with("addr  0  1  2"), "{figure_4}");
    assert!(figure_4.contains("cell  E  K  F"), "{figure_4}");
}

#[test]
fn traffic_of_a_hand_checked_warp() {
    // n = 8, diagonal 1, warp 0, first step: lanes i = 1..7 load M[i][i] and M[i+1][i+1].
    // Row-major u64: M[i][i] sits at 8 (9 i + i) = 80 i bytes: sectors 2,5,7,10,12,15,17 (7),
    // lines 0,1,1,2,3,3,4 (5). M[i+1][i+1] at 80 (i+1): sectors 5..20 (7), lines 1..5 (5).
    let row_major = warp_step_traffic(Layout::RowMajor, 8, 8, 1, 0, 0);
    assert_eq!(row_major.lanes, 7);
    assert_eq!((row_major.left_sectors, row_major.left_lines), (7, 5));
    assert_eq!((row_major.right_sectors, row_major.right_lines), (7, 5));
    // Diagonal-major u64: M[i][i] is element i-1 (bytes 0..56, sectors 0-1), M[i+1][i+1] is
    // element i (bytes 8..64, sectors 0-1), all in line 0.
    let diagonal = warp_step_traffic(Layout::DiagonalMajor, 8, 8, 1, 0, 0);
    assert_eq!((diagonal.left_sectors, diagonal.left_lines), (2, 1));
    assert_eq!((diagonal.right_sectors, diagonal.right_lines), (2, 1));
    // Fresh sectors, n = 8, diagonal 2, lanes i = 1..6. Row-major step 0 touches sectors
    // {2,5,7,10,12,15} (M[i][i], bytes 80 i) and {5,7,10,12,15,17} (M[i+1][i+2], 80 i + 88);
    // step 1 touches {2,5,7,10,12,15} (80 i + 8) and {7,10,12,15,17,20} (80 i + 160): only
    // sector 20 is new. Diagonal-major steps 0 and 1 both touch sectors 0-3 (n is tiny).
    assert_eq!(warp_step_traffic(Layout::RowMajor, 8, 8, 2, 0, 0).fresh_sectors, 7);
    assert_eq!(warp_step_traffic(Layout::RowMajor, 8, 8, 2, 0, 1).fresh_sectors, 1);
    assert_eq!(
        warp_step_traffic(Layout::DiagonalMajor, 8, 8, 2, 0, 0).fresh_sectors,
        4
    );
    assert_eq!(
        warp_step_traffic(Layout::DiagonalMajor, 8, 8, 2, 0, 1).fresh_sectors,
        0
    );
    // u32 halves the span: one sector each.
    let diagonal_u32 = warp_step_traffic(Layout::DiagonalMajor, 4, 8, 1, 0, 0);
    assert_eq!((diagonal_u32.left_sectors, diagonal_u32.right_sectors), (1, 1));

    // A full warp, n = 64: 32 consecutive u64 are 8 sectors when aligned (left: elements 0..31)
    // and 9 when shifted by one element (right: elements 1..32); row-major strides 66 * 8 bytes.
    let full = warp_step_traffic(Layout::DiagonalMajor, 8, 64, 1, 0, 0);
    assert_eq!((full.lanes, full.left_sectors, full.right_sectors), (32, 8, 9));
    assert_eq!((full.left_lines, full.right_lines), (2, 3));
    let full_row = warp_step_traffic(Layout::RowMajor, 8, 64, 1, 0, 0);
    assert_eq!((full_row.left_sectors, full_row.right_sectors), (32, 32));
    assert_eq!((full_row.left_lines, full_row.right_lines), (32, 32));

    // Split-k mapping, cell (1, 4) of n = 8, lanes k = 1, 2, 3.
    // Row-major: M[1][k] at bytes 80, 88, 96 (sectors 2, 2, 3); M[k+1][4] at 176, 248, 320.
    // Diagonal-major: M[1][k] at elements 0, 8, 15 (bytes 0, 64, 120: sectors 0, 2, 3);
    // M[k+1][4] at elements 16, 10, 3 (bytes 128, 80, 24: sectors 4, 2, 0).
    let lanes = lanes_split_k(1, 4, 0);
    let sectors =
        |layout, operand| load_footprint(layout, 8, 8, &lanes, operand).sectors;
    assert_eq!(sectors(Layout::RowMajor, Operand::Left), 2);
    assert_eq!(sectors(Layout::RowMajor, Operand::Right), 3);
    assert_eq!(sectors(Layout::DiagonalMajor, Operand::Left), 3);
    assert_eq!(sectors(Layout::DiagonalMajor, Operand::Right), 3);
}

#[test]
fn traffic_sums_add_up() {
    let n = 100;
    for mapping in [WarpMapping::CellPerThread, WarpMapping::SplitKPerCell] {
        for layout in Layout::ALL {
            for elem_bytes in [4, 8] {
                let whole = dp_traffic(mapping, layout, elem_bytes, n);
                let by_diagonal: Vec<_> = (1..n)
                    .map(|d| diagonal_traffic(mapping, layout, elem_bytes, n, d))
                    .collect();
                assert_eq!(
                    whole.sectors,
                    by_diagonal.iter().map(|t| t.sectors).sum::<u64>()
                );
                assert_eq!(
                    whole.lines,
                    by_diagonal.iter().map(|t| t.lines).sum::<u64>()
                );
                // Every (cell, k) pair loads two elements, whatever the mapping:
                // sum over d of (n - d) d = n (n - 1) (n + 1) / 6 pairs.
                let pairs = (n * (n - 1) * (n + 1) / 6) as u64;
                assert_eq!(whole.bytes_requested, 2 * pairs * u64::from(elem_bytes));
                assert!(whole.sectors >= whole.min_sectors);
                assert!(whole.fresh_sectors <= whole.sectors);
                assert_eq!(
                    whole.fresh_sectors,
                    by_diagonal.iter().map(|t| t.fresh_sectors).sum::<u64>()
                );
            }
        }
    }
    // One thread per cell: the diagonal layout moves far fewer sectors than row-major.
    let row = dp_traffic(WarpMapping::CellPerThread, Layout::RowMajor, 8, n);
    let diagonal = dp_traffic(WarpMapping::CellPerThread, Layout::DiagonalMajor, 8, n);
    assert!(diagonal.sectors * 3 < row.sectors, "{diagonal:?} vs {row:?}");
}
