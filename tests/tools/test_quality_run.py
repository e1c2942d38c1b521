"""quality/run's whole-model sample (issue 20 part 5, issue 43 item 5): seeded uniform sampling, the areas,
the Wilson interval, and the counting of verdicts without running mutmut; and the driver itself on a tiny
sample (slow): it mutates the files the tests import, prints its seed, and fails when it tested fewer
mutants than asked."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "quality" / "run"


def _load() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("quality_run", str(SCRIPT))
    spec = importlib.util.spec_from_loader("quality_run", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


Q = _load()


@pytest.mark.parametrize(("k", "n", "low", "high"), [
    (95, 100, 0.8882, 0.9785),  # the textbook Wilson interval (e.g. Newcombe 1998, method 3)
    (0, 10, 0.0, 0.2775),
    (10, 10, 0.7225, 1.0),
    (930, 1000, 0.9125, 0.9442),
])
def test_wilson_interval_matches_reference_values(k: int, n: int, low: float, high: float) -> None:
    lo, hi = Q.wilson(k, n)
    assert lo == pytest.approx(low, abs=5e-4) and hi == pytest.approx(high, abs=5e-4)
    assert lo <= k / n <= hi


def test_wilson_without_trials_says_nothing() -> None:
    assert Q.wilson(0, 0) == (0.0, 1.0)


def test_total_sample_is_seeded_and_ignores_input_order() -> None:
    names = [f"sessionspec.model.m.x_f__mutmut_{i}" for i in range(500)]
    a = Q.total_sample(names, 50, 7)
    assert a == Q.total_sample(list(reversed(names)), 50, 7) and len(set(a)) == 50 and set(a) <= set(names)
    assert a != Q.total_sample(names, 50, 8)
    assert Q.total_sample(names[:10], 50, 7) == sorted(names[:10])


def test_total_sample_weighs_modules_by_their_size() -> None:
    """Uniform over all mutants: a module with 10 % of them gets about 10 % of the sample."""
    names = [f"sessionspec.model.big.x__mutmut_{i}" for i in range(900)] + [f"sessionspec.model.small.x__mutmut_{i}" for i in range(100)]
    shares = [sum(n.startswith("sessionspec.model.small.") for n in Q.total_sample(names, 200, seed)) / 200 for seed in range(60)]
    assert 0.09 < sum(shares) / len(shares) < 0.11


def _workdir(tmp_path: Path, codes: dict[str, dict[str, int | None]]) -> Path:
    meta = tmp_path / "mutants" / "sessionspec" / "model"
    for module, by_key in codes.items():
        (meta / f"{module}.py.meta").parent.mkdir(parents=True, exist_ok=True)
        (meta / f"{module}.py.meta").write_text(json.dumps({"exit_code_by_key": by_key}), encoding="utf-8")
    return tmp_path


def test_summarize_total_counts_verdicts_and_equivalents(tmp_path: Path) -> None:
    codes: dict[str, dict[str, int | None]] = {
        "a": {"sessionspec.model.a.x_f__mutmut_1": 1, "sessionspec.model.a.x_f__mutmut_2": 0, "sessionspec.model.a.x_f__mutmut_3": 36, "sessionspec.model.a.x_f__mutmut_4": None},
        "b": {"sessionspec.model.b.x_g__mutmut_1": 34, "sessionspec.model.b.x_g__mutmut_2": 99, "sessionspec.model.b.x_g__mutmut_3": 33, "sessionspec.model.b.x_g__mutmut_4": 3},
    }
    workdir = _workdir(tmp_path, codes)
    t = Q.summarize_total(workdir, ["a", "b"], 100, 0, {"sessionspec.model.a.x_f__mutmut_2": "same result"})
    # killed: codes 1, 36 (timeout), 3; survived: 0, 99 (unknown verdict counts against), 33 (no tests);
    # untested: None; skipped (34) leaves the sample's denominator.
    assert (t["population"], t["sample"], t["tested"], t["killed"], t["survived"], t["untested"], t["skipped"]) == (8, 8, 6, 3, 3, 1, 1)
    assert t["score"] == pytest.approx(0.5) and t["scoreWithoutEquivalent"] == pytest.approx(3 / 5)
    assert t["wilson95"] == list(Q.wilson(3, 6)) and t["wilson95WithoutEquivalent"] == list(Q.wilson(3, 5))
    assert {s["name"]: s["equivalent"] for s in t["survivors"]} == {
        "sessionspec.model.a.x_f__mutmut_2": "same result", "sessionspec.model.b.x_g__mutmut_2": None, "sessionspec.model.b.x_g__mutmut_3": None}
    text = Q.total_text(t)
    assert "Wilson 95% interval" in text and "not yet tested 1" in text and "(equivalent: same result)" in text
    # A survivor that changes only a reason's text leaves the score of the decisions, not the raw one.
    w = Q.summarize_total(workdir, ["a", "b"], 100, 0, {"sessionspec.model.a.x_f__mutmut_2": "same result"},
                          frozenset({"sessionspec.model.b.x_g__mutmut_2"}))
    assert w["score"] == t["score"] and w["scoreWithoutEquivalent"] == t["scoreWithoutEquivalent"]
    assert w["wordingOnly"] == 1 and w["scoreOfDecisions"] == pytest.approx(3 / 4) and w["wilson95OfDecisions"] == list(Q.wilson(3, 4))
    assert "(wording only)" in Q.total_text(w) and "of the decisions (also without the 1 survivor(s)" in Q.total_text(w)


# A mutated module as mutmut 3 writes it: the original as x_<f>__mutmut_orig beside each mutant x_<f>__mutmut_<n>.
_MUTATED = """
def x__veto__mutmut_orig(rule, event, why):
    return Rejected(rule=rule, seq=event.seq, reason=why)

