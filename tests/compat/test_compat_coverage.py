"""The PyTorch coverage table: generated from the code, and the docs page kept current."""

from pathlib import Path

import difflab as dl
from difflab import coverage

ROOT = Path(__file__).resolve().parents[2]


def test_the_docs_page_is_current():
    page = (ROOT / "docs" / "coverage.md").read_text(encoding="utf-8")
    assert page == coverage.markdown(), (
        "docs/coverage.md is out of date: run python -m difflab.coverage --write "
        "docs/coverage.md"
    )
    assert coverage.main(["--check", str(ROOT / "docs" / "coverage.md")]) == 0


def test_the_table_looks_names_up_in_the_code():
    reference = {"torch": {"Made up": ["tensor", "no_such_function"]},
                 "optim": {"Schedulers": ["lr_scheduler.StepLR", "lr_scheduler.Nope"]}}
    groups = coverage.table(reference)
    assert groups[0].provided == ["tensor"] and groups[0].missing == ["no_such_function"]
    assert groups[1].provided == ["lr_scheduler.StepLR"]
    assert groups[1].missing == ["lr_scheduler.Nope"]
    page = coverage.markdown(reference)
    assert "`no_such_function`" in page and "| `torch` | 1 | 2 |" in page


def test_every_claimed_name_exists_and_the_reference_is_well_formed():
    reference = coverage.load_reference()
    assert set(reference) == set(coverage.NAMESPACES)
    for group in coverage.table():
        obj = coverage.NAMESPACES[group.namespace][0]
        for name in group.provided:
            assert coverage.provides(obj, name)
        names = group.provided + group.missing
        assert len(names) == len(set(names)), f"{group.title} lists a name twice"
    assert "derivative" in coverage.extras()["torch"]  # difflab's own names are listed too
    assert hasattr(dl, "derivative")


def test_the_check_fails_on_a_stale_page(tmp_path, capsys):
    stale = tmp_path / "coverage.md"
    stale.write_text("# old\n", encoding="utf-8")
    assert coverage.main(["--check", str(stale)]) == 1
    assert "out of date" in capsys.readouterr().err


def test_every_reason_explains_something_missing():
    reasons = coverage.load_reasons()
    missing = {f"{g.namespace}.{name}" for g in coverage.table() for name in g.missing}
    absent_paths = {p for p in coverage.load_module_paths()
                    if not coverage.importable(coverage.difflab_path(p))}
    assert reasons and set(reasons) <= missing | absent_paths, (
        "a reason names something difflab now has: remove it from _reasons")
    page = coverage.markdown()
    for key, why in reasons.items():
        assert f"({why})" in page, key
