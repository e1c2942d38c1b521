"""quality/run's samples and scores: which mutants are drawn, how verdicts count, the Wilson interval.

A mutant is named by mutmut as ``sessionspec.model.<module path>.<x_function>__mutmut_<n>``; its *area*
is the part of the model the issue-43 targets are set for (``loop/``, ``compaction/``, ``prune``,
``meter``, ``header``; every other module is ``other``).
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterable
from pathlib import Path

from mutation_copy import MUTATED, PREFIX

# mutmut's exit-code meanings (mutmut/stats.py), folded into the columns we report.
STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests", 34: "skipped", 36: "timeout",
          -24: "timeout", 24: "timeout", 152: "timeout", 255: "timeout", 37: "killed"}
AREAS = ("loop/", "compaction/", "prune", "meter", "header")


def module_mutants(workdir: Path, module: str) -> dict[str, int | None]:
    """Every mutant name of a module with its cached exit code (None: not tested)."""
    meta = workdir / "mutants" / MUTATED / f"{module}.py.meta"
    codes: dict[str, int | None] = json.loads(meta.read_text())["exit_code_by_key"] if meta.exists() else {}
    return codes


def all_mutants(workdir: Path, modules: Iterable[str]) -> dict[str, int | None]:
    codes: dict[str, int | None] = {}
    for module in modules:
        codes.update(module_mutants(workdir, module))
    return codes


def area_of(name: str) -> str:
    """The area of a mutant name (``sessionspec.model.loop.turn.x_f__mutmut_1`` -> ``loop/``)."""
    module = name.removeprefix(PREFIX).rsplit(".", 1)[0]
    first = module.split(".")[0]
    if "." in module and f"{first}/" in AREAS:
        return f"{first}/"
    return module if module in AREAS else "other"


def total_sample(population: Iterable[str], size: int, seed: int) -> list[str]:
    """A uniform random sample without replacement of ``size`` names (all of them
    if fewer), fixed by ``seed``; the population is sorted first, so the sample
    depends only on the set of mutants and the seed."""
    names = sorted(set(population))
    return sorted(random.Random(seed).sample(names, min(size, len(names))))


def area_samples(population: Iterable[str], size: int, seed: int) -> dict[str, list[str]]:
    """Per area of :data:`AREAS`: a uniform sample of ``size`` of the area's mutants (stratified), each area
    drawn with its own stream of ``seed`` so one area's size does not move another's sample."""
    names = sorted(set(population))
    return {area: total_sample([n for n in names if area_of(n) == area], size, seed * 1000 + index + 1)
            for index, area in enumerate(AREAS)}


def wilson(successes: int, trials: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval for a binomial proportion (95 % for the default z);
    (0, 1) when nothing was tried.  Sound near 0 and 1, unlike the normal approximation."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    # At 0 and n successes the bounds are exactly 0 and 1; rounding must not move them.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return low, high


def read_equivalent(path: Path) -> dict[str, str]:
    """``name<TAB>reason`` lines (``#`` comments and blank lines skipped)."""
    if not path.exists():
        return {}
    out: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        name, tab, reason = line.partition("\t")
        if not tab or not reason.strip():
            raise ValueError(f"{path}:{number}: expected 'mutant name<TAB>reason'")
        out[name.strip()] = reason.strip()
    return out


class Verdicts:
    """The verdicts of the mutants ``chosen``: the tested ones by column, in drawing order; the untested and the
    skipped only counted.  One count for the sample's score and the per-module rows, so the two cannot differ."""

    COLUMNS = ("killed", "timeout", "survived", "no tests", "other")

    def __init__(self, codes: dict[str, int | None], chosen: list[str]) -> None:
        self.names: dict[str, list[str]] = {column: [] for column in self.COLUMNS}
        self.untested = self.skipped = 0
        for name in chosen:
            code = codes[name]
            if code is None:
                self.untested += 1
                continue
            status = STATUS.get(code, "other")
            if status == "skipped":
                self.skipped += 1
            else:
                self.names[status if status in self.names else "other"].append(name)
        self.killed = len(self.names["killed"]) + len(self.names["timeout"])  # a timeout is a kill (mutmut's own reading)
        # An unexplained verdict counts as not killed: it must not raise the score.
        not_killed = {*self.names["survived"], *self.names["no tests"], *self.names["other"]}
        self.not_killed = [n for n in chosen if n in not_killed]
        self.tested = self.killed + len(self.not_killed)


def summarize_sample(codes: dict[str, int | None], chosen: list[str], equivalent: dict[str, str],
                     wording: frozenset[str] = frozenset()) -> dict[str, object]:
    """The verdicts of a drawn sample and the score's Wilson interval: raw, without the survivors judged equivalent,
    and of the decisions (without those and the survivors that change only a reason's text, ``wording``)."""
    v = Verdicts(codes, chosen)
    judged = [n for n in v.not_killed if n in equivalent]
    worded = [n for n in v.not_killed if n in wording and n not in equivalent]
    score, interval = _scored(v.killed, v.tested)
    score_eq, interval_eq = _scored(v.killed, v.tested - len(judged))
    score_d, interval_d = _scored(v.killed, v.tested - len(judged) - len(worded))
    return {"sample": len(chosen), "tested": v.tested, "untested": v.untested, "skipped": v.skipped, "killed": v.killed,
            "survived": len(v.not_killed), "other": len(v.names["other"]), "score": score,
            "wilson95": interval, "equivalent": len(judged),
            "scoreWithoutEquivalent": score_eq, "wilson95WithoutEquivalent": interval_eq,
            "wordingOnly": len(worded), "scoreOfDecisions": score_d, "wilson95OfDecisions": interval_d,
            "survivors": [{"name": n, "equivalent": equivalent.get(n), "wordingOnly": n in worded} for n in v.not_killed]}


def _scored(killed: int, trials: int) -> tuple[float | None, list[float]]:
    """A score (None without trials) and its Wilson 95 % interval."""
    return (killed / trials if trials else None), list(wilson(killed, trials))


def summarize_total(workdir: Path, modules: list[str], size: int, seed: int, equivalent: dict[str, str],
                    wording: frozenset[str] = frozenset()) -> dict[str, object]:
    """The verdicts of the whole-model sample and the score's Wilson interval."""
    codes = all_mutants(workdir, modules)
    return {"population": len(codes), "modules": len(modules), "seed": seed,
            **summarize_sample(codes, total_sample(list(codes), size, seed), equivalent, wording)}


def pct(v: object) -> str:
    return "-" if v is None else f"{100 * float(v):.1f}%"  # type: ignore[arg-type]


def sample_lines(t: dict[str, object]) -> list[str]:
    interval, interval_eq, interval_d = t["wilson95"], t["wilson95WithoutEquivalent"], t["wilson95OfDecisions"]
    assert isinstance(interval, list) and isinstance(interval_eq, list) and isinstance(interval_d, list)
    low, high = interval
    low_eq, high_eq = interval_eq
    low_d, high_d = interval_d
    lines = [f"tested {t['tested']}, killed {t['killed']} (timeouts count as killed), survived {t['survived']}"
             f" (other verdicts {t['other']}, counted as survived), not yet tested {t['untested']}, skipped {t['skipped']}",
             f"score {pct(t['score'])}, Wilson 95% interval [{pct(low)}, {pct(high)}]",
             f"without the {t['equivalent']} survivor(s) judged equivalent: {pct(t['scoreWithoutEquivalent'])}, "
             f"Wilson 95% interval [{pct(low_eq)}, {pct(high_eq)}]",
             f"of the decisions (also without the {t['wordingOnly']} survivor(s) that change only a reason's text): "
             f"{pct(t['scoreOfDecisions'])}, Wilson 95% interval [{pct(low_d)}, {pct(high_d)}]"]
    for s in t["survivors"]:  # type: ignore[attr-defined]
        why = f"  (equivalent: {s['equivalent']})" if s["equivalent"] else "  (wording only)" if s["wordingOnly"] else ""
        lines.append(f"  survived: {s['name']}{why}")
    return lines


def total_text(t: dict[str, object]) -> str:
    lines = [f"uniform sample of {t['sample']} of {t['population']} mutants across {t['modules']} model/ modules (seed {t['seed']})",
             *sample_lines(t)]
    if t["untested"]:
        lines.append("the sample is not finished: run the same command again to test the rest (results are cached)")
    return "\n".join(lines)


def summarize(workdir: Path, modules: list[str], sample: int | None = None) -> list[dict[str, object]]:
    """Per module: the verdicts of the tested mutants (of the module's fixed sample, seed 0, if any)."""
    rows: list[dict[str, object]] = []
    for module in modules:
        every = module_mutants(workdir, module)
        chosen = total_sample(every, sample, 0) if sample is not None else sorted(every)
        v = Verdicts(every, chosen)
        counts = {column: len(v.names[column]) for column in Verdicts.COLUMNS}
        score = 100.0 * v.killed / v.tested if v.tested else 0.0
        rows.append({"module": f"model/{module}.py", "mutants": len(every), "chosen": len(chosen), "untested": v.untested, **counts,
                     "tested": v.tested, "score": round(score, 1),
                     "survivors": [n for n in v.not_killed if n not in v.names["other"]]})
    return rows