def x__veto__mutmut_1(rule, event, why):
    return Rejected(rule=rule, seq=event.seq, reason=None)

def x__loud__mutmut_orig(event, why):
    if why:
        return Rejected(rule="A-1", seq=event.seq, reason=why)
    return None

def x_check__mutmut_orig(event, n):
    if n > 2:
        return _veto("CMP-10", event, f"range splits {n} pairs")
    return Rejected(rule="CMP-9", seq=event.seq, reason="too short")

def x_check__mutmut_1(event, n):
    if n > 2:
        return _veto("CMP-10", event, f"RANGE SPLITS {n + 1} PAIRS")
    return Rejected(rule="CMP-9", seq=event.seq, reason="too short")

def x_check__mutmut_2(event, n):
    if n > 2:
        return _veto("CMP-10", event, f"range splits {n} pairs")
    return Rejected(rule="CMP-9", seq=event.seq, reason="XXtoo shortXX")

def x_check__mutmut_3(event, n):
    if n > 2:
        return _veto("XXCMP-10XX", event, f"range splits {n} pairs")
    return Rejected(rule="CMP-9", seq=event.seq, reason="too short")

def x_check__mutmut_4(event, n):
    if n > 2:
        return _veto("CMP-10", event, None)
    return Rejected(rule="CMP-9", seq=event.seq, reason="too short")

def x_check__mutmut_5(event, n):
    if n >= 2:
        return _veto("CMP-10", event, f"range splits {n} pairs")
    return Rejected(rule="CMP-9", seq=event.seq, reason="too short")

def x_shout__mutmut_orig(event):
    return _loud(event, "says")

def x_shout__mutmut_1(event):
    return _loud(event, "SAYS")

def x_keys__mutmut_orig(shadowed):
    return {"shadowedRange": {"start": shadowed}}

def x_keys__mutmut_1(shadowed):
    return {"SHADOWEDRANGE": {"start": shadowed}}
"""


def test_a_survivor_that_changes_only_a_reason_text_is_set_apart(tmp_path: Path) -> None:
    """Reason text is the value of reason= and a helper's argument its body uses only there; nothing else is."""
    module = tmp_path / "mutants" / "sessionspec" / "model" / "compaction" / "m.py"
    module.parent.mkdir(parents=True)
    module.write_text(_MUTATED, encoding="utf-8")
    names = [f"sessionspec.model.compaction.m.x_check__mutmut_{i}" for i in range(1, 6)]
    names += [f"sessionspec.model.compaction.m.x_{f}__mutmut_1" for f in ("_veto", "shout", "keys")]
    assert Q.wording_only_mutants(tmp_path, names) == {
        "sessionspec.model.compaction.m.x_check__mutmut_1",  # the helper's reason argument, an f-string's number included
        "sessionspec.model.compaction.m.x_check__mutmut_2",  # a reason= literal
    }  # not: a rule ID, a None reason (the Rejected contract), a comparison, a helper that also branches on its text,
    # the helper's own mutant, a written key


