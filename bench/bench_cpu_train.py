"""bench_cpu_train: CPU training throughput of `scaletwin run` (1 rank, synthetic data) against PyTorch on the same
model, batch, thread count and number of measured iterations after the same warm-up; prints images/s of each and
the ratio ours / PyTorch (target at least 1.2).

The two run one after the other in alternating rounds (ours, PyTorch, ours, PyTorch, ...) so that a change of load
on a shared machine hits both; every round prints the 1-minute load average before it. The summary gives, per
model, the median images/s of each side, the median of the per-round ratios and their spread (min-max).

Our side: a scenario written to a temporary folder (lenet5 / resnet18_cifar, local-cpu, 1 GPU, allreduce ring,
synthetic data, lr 0.01, momentum 0.9, no weight decay) run as `scaletwin run SCENARIO --threads T --json FILE`;
its images_per_sec counts the iterations after `warmup_iterations`. PyTorch's side: bench_cpu_train_torch.py
(same models as ../shared/peers/torch_models.py) with OPENBLAS_NUM_THREADS=1. Both get OMP_NUM_THREADS=T.

Usage: /usr/bin/python3 bench/bench_cpu_train.py --scaletwin BUILD/cli/scaletwin [--batch 64] [--threads 2]
       [--rounds 3] [--models lenet5,resnet18_cifar] [--warmup 5] [--iterations lenet5=300,resnet18_cifar=8]
Normally run through scripts/bench-cpu-train, which installs PyTorch if missing and builds scaletwin.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_ITERATIONS = {"lenet5": 300, "resnet18_cifar": 8}


def scenario(model, batch, warmup, iterations):
    return {
        "name": f"bench-cpu-train-{model}",
        "description": "bench/bench_cpu_train.py: 1 rank, synthetic data, against PyTorch",
        "model": model, "cluster": "local-cpu", "nodes": 1, "gpus_per_node": 1, "batch_per_gpu": batch,
        "scheme": {"name": "allreduce", "algorithm": "ring"},
        "training": {"data": "synthetic", "iterations": warmup + iterations, "warmup_iterations": warmup,
                     "learning_rate": 0.01, "lr_reference_batch": batch, "momentum": 0.9, "weight_decay": 0.0,
                     "seed": 1},
    }


def environment(threads, torch_side):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    if torch_side:
        env["OPENBLAS_NUM_THREADS"] = "1"
    return env


def run_ours(args, folder, model, iterations):
    path = os.path.join(folder, f"{model}.json")
    out = os.path.join(folder, f"{model}-run.json")
    with open(path, "w") as f:
        json.dump(scenario(model, args.batch, args.warmup, iterations), f)
    cmd = [args.scaletwin, "run", path, "--threads", str(args.threads), "--json", out]
    done = subprocess.run(cmd, env=environment(args.threads, False), capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"bench_cpu_train: {' '.join(cmd)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    with open(out) as f:
        run = json.load(f)["runs"][0]
    assert run["iterations"] == args.warmup + iterations and run["warmup_iterations"] == args.warmup
    return run["images_per_sec"]


def run_torch(args, model, iterations):
    cmd = [args.python, os.path.join(HERE, "bench_cpu_train_torch.py"), model, str(args.batch), str(args.threads),
           str(args.warmup), str(iterations)]
    done = subprocess.run(cmd, env=environment(args.threads, True), capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"bench_cpu_train: {' '.join(cmd)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    args.torch_version = result["torch"]
    return result["images_per_sec"]


def parse_iterations(text):
    counts = dict(DEFAULT_ITERATIONS)
    for item in filter(None, text.split(",")):
        name, _, value = item.partition("=")
        counts[name] = int(value)
    return counts


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scaletwin", required=True, help="path of the scaletwin binary")
    p.add_argument("--python", default="/usr/bin/python3", help="the interpreter that sees Debian's torch")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--models", default="lenet5,resnet18_cifar")
    p.add_argument("--iterations", default="", help="measured iterations per model, e.g. lenet5=300,resnet18_cifar=8")
    args = p.parse_args()
    counts = parse_iterations(args.iterations)
    models = [m for m in args.models.split(",") if m]
    for m in models:
        if m not in DEFAULT_ITERATIONS:
            sys.exit(f"bench_cpu_train: --models: lenet5 or resnet18_cifar (got \"{m}\")")
    print(f"bench_cpu_train: batch {args.batch}, {args.threads} threads, {args.warmup} warm-up iterations, "
          f"{args.rounds} alternating rounds; {os.cpu_count()} cores")
    print(f"{'model':<16}{'round':>6}{'load 1m':>9}{'scaletwin img/s':>17}{'pytorch img/s':>15}{'ratio':>8}")
    summary = []
    with tempfile.TemporaryDirectory(prefix="bench-cpu-train-") as folder:
        for model in models:
            ours, theirs, ratios, loads = [], [], [], []
            for r in range(args.rounds):
                load = os.getloadavg()[0]
                a = run_ours(args, folder, model, counts[model])
                b = run_torch(args, model, counts[model])
                ours.append(a)
                theirs.append(b)
                ratios.append(a / b)
                loads.append(load)
                print(f"{model:<16}{r + 1:>6}{load:>9.2f}{a:>17.1f}{b:>15.1f}{a / b:>8.2f}", flush=True)
            summary.append((model, counts[model], ours, theirs, ratios, loads))
    print(f"\nsummary (medians over {args.rounds} rounds; torch {getattr(args, 'torch_version', '?')}):")
    for model, iters, ours, theirs, ratios, loads in summary:
        print(f"  {model:<15} {iters} measured iterations: scaletwin {statistics.median(ours):.1f} images/s, "
              f"pytorch {statistics.median(theirs):.1f} images/s, ratio {statistics.median(ratios):.2f} "
              f"(min {min(ratios):.2f}, max {max(ratios):.2f}; load {min(loads):.2f}-{max(loads):.2f})")


if __name__ == "__main__":
    main()
