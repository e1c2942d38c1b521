"""``sessionspec economics``: the session-prefix design against its rejected
alternatives, over the same generated workloads (see docs/economics.md)."""

from __future__ import annotations

import argparse
import json
import sys

from model.economics import DESIGN_TITLES, PRESETS, DesignResult, Workload, compare_designs, effective_cost

HELP = "compare the session-prefix design with its alternatives (full-price vs cache-read tokens, resume drift)"

COLUMNS = ("requests", "input", "full-price", "cache-read", "cost", "resume-drift", "changes", "stale", "after-slot")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cache-model", choices=sorted(PRESETS), default="neutral", help="provider cache model")
    parser.add_argument("--seeds", type=int, default=3, metavar="N", help="generated scenarios per workload (seeds 1..N)")
    parser.add_argument("--notice-chars", type=int, metavar="N",
                        help="size of design (a+)'s durable change notice (default: the opener's size, 8000)")
    parser.add_argument("--format", choices=("text", "markdown", "json"), default="text")


def _row(r: DesignResult, cost: float) -> tuple[str, ...]:
    return (str(r.requests), str(r.input_tokens), str(r.full_price_tokens), str(r.cache_read_tokens), f"{cost:.0f}",
            str(r.resume_drift_tokens), str(r.header_changes), str(r.stale_requests), str(r.after_tokens))


def run(args: argparse.Namespace) -> int:
    if args.seeds < 1 or (args.notice_chars is not None and args.notice_chars < 0):
        print("sessionspec economics: --seeds must be at least 1 and --notice-chars non-negative", file=sys.stderr)
        return 2
    model = PRESETS[args.cache_model]
    results = compare_designs(tuple(range(1, args.seeds + 1)), model, args.notice_chars)
    if args.format == "json":
        print(json.dumps({"cacheModel": model.name, "source": model.source, "rows": [
            {"workload": r.workload.value, "design": r.design.value, "requests": r.requests, "inputTokens": r.input_tokens,
             "fullPriceTokens": r.full_price_tokens, "cacheReadTokens": r.cache_read_tokens,
             "effectiveCost": round(effective_cost(r, model), 1), "resumeDriftTokens": r.resume_drift_tokens,
             "headerChanges": r.header_changes, "staleRequests": r.stale_requests, "afterSlotTokens": r.after_tokens}
            for r in results]}, indent=1))
        return 0
    print(f"cache model: {model.name} ({model.source}); cost = full-price + {model.read_price} x cache-read")
    for workload in Workload:
        rows = [r for r in results if r.workload is workload]
        print()
        if args.format == "markdown":
            print(f"**opener {workload.value}**\n")
            print("| design | " + " | ".join(COLUMNS) + " |")
            print("|---|" + "---:|" * len(COLUMNS))
            for r in rows:
                print(f"| {DESIGN_TITLES[r.design]} | " + " | ".join(_row(r, effective_cost(r, model))) + " |")
        else:
            print(f"opener {workload.value}")
            print(f"  {'design':34}" + "".join(f"{c:>13}" for c in COLUMNS))
            for r in rows:
                print(f"  {DESIGN_TITLES[r.design]:34}" + "".join(f"{v:>13}" for v in _row(r, effective_cost(r, model))))
    return 0
