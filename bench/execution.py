#!/usr/bin/env python3
"""Add a vLLM execution import to a scaled artifact (bench/execution.sh).

Usage: bench/execution.py BASE.jsonl OUT.jsonl [REQUESTS_PER_STEP]

OUT is BASE followed by what `stormlog infer import-execution` appends, in
its compact (schema version 4) form: the import's context, a clock
alignment, one `infer.iteration` per REQUESTS_PER_STEP (default 8) measured
requests with one `infer.membership` per request in it, one hook
`infer.request` per request, and the engine adapter's capability record with
the import summary. The records' shapes (and their metadata) are those of the
`execution_clean` conformance case, with the ids and clocks of the scaled
run. Stdlib only.
"""
import json
import sys
from pathlib import Path

TEMPLATES = (
    Path(__file__).resolve().parent.parent
    / "tests/fixtures/conformance/cases/execution_clean/artifact.jsonl"
)
PRODUCER = "vllm:vm:bench:4242:1796151641603116949"
EPOCH = "engine-4242-1796151641603116949"


def templates():
    """The first iteration, run membership, hook request and import summary."""
    found = {}
    for line in TEMPLATES.read_text().splitlines():
        r = json.loads(line)
        kind = r.get("event_type")
        if r.get("schema_version", 1) == 1:
            continue
        if kind == "infer.membership" and r["metadata"].get("ownership") != "run":
            continue
        if kind == "infer.capabilities" and r.get("component") != "engine_adapter":
            continue
        found.setdefault(kind, r)
    return found


def main() -> None:
    base, out = Path(sys.argv[1]), Path(sys.argv[2])
    per_step = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    t = templates()
    run_id = session_id = None
    requests = []
    x_ids = {}
    with base.open() as f:
        for line in f:
            if run_id is None and '"infer.context"' in line:
                ctx = json.loads(line)["context"]
                run_id, session_id = ctx["run_id"], ctx["session_id"]
            if '"event_type": "infer.request"' in line and '"phase": "measured"' in line:
                r = json.loads(line)
                if r.get("x_request_id"):
                    requests.append(r["request_id"])
                    x_ids[r["request_id"]] = r["x_request_id"]
    context = {
        "backend": None, "backend_version": None,
        "clock_domain": "vm/bench/monotonic_ns", "clock_kind": "monotonic",
        "collection_mode": "imported", "device_uuid": None, "engine": "vllm",
        "engine_version": "0.30.0", "host": "vm", "local_rank": None, "pid": 4242,
        "producer_id": PRODUCER, "provenance": "observed", "rank": None,
        "run_id": run_id, "session_id": session_id,
        "source": "stormlog.infer.import_execution", "source_version": "0.4.3",
        "world_size": None,
    }
    capture = dict(context, clock_domain="vm/bench/unix_epoch_ns", clock_kind="wall",
                   collection_mode="active", engine=None, engine_version=None,
                   producer_id="stormlog.infer.capture", source="stormlog.infer.capture")
    ref = lambda i: {"id": str(i), "producer_id": PRODUCER}  # noqa: E731
    with base.open() as src, out.open("w") as f:
        for line in src:
            f.write(line)
        emit = lambda r: f.write(json.dumps(r, sort_keys=True) + "\n")  # noqa: E731
        emit({"context": context, "context_id": "ctx-bench-import", "event_type": "infer.context",
              "schema_version": 4})
        emit({"context_id": "ctx-bench-import", "event_id": f"alignment:{EPOCH}",
              "event_type": "infer.clock_alignment", "from_clock_domain": context["clock_domain"],
              "to_clock_domain": capture["clock_domain"], "metadata": {"epoch": EPOCH},
              "offset_ns": 1796150002621145015, "schema_version": 4, "uncertainty_ns": 343,
              "valid_from_ns": 0, "valid_to_ns": None})
        start = 1_000_000_000
        for step in range(0, (len(requests) + per_step - 1) // per_step):
            members = requests[step * per_step:(step + 1) * per_step]
            it = dict(t["infer.iteration"], context_id="ctx-bench-import",
                      event_id=f"iteration:{PRODUCER}:{step}", iteration_ref=ref(step),
                      start_ns=start, end_ns=start + 5_000_000)
            it["metadata"] = dict(it["metadata"], epoch=EPOCH, members=len(members),
                                  run_members=len(members), foreign_members=0,
                                  unresolved_members=0, start_wall_ns=start + 1796150002621145015)
            emit(it)
            for rid in members:
                m = dict(t["infer.membership"], context_id="ctx-bench-import",
                         event_id=f"membership:{PRODUCER}:{step}:{rid}:prefill",
                         iteration_ref=ref(step), request_ref={"id": rid, "producer_id": "stormlog"},
                         attempt_ref={"id": f"chatcmpl-{rid}", "producer_id": PRODUCER})
                m["metadata"] = dict(m["metadata"], epoch=EPOCH)
                emit(m)
            start += 6_000_000
        for rid in requests:
            r = dict(t["infer.request"], context_id="ctx-bench-import",
                     event_id=f"request:{PRODUCER}:{rid}",
                     request_ref={"id": rid, "producer_id": "stormlog"},
                     attempt_ref={"id": f"chatcmpl-{rid}", "producer_id": PRODUCER})
            r["metadata"] = dict(r["metadata"], epoch=EPOCH, request_id=rid,
                                 x_request_id=x_ids[rid])
            emit(r)
        emit({"context": capture, "context_id": "ctx-bench-capture", "event_type": "infer.context",
              "schema_version": 4})
        cap = dict(t["infer.capabilities"], context_id="ctx-bench-capture",
                   event_id="engine_adapter:bench")
        emit(cap)


if __name__ == "__main__":
    main()
