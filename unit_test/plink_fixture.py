"""Writes PLINK 1 .bed files for the CLI tests: calls[i][j] is the number of copies of the
.bim's fifth-column allele that sample i carries at variant j (0, 1, 2), or -1 (missing)."""

CODE = {2: 0, -1: 1, 1: 2, 0: 3}  # 2-bit codes, variant-major: 00 = two copies of A1


def write_bed(path, calls, n, m):
    with open(path, "wb") as bed:
        bed.write(bytes([0x6C, 0x1B, 0x01]))
        for j in range(m):
            for first in range(0, n, 4):
                byte = 0
                for q in range(4):
                    if first + q < n:
                        byte |= CODE[calls[first + q][j]] << (2 * q)
                bed.write(bytes([byte]))