def test_the_rows_per_module_count_the_verdicts_as_the_sample_does(tmp_path: Path) -> None:
    """One count serves both reports: per module, killed + timeout over tested is the sample's score of that module."""
    codes: dict[str, dict[str, int | None]] = {
        "a": {"sessionspec.model.a.x_f__mutmut_1": 1, "sessionspec.model.a.x_f__mutmut_2": 0, "sessionspec.model.a.x_f__mutmut_3": 36, "sessionspec.model.a.x_f__mutmut_4": None},
        "b": {"sessionspec.model.b.x_g__mutmut_1": 34, "sessionspec.model.b.x_g__mutmut_2": 99, "sessionspec.model.b.x_g__mutmut_3": 33, "sessionspec.model.b.x_g__mutmut_4": 3},
    }
    rows = {r["module"]: r for r in Q.summarize(_workdir(tmp_path, codes), ["a", "b"])}
    a, b = rows["model/a.py"], rows["model/b.py"]
    # a: killed 1, timeout 36, survived 0, untested None.  b: skipped 34 (out), other 99, no tests 33, killed 3.
    assert (a["killed"], a["timeout"], a["survived"], a["tested"], a["untested"], a["score"]) == (1, 1, 1, 3, 1, 66.7)
    assert (b["killed"], b["other"], b["no tests"], b["tested"], b["score"]) == (1, 1, 1, 3, 33.3)
    assert a["survivors"] == ["sessionspec.model.a.x_f__mutmut_2"] and b["survivors"] == ["sessionspec.model.b.x_g__mutmut_3"]
    for module, row in (("a", a), ("b", b)):
        alone = Q.summarize_sample(codes[module], sorted(codes[module]), {})
        assert (alone["tested"], alone["killed"]) == (row["tested"], row["killed"] + row["timeout"])


def test_equivalent_file_needs_a_reason(tmp_path: Path) -> None:
    good = tmp_path / "eq.tsv"
    good.write_text("# comment\n\nsessionspec.model.a.x_f__mutmut_2\tthe same value either way\n", encoding="utf-8")
    assert Q.read_equivalent(good) == {"sessionspec.model.a.x_f__mutmut_2": "the same value either way"}
    bad = tmp_path / "bad.tsv"
    bad.write_text("sessionspec.model.a.x_f__mutmut_2\n", encoding="utf-8")
    with pytest.raises(ValueError, match="bad.tsv:1"):
        Q.read_equivalent(bad)


def test_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert Q.main(["--sample-total", "0"]) == 2
    assert Q.main(["--sample-total", "5", "--sample", "3"]) == 2
    assert "--sample-total" in capsys.readouterr().err


def test_the_population_is_every_module_of_model_packages_included() -> None:
    """Issue 29: a whole-model sample draws from model/compaction/ and model/loop/ too."""
    root = SCRIPT.parents[1]
    modules = Q.model_modules(root)
    assert {"surface", "compaction/region", "loop/turn", "derive"} <= set(modules)
    assert not any(m.endswith("__init__") for m in modules)
    assert len(modules) == sum(1 for p in (root / "model").rglob("*.py") if p.name != "__init__.py")


def test_the_mutation_profile_is_registered_before_the_conftest_loads_a_profile(tmp_path: Path) -> None:
    tests = tmp_path / "tests"
    tests.mkdir()
    original = (SCRIPT.parents[1] / "tests" / "conftest.py").read_text(encoding="utf-8")
    (tests / "conftest.py").write_text(original, encoding="utf-8")
    Q.install_mutation_profile(tmp_path, 5)
    Q.install_mutation_profile(tmp_path, 8)  # idempotent: one registration, the latest size
    text = (tests / "conftest.py").read_text(encoding="utf-8")
    assert text.count("register_profile('mutation'") == 1 and "max_examples=8" in text
    assert text.index("register_profile('mutation'") < text.index("settings.load_profile(")
    assert text.replace(Q.MUTATION_PROFILE.replace("MAX", "8"), "") == original


def test_areas_follow_the_module_paths() -> None:
    """Issue 43: the per-area scores are of loop/, compaction/, prune, meter and header; a method's mutant
    (mutmut's ``xǁClassǁmethod`` name) belongs to its module's area."""
    assert Q.area_of("sessionspec.model.loop.turn.x_drain_steering__mutmut_3") == "loop/"
    assert Q.area_of("sessionspec.model.compaction.policy.x_compact_spec__mutmut_1") == "compaction/"
    assert Q.area_of("sessionspec.model.meter.xǁ_Assemblerǁfeed__mutmut_52") == "meter"
    assert Q.area_of("sessionspec.model.prune.x_prune_content__mutmut_9") == "prune"
    assert Q.area_of("sessionspec.model.header.x_canonical__mutmut_2") == "header"
    assert Q.area_of("sessionspec.model.surface.x_fold_surface__mutmut_2") == "other"
    assert Q.area_of("sessionspec.model.loop.x_f__mutmut_1") == "other"  # a module named loop is not the package


