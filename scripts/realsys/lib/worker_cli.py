"""The command line each SQL-played worker.py (que, oban, river, good_job, solid_queue) takes:

  worker.py run      --db URL --name w1 [--sleep 0.3] [--version V]
  worker.py enqueue  --db URL --keys k1,k2 [--fail-first k2] [--version V]
  worker.py jobs     --db URL [--version V]
"""
import argparse


def parse_worker_args(default_version, versions):
    """The worker's arguments; versions: the releases whose SQL it sends, default_version the one it sends unasked."""
    p = argparse.ArgumentParser()
    p.add_argument("cmd", choices=["run", "enqueue", "jobs"])
    p.add_argument("--db", required=True)
    p.add_argument("--version", default=default_version, choices=sorted(versions))
    p.add_argument("--name", default="w")
    p.add_argument("--sleep", type=float, default=0.3)
    p.add_argument("--keys", default="")
    p.add_argument("--fail-first", default="")
    return p.parse_args()
