"""Every public function goes through the one dispatch (coverage --dispatch)."""

import numpy as np

import difflab as dl
from difflab.coverage import dispatch, main
from difflab.tensor_arguments import no_grad_result


def test_no_public_function_bypasses_the_dispatch(capsys):
    assert dispatch.bypassing() == []
    assert main(["--dispatch"]) == 0
    assert "every public function goes through the dispatch" in capsys.readouterr().out


def test_a_function_computing_on_raw_arrays_is_listed(monkeypatch, capsys):
    monkeypatch.setattr(dl.Tensor, "isinf", lambda self: no_grad_result(np.isinf(self.array)))
    left = dispatch.bypassing()
    assert "Tensor.isinf: a result is a constant of its traced graph (it computes on raw " \
           "arrays, outside engine.apply)" in left
    assert any(x.startswith("dl.isinf:") for x in left)  # (dl.isinf calls the method)
    assert main(["--dispatch"]) == 1
    assert "does not go through engine.apply" in capsys.readouterr().out


def test_a_new_public_function_without_an_entry_is_listed(monkeypatch):
    monkeypatch.setattr(dl, "shuffle_rows", lambda x, seed, axis: x[::-1], raising=False)
    assert "dl.shuffle_rows: no entry in the table of sample inputs" in dispatch.bypassing()
