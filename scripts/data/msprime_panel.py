#!/usr/bin/env python3
"""Simulates a genotype panel with msprime (coalescent with recombination, infinite-sites
mutations) and writes it as a PLINK 1 fileset (BASE.bed/.bim/.fam) that kcla reads:
rows = individuals, columns = variants, values = copies of the derived allele (A1).

    pip install msprime     # optional: kcla's tests never need it
    python3 scripts/data/msprime_panel.py --samples 2500 --length 5e6 -o /tmp/msp2500

The defaults are human-like (Ne 10,000, mutation and recombination 1e-8 per bp per
generation). Time grows with samples x length (docs/panel-generator.md has timings); for
10^10+ entries use `kcla generate` (the streaming mosaic generator) instead.
"""
import argparse
import os
import sys
import time

import numpy as np


def parse_args():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--samples", type=int, required=True, help="individuals (rows)")
    p.add_argument("--ploidy", type=int, default=2, choices=(1, 2))
    p.add_argument("--length", type=float, default=1e6, help="sequence length in bp")
    p.add_argument("--ne", type=float, default=1e4, help="effective population size")
    p.add_argument("--mu", type=float, default=1e-8, help="mutation rate per bp per generation")
    p.add_argument("--rho", type=float, default=1e-8,
                   help="recombination rate per bp per generation")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("-o", "--output", required=True, help="BASE of BASE.bed/.bim/.fam")
    return p.parse_args()


def write_plink(ts, base, ploidy):
    """Streams the tree sequence's variants into BASE.bed (SNP-major), .bim and .fam,
    under temporary names renamed at the end (the .bed last)."""
    n = ts.num_samples // ploidy
    # .bed codes with A1 (the derived allele) counted: 2 -> 00, 1 -> 10, 0 -> 11 (a haploid
    # carrier is written as a heterozygote, which kcla reads back as 1).
    code_of = np.array([3, 2, 0], dtype=np.uint8)
    padded = (n + 3) // 4 * 4
    codes = np.zeros(padded, dtype=np.uint8)  # padding calls stay 00, as PLINK writes them
    tmp = {ext: f"{base}.{ext}.tmp.{os.getpid()}" for ext in ("bed", "bim", "fam")}
    try:
        with open(tmp["fam"], "w") as fam:
            fam.writelines(f"s{i + 1} s{i + 1} 0 0 0 -9\n" for i in range(n))
        with open(tmp["bed"], "wb") as bed, open(tmp["bim"], "w") as bim:
            bed.write(bytes([0x6C, 0x1B, 0x01]))
            for j, var in enumerate(ts.variants()):
                g = var.genotypes.astype(np.uint8)
                dosage = g[0::2] + g[1::2] if ploidy == 2 else g
                codes[:n] = code_of[dosage]
                q = codes.reshape(-1, 4)
                bed.write((q[:, 0] | (q[:, 1] << 2) | (q[:, 2] << 4) | (q[:, 3] << 6)).tobytes())
                bim.write(f"1 m{j + 1} 0 {int(var.site.position) + 1} A C\n")
        if os.path.exists(base + ".bed"):
            os.remove(base + ".bed")
        for ext in ("bim", "fam", "bed"):
            os.replace(tmp[ext], f"{base}.{ext}")
    finally:
        for path in tmp.values():
            if os.path.exists(path):
                os.remove(path)
    return n


def main():
    args = parse_args()
    try:
        import msprime
    except ImportError:
        sys.exit("msprime_panel.py needs msprime: pip install msprime")
    base = args.output[:-4] if args.output.endswith((".bed", ".bim", ".fam")) else args.output
    start = time.time()
    ts = msprime.sim_ancestry(samples=args.samples, ploidy=args.ploidy,
                              sequence_length=args.length, population_size=args.ne,
                              recombination_rate=args.rho, random_seed=args.seed)
    ancestry = time.time() - start
    # Continuous genome: infinite sites, so every variant is biallelic.
    ts = msprime.sim_mutations(ts, rate=args.mu, discrete_genome=False,
                               random_seed=args.seed + 1)
    simulated = time.time() - start
    n = write_plink(ts, base, args.ploidy)
    total = time.time() - start
    m = ts.num_sites
    print(f"msprime panel {base}.bed/.bim/.fam: {n} individuals x {m} variants "
          f"({n * m:.3g} entries), {ts.num_trees} trees; ancestry {ancestry:.1f} s, "
          f"mutations {simulated - ancestry:.1f} s, writing {total - simulated:.1f} s, "
          f"total {total:.1f} s")


if __name__ == "__main__":
    main()
