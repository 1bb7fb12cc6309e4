"""check_report.py WORKERS FILE: the machine-report job's output is strata-info's
JSON, with WORKERS workers and the SLURM variables of the job in its notes."""
import json
import sys

want, path = int(sys.argv[1]), sys.argv[2]
text = open(path).read()
start = text.index("{")
report = json.loads(text[start:])
workers = report["num_workers"]
notes = report["notes"]
if workers != want:
    sys.exit(f"check_report: {workers} workers, wanted {want}")
if not any(n.startswith("SLURM_JOB_ID=") for n in notes):
    sys.exit("check_report: the report does not show the job's SLURM_JOB_ID")
if not any(n == f"SLURM_CPUS_PER_TASK={want}" for n in notes):
    sys.exit(f"check_report: the report does not show SLURM_CPUS_PER_TASK={want}: {notes}")
print(f"check_report: PASS: {workers} workers, notes {notes}")
