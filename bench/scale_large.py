#!/usr/bin/env python3
"""Scale the conformance `large` case to N measured requests.

Usage: bench/scale_large.py N OUT.jsonl   (--help for the details)

Every measured request of the `large` artifact is repeated with fresh
request ids, x-request ids and request indexes, so the scaled run is a
valid artifact (one case, no cohort issues). As a real artifact does, each
request comes with its `infer.dispatch` and `infer.first_content` records
(the source request's, with the fresh ids): about 2.2 KB per request, 90,000
requests make about 200 MB. `--requests-only` leaves them out (the shape of
this benchmark's inputs before). Stdlib only.
"""
import argparse
import json
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "tests/fixtures/conformance/cases/large/artifact.jsonl"


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Write the conformance `large` artifact scaled to N measured requests "
        "(each request repeated with fresh ids; about 2.2 KB per request).",
        epilog="example: bench/scale_large.py 90000 bench/out/large_x30.jsonl",
    )
    parser.add_argument("--requests-only", action="store_true",
                        help="no dispatch and first-content records per request")
    parser.add_argument("n", type=int, metavar="N", help="measured requests to write (at least 1)")
    parser.add_argument("out", type=Path, metavar="OUT.jsonl", help="the artifact to write")
    args = parser.parse_args()
    if args.n < 1:
        parser.error("N must be at least 1")
    return args


def main() -> None:
    args = arguments()
    n, out = args.n, args.out
    lines = SRC.read_text().splitlines()
    requests = [json.loads(l) for l in lines if '"event_type": "infer.request"' in l and '"phase": "measured"' in l]
    per_request = ('"infer.dispatch"', '"infer.first_content"')
    # The source's own measured dispatch and first-content records, by request id.
    beside = {}
    for l in lines:
        if any(t in l for t in per_request) and '"phase": "measured"' in l:
            rec = json.loads(l)
            beside.setdefault(rec.get("request_id"), []).append(rec)
    head = [l for l in lines if '"event_type": "infer.request"' not in l and '"infer.session"' not in l or '"status": "running"' in l]
    head = [l for l in head if not (any(t in l for t in per_request) and '"phase": "measured"' in l)]
    tail = [l for l in lines if '"infer.session"' in l and '"status": "running"' not in l]
    window = next(json.loads(l) for l in lines if '"infer.phase_window"' in l and '"measured"' in l)
    with out.open("w") as f:
        for l in head:
            if '"infer.phase_window"' in l and '"measured"' in l:
                continue
            f.write(l + "\n")
        for i in range(n):
            src = requests[i % len(requests)]
            r = dict(src)
            r["request_index"] = i
            r["request_id"] = f"{r['case_id']}_measured_{i}"
            if r.get("x_request_id"):
                r["x_request_id"] = r["x_request_id"].rsplit("-", 1)[0] + f"-{r['request_id']}"
            if not args.requests_only:
                for rec in beside.get(src.get("request_id"), []):
                    rec = dict(rec, request_id=r["request_id"])
                    if "x_request_id" in rec:
                        rec["x_request_id"] = r.get("x_request_id")
                    f.write(json.dumps(rec, sort_keys=True) + "\n")
            f.write(json.dumps(r, sort_keys=True) + "\n")
        f.write(json.dumps(window, sort_keys=True) + "\n")
        for l in tail:
            f.write(l + "\n")


if __name__ == "__main__":
    main()
