"""Cost of the redaction layer per text, against a baseline in the same run: the ``redact.py``
of another revision (default: the one before issue 34's changes), loaded from git beside the
installed one.

    python bench/redact_lines.py [--baseline REV] [--rounds N]

Texts: every format's sample lines (``parsers.FORMATS``), the same lines with a secret appended
(the lines the patterns run on), and an event log's environment line of 3,000 conf entries
(the longest text a store gets). Prints the median microseconds per call of each, both sides.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
import types
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _baseline(rev: str):
    source = subprocess.run(["git", "-C", str(REPO), "show", f"{rev}:commitsleuth/redact.py"],
                            capture_output=True, text=True, check=True).stdout
    module = types.ModuleType("redact_baseline")
    exec(compile(source, f"{rev}:commitsleuth/redact.py", "exec"), module.__dict__)
    return module.redact


def _texts() -> dict[str, list[str]]:
    from commitsleuth.parsers import FORMATS

    samples = [s.line for f in FORMATS for s in f.samples]
    props = {f"spark.conf.{i}.key{'Password' if i % 50 == 0 else ''}": f"value{i}/path token=x{i}" for i in range(3000)}
    return {"samples": samples, "samples+secret": [f"{s} password=pw1 s3a://k:pw2@b/x" for s in samples],
            "environment": [json.dumps({"Event": "SparkListenerEnvironmentUpdate", "Spark Properties": props})]}


def _time(fn, texts: list[str], rounds: int) -> float:
    per = []
    for _ in range(rounds):
        t = time.perf_counter()
        for text in texts:
            fn(text)
        per.append((time.perf_counter() - t) / len(texts) * 1e6)
    return statistics.median(per)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", default="dcf9660")
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    from commitsleuth.redact import redact

    old = _baseline(args.baseline)
    print(f"{'texts':<16} {'n':>5} {args.baseline + ' us':>12} {'now us':>10} {'ratio':>6}")
    for name, texts in _texts().items():
        rounds = max(3, args.rounds // 2) if name == "environment" else args.rounds
        before, now = [], []
        for _ in range(3):  # interleaved: the box's load falls on both sides alike
            before.append(_time(old, texts, rounds))
            now.append(_time(redact, texts, rounds))
        b, n = statistics.median(before), statistics.median(now)
        print(f"{name:<16} {len(texts):>5} {b:>12.1f} {n:>10.1f} {n / b:>6.2f}")


if __name__ == "__main__":
    sys.exit(main())
