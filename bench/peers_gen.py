#!/usr/bin/env python3
"""Scale the peers fixtures (tests/fixtures/peers) to N requests per format.

Usage: bench/peers_gen.py N OUT_DIR

Writes one folder per tool under OUT_DIR, each holding what the tool would
write for a run of N requests: the fixture's requests (successes and
injected failures) repeated with fresh ids and shifted times, the side files
beside them. Written streaming, so memory stays small whatever N is.
Stdlib only.
"""
import json
import shutil
import sys
from pathlib import Path

FIX = Path(__file__).resolve().parent.parent / "tests/fixtures/peers"


def aiperf(n: int, out: Path) -> None:
    src = FIX / "aiperf/chat-poisson40-err5"
    out.mkdir(parents=True, exist_ok=True)
    lines = [json.loads(l) for l in (src / "profile_export.jsonl").read_text().splitlines() if l.strip()]
    starts = [l["metadata"]["request_start_ns"] for l in lines]
    span = max(starts) - min(starts) + 1_000_000
    with open(out / "profile_export.jsonl", "w") as f:
        for i in range(n):
            rec = json.loads(json.dumps(lines[i % len(lines)]))
            shift = (i // len(lines)) * span
            m = rec["metadata"]
            for k in ("credit_issued_ns", "request_start_ns", "request_ack_ns", "request_end_ns"):
                if isinstance(m.get(k), int):
                    m[k] += shift
            m["x_request_id"] = f"req-{i:08d}"
            f.write(json.dumps(rec) + "\n")
    summary = json.loads((src / "profile_export_aiperf.json").read_text())
    summary["benchmark_id"] = f"bench{n}"
    (out / "profile_export_aiperf.json").write_text(json.dumps(summary, indent=2))


def guidellm(n: int, out: Path) -> None:
    src = FIX / "guidellm/sweep4-err5"
    out.mkdir(parents=True, exist_ok=True)
    doc = json.loads((src / "benchmarks.json").read_text())
    b = doc["benchmarks"][1]
    ok, err = b["requests"]["successful"], b["requests"]["errored"]
    span = b["end_time"] - b["start_time"] + 0.001
    n_err = max(1, n * len(err) // (len(ok) + len(err))) if err else 0
    lists = {"successful": (ok, n - n_err), "errored": (err, n_err), "incomplete": ([], 0)}
    b["requests"] = {"successful": "@successful", "errored": "@errored", "incomplete": "@incomplete", "total": None}
    doc["benchmarks"] = [b]
    text = json.dumps(doc)
    pre, rest = text.split('"@successful"')
    mid1, rest = rest.split('"@errored"')
    mid2, tail = rest.split('"@incomplete"')
    with open(out / "benchmarks.json", "w") as f:
        for kind, before in (("successful", pre), ("errored", mid1), ("incomplete", mid2)):
            f.write(before)
            pool, count = lists[kind]
            f.write("[")
            for i in range(count):
                r = json.loads(json.dumps(pool[i % len(pool)]))
                shift = (i // len(pool)) * span
                t = r["info"]["timings"]
                for k, v in t.items():
                    if isinstance(v, float) and v > 1e9:
                        t[k] = v + shift
                for k in ("request_start_time", "request_end_time"):
                    if isinstance(r.get(k), float):
                        r[k] += shift
                r["request_id"] = r["info"]["request_id"] = f"{kind}-{i:08d}"
                f.write(("," if i else "") + json.dumps(r))
            f.write("]")
        f.write(tail)


def inference_perf(n: int, out: Path) -> None:
    src = FIX / "inference-perf/chat-shared-prefix-err5"
    out.mkdir(parents=True, exist_ok=True)
    recs = json.loads((src / "per_request_lifecycle_metrics.json").read_text())
    starts = [r["start_time"] for r in recs]
    span = max(starts) - min(starts) + 0.001
    with open(out / "per_request_lifecycle_metrics.json", "w") as f:
        f.write("[\n")
        for i in range(n):
            r = recs[i % len(recs)]
            shift = (i // len(recs)) * span
            r2 = dict(r)
            r2["start_time"] = r["start_time"] + shift
            r2["end_time"] = r["end_time"] + shift
            info = r.get("info")
            if info and info.get("response_metrics"):
                rm = dict(info["response_metrics"])
                for k in ("chunk_times", "output_token_times"):
                    if rm.get(k):
                        rm[k] = [t + shift for t in rm[k]]
                r2["info"] = dict(info, response_metrics=rm)
            f.write(("," if i else "") + json.dumps(r2) + "\n")
        f.write("]\n")
    for name in ("config.yaml", "inference-perf.partial.stage_0.yaml"):
        shutil.copy(src / name, out / name)


def vllm(n: int, out: Path) -> None:
    src = FIX / "vllm/completions-conc4-err5"
    out.mkdir(parents=True, exist_ok=True)
    doc = json.loads((src / "vllm_bench_serve.json").read_text())
    m = len(doc["latencies"])
    span = max(doc["start_times"]) - min(doc["start_times"]) + 0.001
    for k in ("input_lens", "output_lens", "ttfts", "itls", "latencies", "generated_texts", "errors", "queue_times"):
        if k in doc:
            doc[k] = [doc[k][i % m] for i in range(n)]
    doc["start_times"] = [doc["start_times"][i % m] + (i // m) * span for i in range(n)]
    doc["num_prompts"] = n
    errors = sum(1 for e in doc["errors"] if e)
    doc["completed"], doc["failed"] = n - errors, errors
    (out / "vllm_bench_serve.json").write_text(json.dumps(doc))


def main() -> None:
    n, out = int(sys.argv[1]), Path(sys.argv[2])
    for name, make in [("aiperf", aiperf), ("guidellm", guidellm), ("inference-perf", inference_perf), ("vllm", vllm)]:
        make(n, out / name)
        size = sum(p.stat().st_size for p in (out / name).iterdir())
        print(f"{name}: {n} requests, {size / 1e6:.1f} MB", file=sys.stderr)


if __name__ == "__main__":
    main()
