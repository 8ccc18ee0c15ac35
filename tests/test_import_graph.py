"""No import cycle anywhere in ``difflab/`` (docs/architecture.md, "Import layers").

The import graph counts every ``import`` statement of a module, also those
inside functions: a late import is still an edge, it only hides the cycle
until run time.  Imports under ``if TYPE_CHECKING:`` are left out (as in the
import-linter contracts): they name a class in annotations and never run, so
a mixin below ``Tensor`` may annotate its results as ``Tensor``.
import-linter's contracts (pyproject) say which way each layer may import;
this test says that no chain of imports leads back to where it started.

Run as a script it lists the cycles (``python tests/test_import_graph.py``).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

grimp = pytest.importorskip("grimp", reason="grimp comes with import-linter (the dev extra)")

ROOT = Path(__file__).resolve().parents[1]


def import_graph(package: str = "difflab", path: Path = ROOT) -> dict[str, set[str]]:
    """Each module of ``package`` (found under ``path``) and the modules of it it imports."""
    sys.path.insert(0, str(path))
    try:
        graph = grimp.build_graph(package, cache_dir=None, exclude_type_checking_imports=True)
    finally:
        sys.path.remove(str(path))
    return {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm,
    iterative): each is a set of modules that import one another in a circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, imported = work[-1]
            step = next(imported, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph[step]))))
                elif step in on_stack:
                    low[module] = min(low[module], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[module])
            if low[module] == index[module]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == module:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def describe(graph: dict[str, set[str]], found: list[list[str]]) -> str:
    """Each cycle with the imports inside it, for an assertion message."""
    lines = []
    for component in found:
        members = set(component)
        lines.append(f"cycle of {len(component)}: {', '.join(component)}")
        lines += [f"    {m} imports {', '.join(sorted(graph[m] & members))}"
                  for m in component]
    return "\n".join(lines)


def test_cycles_finds_a_circle_and_only_it():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_difflab_has_no_import_cycle():
    graph = import_graph()
    assert "difflab.tensor" in graph and "difflab.testing.fake_cupy" in graph
    found = cycles(graph)
    assert not found, describe(graph, found)


def test_tensor_methods_are_the_functions_themselves():
    """``x.gather`` is ``dl.gather`` (attached by difflab.functions, which tensor.py does not
    import): one place for the math, and no wrapper call in between."""
    import difflab as dl

    # (A primitive's faces, cumsum and cumprod among them, are generated from its registry
    # entry, the method and the function each: tests/core/test_core_registry.py checks them.)
    for name in ("gather", "sort", "argsort", "topk", "split",
                 "chunk", "index_select", "roll", "bmm", "baddbmm", "outer",
                 "histc", "multinomial"):
        assert vars(dl.Tensor)[name] is getattr(dl, name), name
    x = dl.tensor([[3.0, 1.0], [2.0, 5.0]])
    assert x.sort(1).values.tolist() == [[1.0, 3.0], [2.0, 5.0]]
    assert x.gather(1, dl.tensor([[1], [0]])).tolist() == [[1.0], [2.0]]
    assert x.masked_fill(x > 2, 0.0).tolist() == [[0.0, 1.0], [2.0, 0.0]]
    assert x.new_zeros(2).dtype == x.dtype
    with pytest.raises(TypeError):
        x.scatter_add(0, dl.tensor([[0, 1]]))  # src is required, as in PyTorch


def test_a_planted_cycle_is_found(tmp_path):
    """A late import inside a function counts: registry importing the tensor closes a
    circle, and the script (what CI would run) fails naming it."""
    shutil.copytree(ROOT / "difflab", tmp_path / "difflab",
                    ignore=shutil.ignore_patterns("__pycache__"))
    registry = tmp_path / "difflab" / "ops" / "registry.py"
    registry.write_text(registry.read_text() + "\n\ndef _late():\n    from difflab.tensor "
                        "import Tensor  # noqa\n    return Tensor\n")
    result = subprocess.run(  # a fresh process: this one has imported the real difflab
        [sys.executable, __file__, str(tmp_path)], capture_output=True, text=True,
        timeout=120, env={"PATH": "", "PYTHONPATH": str(tmp_path)}, cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "difflab.ops.registry imports" in result.stdout
    assert "difflab.tensor" in result.stdout.split("difflab.ops.registry imports")[1]


def main(argv: list[str]) -> int:
    """List the cycles of the difflab found under ``argv[0]`` (this checkout by default);
    exit status 1 when there is one."""
    graph = import_graph("difflab", Path(argv[0]) if argv else ROOT)
    found = cycles(graph)
    print(describe(graph, found) or "no import cycle in difflab/")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
