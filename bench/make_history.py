#!/usr/bin/env python3
"""Write N made-up runs of a nightly benchmark, for bench/history.sh.

Usage: bench/make_history.py N OUT_DIR

The ten compare-case artifacts of the conformance corpus (compare_config and
compare_allow: four series, by experiment and arm) are cycled through: every
written run is one of them with fresh run and session ids, started an hour
after the run before, its latencies scaled by a slow drift and 2% noise, and
with a verified server description (as tests/it/history.rs writes one) so the
series' comparability is established and checks are evaluable. Stdlib only.
"""
import json
import random
import sys
from pathlib import Path

CASES = Path(__file__).resolve().parent.parent / "tests/fixtures/conformance/cases"
SOURCES = sorted((CASES / "compare_config").glob("*_b*.jsonl")) + sorted((CASES / "compare_allow").glob("*_b*.jsonl"))
HOUR_NS = 3_600_000_000_000
SCALED = ("ttft_ms", "e2e_latency_ms", "first_chunk_latency_ms")


def edit(v, key, factor, shift):
    if isinstance(v, dict):
        return {k: edit(x, k, factor, shift) for k, x in v.items()}
    if isinstance(v, list):
        if key == "chunk_interarrival_ms":
            return [x * factor for x in v]
        return [edit(x, "", factor, shift) for x in v]
    if isinstance(v, bool):
        return v
    if isinstance(v, int) and (key.endswith("_at_ns") or key == "timestamp_ns"):
        return v + shift
    if isinstance(v, (int, float)) and key in SCALED:
        return v * factor
    return v


def identity(run_id, session, boot, at):
    model = {"weights_digest": "sha256:5eed", "resolved_snapshot": "snap-1", "identity_evidence": "pinned_snapshot_verified"}
    server = {"pid": 4242, "start_ticks": 777}
    description = {
        "host": {"hostname": "vm", "boot_id": boot, "nproc": 16},
        "server": server,
        "gpus": {"driver_version": "550.54", "server_uuids": ["GPU-1"],
                 "devices": [{"uuid": "GPU-1", "server_pids": [4242], "settings": {"name": "NVIDIA H200"}}]},
        "model": dict(model, configured="fake"),
    }
    return [
        {"event_type": "infer.manifest", "role": "before", "session_id": session, "run_id": run_id,
         "observed_at_ns": at, "sha256": "d" * 64, "host": {"hostname": "vm", "boot_id": boot},
         "server": server, "gpu_uuids": ["GPU-1"], "description": description},
        {"event_type": "infer.model_identity", "session_id": session, "run_id": run_id,
         "server": server, "boot_id": boot, "model": model},
    ]


def main() -> None:
    n, out = int(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    sources = []
    for path in SOURCES:
        records = [json.loads(l) for l in path.read_text().splitlines() if l.strip()]
        context = next(r for r in records if r.get("event_type") == "infer.context")["context"]
        sources.append((path.read_text(), context["run_id"], context["session_id"]))
    rnd = random.Random(0)
    for i in range(n):
        text, old_run, old_session = sources[i % len(sources)]
        run_id, session = f"night-{i:05d}", f"session-{i:05d}"
        text = text.replace(old_run, run_id).replace(old_session, session)
        factor = (1.0 + 0.1 * i / n) * (1.0 + rnd.uniform(-0.02, 0.02))
        lines = []
        placed = False
        for line in text.splitlines():
            r = edit(json.loads(line), "", factor, i * HOUR_NS)
            if r.get("event_type") == "infer.server_probe":
                r.setdefault("answers", {}).setdefault("/version", {"body": {"version": "0.11.0"}, "http_status": 200})
            lines.append(r)
            if r.get("event_type") == "infer.session" and not placed:
                placed = True
                boot = "80956652-4182-4e20-8984-7a99c0a0659e"
                lines.extend(identity(run_id, session, boot, r.get("timestamp_ns", 0)))
        with (out / f"{run_id}.jsonl").open("w") as f:
            for r in lines:
                f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