def test_area_samples_are_uniform_within_each_area_and_seeded() -> None:
    names = ([f"sessionspec.model.loop.turn.x_f__mutmut_{i}" for i in range(300)]
             + [f"sessionspec.model.meter.x_g__mutmut_{i}" for i in range(20)]
             + [f"sessionspec.model.surface.x_h__mutmut_{i}" for i in range(500)])
    samples = Q.area_samples(names, 50, 3)
    assert set(samples) == set(Q.AREAS)
    assert len(samples["loop/"]) == 50 and all(Q.area_of(n) == "loop/" for n in samples["loop/"])
    assert len(samples["meter"]) == 20  # the whole area when it is smaller than the sample
    assert samples["header"] == [] and samples == Q.area_samples(list(reversed(names)), 50, 3)
    assert samples["loop/"] != Q.area_samples(names, 50, 4)["loop/"]


def test_the_copy_lifts_stacked_registrations_and_leaves_other_decorators() -> None:
    """mutmut 3 skips decorated functions: every ``@implements``/``@decides`` stack (issue 44's moved definitions
    carry both) becomes calls after the function, innermost first; a function decorated otherwise is left alone."""
    source = ('@decides("A", "B")\n@implements("A")\ndef f(x: int) -> int:\n    return x\n\n\n'
              '@cache\ndef g() -> None:\n    pass\n')
    lifted = Q.lift_implements(source)
    assert lifted.startswith('def f(x: int) -> int:\n    return x\nimplements("A")(f)\ndecides("A", "B")(f)\n')
    assert "@cache\ndef g() -> None:" in lifted and "@" not in lifted.split("@cache")[0]


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=cwd, capture_output=True, text=True, timeout=1800)


@pytest.mark.slow
def test_the_driver_runs_a_tiny_sample_at_this_tree(tmp_path: Path) -> None:
    """Issue 43 item 5: at this tree, from a fresh scratch copy, the driver tests the sample it draws with
    mutants the tests actually reach (the mutated files are the imported ones: killed, not 'no tests'),
    prints the seed it drew, and exits 1 when it tested fewer mutants than asked."""
    pytest.importorskip("mutmut", reason="mutmut is the optional extra sessionspec[quality] (.ci/run installs it)")
    work = tmp_path / "work"
    common = ("--workdir", str(work), "--test-files", "test_rejected.py", "rejected")
    first = _run("--sample-total", "3", "--seed", "11", "--limit", "1", *common, cwd=tmp_path)
    assert first.returncode == 1, first.stdout + first.stderr
    assert "seed 11" in first.stdout and "fewer were tested than asked" in first.stderr
    assert "function(s) of sessionspec/model/ called by the tests" in first.stdout
    done = _run("--sample-total", "3", "--seed", "11", *common, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "tested 3, killed 3" in done.stdout, done.stdout
    fresh = _run("--report-only", "--sample-total", "2", *common, cwd=tmp_path)
    assert "(drawn fresh; --seed" in fresh.stdout, fresh.stdout


@pytest.mark.slow
def test_the_driver_fails_when_no_test_reaches_the_model(tmp_path: Path) -> None:
    """Issue 43: a run whose statistics step finds no test of the mutated code tests nothing and says so
    with exit 1 (it used to print 'tested 0 ... not yet tested N' and exit 0)."""
    pytest.importorskip("mutmut", reason="mutmut is the optional extra sessionspec[quality] (.ci/run installs it)")
    run = _run("--workdir", str(tmp_path / "work"), "--sample-total", "2", "--seed", "1",
               "--test-files", "test_no_such_module.py", "rejected", cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "nothing can be tested" in run.stderr and "Wilson" not in run.stdout


def test_every_test_module_of_the_model_and_its_twins_runs_against_each_mutant() -> None:
    """The mutation score counts a mutant no selected test reaches as not killed (``no tests``): a test module of
    tests/model or tests/fast left out of ``[tool.mutmut]``'s ``python_files`` makes the score a measure of a stale
    list (issue 43: 27 of tests/model's modules, among them every decision test, were missing)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mutmut"]["pytest_add_cli_args"]
    selected = set(config[config.index("-o") + 1].removeprefix("python_files=").split())
    for folder in ("tests/model", "tests/fast"):
        missing = sorted(p.name for p in (ROOT / folder).glob("test_*.py") if p.name not in selected)
        assert missing == [], f"{folder}: {missing}"
