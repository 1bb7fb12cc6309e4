"""check_hybrid.py RANKS FILE: the hybrid job ran the stencil twice (srun, then
mpirun), each time with RANKS ranks and both the MPI + OpenMP and the strata
result (the bench itself checks that their grids agree bit for bit)."""
import re
import sys

ranks, path = int(sys.argv[1]), sys.argv[2]
text = open(path).read()
if "WRONG RESULT" in text:
    sys.exit("check_hybrid: the bench reported a wrong result")
for launcher in ("srun --mpi=pmix", "mpirun"):
    if f"== {launcher}" not in text:
        sys.exit(f"check_hybrid: no {launcher} section")
headers = re.findall(r"strata-bench-mpi: (\d+) ranks, (\d+) workers each", text)
if len(headers) != 2 or any(int(r) != ranks for r, _ in headers):
    sys.exit(f"check_hybrid: wanted two runs of {ranks} ranks, got {headers}")
rows = re.findall(r"^stencil +(mpi\+omp|strata) +\S+ +([0-9.]+) MLUP/s", text, re.M)
if sorted(r for r, _ in rows) != ["mpi+omp", "mpi+omp", "strata", "strata"]:
    sys.exit(f"check_hybrid: wanted a mpi+omp and a strata row per launcher, got {rows}")
if any(float(v) <= 0 for _, v in rows):
    sys.exit(f"check_hybrid: a rate of zero: {rows}")
print(f"check_hybrid: PASS: {headers}, {rows}")
