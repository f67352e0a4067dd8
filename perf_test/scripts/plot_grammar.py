#!/usr/bin/python3
"""Plots from kcla_bench_grammar JSON (--benchmark_out): per matrix, milliseconds per
vector against the batch size B for kcla and the best CSR baseline; and device footprint
of kcla and CSR against the number of nonzeros.

    /usr/bin/python3 perf_test/scripts/plot_grammar.py results.json [more.json ...] -o plots/
"""
import argparse
import json
import os
import re
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def seconds(b):
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b.get("time_unit", "ns")]
    return b["real_time"] * scale


def collect(paths):
    per_vector = defaultdict(lambda: defaultdict(dict))  # matrix -> side -> B -> ms/vector
    footprint = {}  # matrix -> (nnz, kcla MB, csr MB)
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        for b in data.get("benchmarks", []):
            if b.get("error_occurred"):
                continue
            name = b["name"]
            m = re.match(r"csr_spmv/([^/]+)/", name)
            if m:
                per_vector[m.group(1)]["CSR"][1] = seconds(b) * 1e3
                continue
            m = re.match(r"kcla_spmv/([^/]+)/auto/auto/", name)
            if m:
                per_vector[m.group(1)]["kcla"][1] = seconds(b) * 1e3
                nnz = b.get("nnz", 0)
                footprint[m.group(1)] = (nnz, b.get("device_MB", 0), b.get("csr_device_MB", 0))
                continue
            m = re.match(r"csr_spmm/([^/]+)/B=(\d+)/", name)
            if m:
                B = int(m.group(2))
                ms = seconds(b) * 1e3 / B
                side = per_vector[m.group(1)]["CSR"]
                side[B] = min(side.get(B, float("inf")), ms)  # best algorithm
                continue
            m = re.match(r"kcla_spmm/([^/]+)/B=(\d+)/auto/", name)
            if m:
                B = int(m.group(2))
                per_vector[m.group(1)]["kcla"][B] = seconds(b) * 1e3 / B
    return per_vector, footprint


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("json", nargs="+")
    parser.add_argument("-o", "--output", default="plots")
    args = parser.parse_args()
    os.makedirs(args.output, exist_ok=True)
    per_vector, footprint = collect(args.json)
    if not per_vector:
        raise SystemExit("no kcla_bench_grammar results in " + ", ".join(args.json))

    fig, ax = plt.subplots(figsize=(6, 4))
    for matrix, sides in sorted(per_vector.items()):
        for side, style in (("kcla", "-o"), ("CSR", "--s")):
            points = sorted(sides.get(side, {}).items())
            if points:
                ax.plot([p[0] for p in points], [p[1] for p in points], style, label=f"{matrix} {side}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("vectors B")
    ax.set_ylabel("ms per vector")
    ax.set_title("grammar product vs CSR (best vendor algorithm)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(args.output, "ms_per_vector.png"), dpi=150)

    if footprint:
        fig, ax = plt.subplots(figsize=(6, 4))
        names = sorted(footprint)
        nnz = [footprint[n][0] for n in names]
        ax.loglog(nnz, [footprint[n][1] for n in names], "o", label="kcla (schedule + workspace)")
        ax.loglog(nnz, [footprint[n][2] for n in names], "s", label="CSR")
        for n, x, y in zip(names, nnz, [footprint[n][1] for n in names]):
            ax.annotate(n, (x, y), fontsize=7)
        ax.set_xlabel("nonzeros")
        ax.set_ylabel("device MB")
        ax.set_title("device footprint, single vector")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(args.output, "footprint.png"), dpi=150)
    for matrix, sides in sorted(per_vector.items()):
        row = ", ".join(f"B={B}: kcla {sides['kcla'].get(B, float('nan')):.4f} / CSR {sides['CSR'].get(B, float('nan')):.4f}"
                        for B in sorted(set(sides["kcla"]) | set(sides["CSR"])))
        print(f"{matrix}: ms per vector {row}")


if __name__ == "__main__":
    main()
