// One cell of the chained-matrix-multiplication table: M[i][j], the fewest multiplications
// for A_i .. A_j, and its split k, from cells of lower diagonals, in each of the table's two
// layouts. The kernel files differ in how their threads take the cells (cmm_rowmajor.cu and
// cmm_diagonal.cu: one block walks every diagonal; cmm_cell_per_thread.cu: one launch per
// diagonal) and share the cell. Preconditions: the including file's (int indices that do
// not wrap, costs that fit `Cost`, checked by the host).

typedef unsigned long long u64;
typedef unsigned int u32;

// First element of diagonal d: diagonals 0 .. d-1 hold n + (n - 1) + ... + (n - d + 1) cells.
__device__ __forceinline__ int diagonal_offset(int n, int d)
{
    return d * (2 * n + 1 - d) / 2;
}

// Element holding M[i][j], 1 <= i <= j <= n, in the diagonal-major layout: position i - 1
// on diagonal j - i.
__device__ __forceinline__ int diag_index(int n, int i, int j)
{
    return diagonal_offset(n, j - i) + (i - 1);
}

// ANCHOR: rowmajor_cell
// Cell (i, j), i < j, of the table stored by rows: M[i][j] at (n + 1) * i + j.
template <typename Cost>
__device__ __forceinline__ void rowmajor_cell(const u32* __restrict__ dims_global,
                                              Cost* cost_global, u32* split_global,
                                              int n, int i, int j)
{
    const int row = n + 1;  // row stride of the (n + 1) x (n + 1) table
    const Cost p_before_i = dims_global[i - 1];  // rows of A_i
    const Cost p_j = dims_global[j];             // columns of A_j
    Cost best_cost = ~Cost(0);
    int best_k = i;
    for (int k = i; k < j; ++k) {
        // Neighbouring threads (i, i + 1) read addresses row + 1 elements
        // apart, so (for all but the smallest n) each lane of a warp touches
        // its own sector. Some of that is reuse L1 can catch: a lane's M[i][k]
        // walks along its row, and its M[k+1][j] at step k is next to what lane
        // i + 1 read at step k - 1.
        const Cost candidate = cost_global[row * i + k]          // M[i][k]
                             + cost_global[row * (k + 1) + j]    // M[k+1][j]
                             + p_before_i * dims_global[k] * p_j;
        // Strictly smaller: on a tie the smaller k, met first, stays
        // (as on the CPU).
        if (candidate < best_cost) {
            best_cost = candidate;
            best_k = k;
        }
    }
    cost_global[row * i + j] = best_cost;
    split_global[row * i + j] = best_k;
}
// ANCHOR_END: rowmajor_cell

// ANCHOR: diagonal_cell
// Cell (i, j), i < j, of the table stored diagonal by diagonal: M[i][j] at
// diag_index(n, i, j).
template <typename Cost>
__device__ __forceinline__ void diagonal_cell(const u32* __restrict__ dims_global,
                                              Cost* cost_global, u32* split_global,
                                              int n, int i, int j)
{
    const Cost p_before_i = dims_global[i - 1];  // rows of A_i
    const Cost p_j = dims_global[j];             // columns of A_j
    Cost best_cost = ~Cost(0);
    int best_k = i;
    // For neighbouring threads (i, i + 1) both loads below are neighbouring
    // elements: M[i][k] is position i - 1 of diagonal k - i, M[k+1][j] is
    // position k of diagonal j - k - 1, and both diagonals are the same for
    // every thread at a step.
    // &M[i][k] for k = i
    const Cost* left = cost_global + diag_index(n, i, i);
    // &M[k+1][j] for k = i
    const Cost* right = cost_global + diag_index(n, i + 1, j);
    for (int k = i; k < j; ++k) {
        // TUTORIAL: left == &cost_global[diag_index(n, i, k)],
        //           right == &cost_global[diag_index(n, k + 1, j)].
        const Cost candidate = *left     // M[i][k]
                             + *right    // M[k+1][j]
                             + p_before_i * dims_global[k] * p_j;
        // Strictly smaller: on a tie the smaller k, met first, stays
        // (as on the CPU).
        if (candidate < best_cost) {
            best_cost = candidate;
            best_k = k;
        }
        // Step both pointers to k + 1 (cmm::layout::Layout::{left_step,
        // right_step}): M[i][k+1] is at the same position one diagonal up,
        // n - (k - i) cells on;
        left += n - (k - i);
        // M[k+2][j] is one diagonal down (which starts n - f + 1 cells earlier,
        // f = j - k - 1) and one position further along: f - n in all.
        right += (j - k - 1) - n;
    }
    cost_global[diag_index(n, i, j)] = best_cost;
    split_global[diag_index(n, i, j)] = best_k;
}
// ANCHOR_END: diagonal_cell
