"""NCCL's all-reduce through PyTorch (torch.distributed), timed the way nccl-tests times it: the
reference the chapter "Memory across GPUs" compares its own NCCL calls (through cudarc) with.

One process per GPU, NVLink multicast off in NCCL, PyTorch and NVSHMEM:

    NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 \
        torchrun --nproc_per_node=2 src/multi_gpu/torch_reference.py --out torch.csv
    cargo run --release --example multi_gpu -- --torch-reference torch.csv

For every size from 8 bytes to --max-mib MiB (doubling), each rank all-reduces (sum) a buffer of
random floats: first once, checked against the sum of every rank's inputs (each rank draws the
others' inputs from the same seeds), then `--iters` times back to back between two host clock
reads with the GPU synchronised, `--reps` times. The time of one all-reduce is the slowest
rank's average over the iterations; the CSV holds the median, fastest and slowest repetition,
the algorithm bandwidth (size / time) and the bus bandwidth (algorithm bandwidth x 2(n-1)/n).
"""

import argparse
import datetime
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist

MULTICAST_OFF = {
    "NCCL_NVLS_ENABLE": "0",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
    "NVSHMEM_DISABLE_NVLS": "1",
}


def inputs(count, size, rank, device):
    """Rank `rank`'s buffer for a collective of `size` bytes: uniform in [-1, 1)."""
    g = torch.Generator(device=device)
    g.manual_seed(size * 1009 + rank)
    return torch.rand(count, generator=g, device=device) * 2 - 1


def main():
    for k, v in MULTICAST_OFF.items():
        if os.environ.get(k) != v:
            sys.exit(f"error: set {k}={v} before starting (NVLink multicast must stay off)")
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, help="CSV to write (rank 0 writes it)")
    p.add_argument("--max-mib", type=int, default=1024, help="largest buffer, MiB [1024]")
    p.add_argument("--reps", type=int, default=10, help="timed repetitions per size [10]")
    p.add_argument("--iters", type=int, default=20, help="all-reduces per repetition [20]")
    p.add_argument("--warmup", type=int, default=5, help="untimed all-reduces first [5]")
    args = p.parse_args()

    rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", rank)
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=device)
    world = dist.get_world_size()
    factor = 2 * (world - 1) / world

    rows = []
    size = 8
    while size <= args.max_mib << 20:
        count = max(world, (size // 4) // world * world)
        x = inputs(count, size, rank, device)
        want = sum(inputs(count, size, r, device).double() for r in range(world))
        dist.all_reduce(x)
        torch.cuda.synchronize()
        err = (x.double() - want).abs().max().item()
        if not err <= 4 * world * 2**-23:
            sys.exit(f"error: all-reduce of {size} bytes is wrong on rank {rank} (max error {err})")
        del want
        for _ in range(args.warmup):
            dist.all_reduce(x)
        samples = []
        for _ in range(args.reps):
            dist.barrier(device_ids=[rank])
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(args.iters):
                dist.all_reduce(x)
            torch.cuda.synchronize()
            t = torch.tensor([(time.perf_counter() - t0) / args.iters], device=device)
            dist.all_reduce(t, op=dist.ReduceOp.MAX)  # the slowest rank's time
            samples.append(t.item())
        med = statistics.median(samples)
        algbw = count * 4 / med / 1e9
        rows.append((count * 4, med, min(samples), max(samples), algbw, algbw * factor))
        size *= 2

    if rank == 0:
        name = torch.cuda.get_device_name(device)
        names = {torch.cuda.get_device_name(i) for i in range(world)}
        gpus = f"{world} × {name}" if names == {name} else " + ".join(sorted(names))
        v = torch.cuda.nccl.version()
        nccl = ".".join(str(p) for p in v) if isinstance(v, tuple) else str(v)
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(f"# gpu: {gpus}\n")
            f.write(f"# torch: {torch.__version__}\n")
            f.write(f"# nccl: {nccl} (the NCCL that torch loaded)\n")
            f.write("# method: torch.distributed all_reduce (sum, in place, float32), one process "
                    f"per GPU; {args.warmup} warm-up calls, then {args.reps} repetitions of "
                    f"{args.iters} calls between host clock reads around torch.cuda.synchronize(); "
                    "the slowest rank's time\n")
            f.write("# multicast: " + " ".join(f"{k}={v}" for k, v in MULTICAST_OFF.items()) + "\n")
            f.write(datetime.datetime.now(datetime.timezone.utc)
                    .strftime("# date_utc: %Y-%m-%dT%H:%M:%SZ\n"))
            f.write("# command: torchrun --nproc_per_node=%d src/multi_gpu/torch_reference.py %s\n"
                    % (world, " ".join(sys.argv[1:])))
            f.write("collective,ranks,bytes,time_us,time_us_min,time_us_max,algbw_gbps,busbw_gbps\n")
            for b, med, lo, hi, alg, bus in rows:
                f.write(f"all-reduce,{world},{b},{med * 1e6:.6g},{lo * 1e6:.6g},{hi * 1e6:.6g},"
                        f"{alg:.6g},{bus:.6g}\n")
        print(f"torch.distributed all-reduce over {gpus}, NCCL {nccl}: "
              f"{rows[-1][5]:.1f} GB/s bus bandwidth at {rows[-1][0]} bytes; wrote {args.out}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
