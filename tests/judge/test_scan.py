"""The review scan (grader.judge.scan), read on source text alone: what it flags, and that
nothing a file holds can stop it."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.judge.scan import HIDES_NAME, scan_source

KIT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("source", [
    # a reference readable in another checkout, loaded by a path built at run time
    'import importlib.util, os\np = os.sep.join(["", "srv", "kit", "solu" + "tions", "ex01_windows.py"])\n'
    'spec = importlib.util.spec_from_file_location("r", p)\n',
    "from importlib.machinery import SourceFileLoader\n",
    "import runpy\nrunpy.run_path('/srv/x.py')\n",
    "import marshal\n",
    "import types\nf = types.FunctionType(code, {})\n",
    # the same under other names (an independent tester's seven, 2026-12-04)
    "import builtins\nbuiltins.exec(open(P).read(), globals())\n",
    "from builtins import exec as run\nrun(open(P).read(), globals())\n",
    "run = exec\nrun(open(P).read(), globals())\n",
    "import importlib.util\nu = importlib.util\nspec = getattr(u, 'spec_' + 'from_file_location')('r', P)\n",
    "import importlib.machinery\ngetattr(importlib.machinery, 'SourceFileLoader')('r', P).load_module()\n",
    "import os\nos.sys.path.insert(0, '/tmp/work')\nfrom copied_reference import *\n",
    "import importlib\nrp = getattr(importlib, 'import_module')('run' + 'py')\ngetattr(rp, 'run_' + 'path')(P)\n",
])
def test_loading_code_from_a_path_is_flagged(source):
    assert scan_source(source, "ex01_windows.py")


@pytest.mark.parametrize("source", [
    "x = " + " + ".join(["1"] * 600) + "\n",  # deeper than the visitor's recursion
    "x = " + "-" * 5000 + "1\n",  # deeper than the parser's
    "s = ''" + ".strip()" * 400 + "\n",
    "if x == 0:\n    pass\n" + "".join(f"elif x == {i}:\n    pass\n" for i in range(1, 600)),
])
def test_a_file_too_deep_to_read_is_flagged_never_raises(source):
    assert any("nested too deeply" in reason for reason in scan_source(source, "ex01_windows.py"))


def test_torch_and_re_names_are_not_taken_for_exec():
    assert scan_source("import re\nPAT = re.compile('a+')\ndef f(model):\n    model.eval()\n", "ex13_bpe.py") == []


def test_the_references_and_stubs_are_not_flagged():
    for folder in ("solutions", "exercises"):
        for path in sorted((KIT / folder).glob("ex*.py")):
            assert scan_source(path.read_text(encoding="utf-8"), path.name) == [], path


@pytest.mark.parametrize("source", [
    # a name spelt at run time, where ex02's rule reads names (grader.judge.uses)
    "import torch\nf = getattr(torch, 'soft' + 'max')\n",
    "import torch.nn.functional as F\nf = F.__dict__['soft' + 'max']\n",
    "import torch\nop = torch.ops.aten\nf = object.__getattribute__(op, '_soft' + 'max')\n",
    "import operator\nf = operator.attrgetter('nn.functional.' + 'soft' + 'max')\n",
    "import torch.nn.functional as F\nf = vars(F)['soft' + 'max']\n",
    "import functools, torch\nf = functools.reduce(getattr, ['nn', 'functional', 'soft' + 'max'], torch)\n",
    "import subprocess, sys\nsubprocess.run([sys.executable, '-c', PROGRAM])\n",
])
def test_names_hidden_from_ex02s_rule_are_flagged(source):
    assert any(HIDES_NAME in reason for reason in scan_source(source, "ex02_nll.py"))


def test_an_exercise_is_read_with_the_modules_of_its_own_it_imports(tmp_path):
    """A helper beside ex02 hides a name; another exercise's file it imports is read as ex02's
    too (its code runs in ex02's worker), and a helper nobody imports is not."""
    from grader.judge.scan import scan_folder

    (tmp_path / "ex02_nll.py").write_text("from nethelp import lse\nimport ex01_windows\n", encoding="utf-8")
    (tmp_path / "nethelp.py").write_text("import deeper\n", encoding="utf-8")
    (tmp_path / "deeper.py").write_text("import torch.nn.functional as F\nK = vars(F)['soft' + 'max']\n",
                                        encoding="utf-8")
    (tmp_path / "ex01_windows.py").write_text("import torch\ng = getattr(torch._C, 'x' + 'y')\n", encoding="utf-8")
    (tmp_path / "unused.py").write_text("import gc\n", encoding="utf-8")
    reviews = scan_folder(tmp_path, {"ex01": "ex01_windows", "ex02": "ex02_nll"})
    assert any(r.startswith("deeper.py:2:") and HIDES_NAME in r for r in reviews["ex02"]), reviews
    assert any(r.startswith("ex01_windows.py:2:") and HIDES_NAME in r for r in reviews["ex02"]), reviews
    assert reviews["ex01"] and not any(HIDES_NAME in r for r in reviews["ex01"])
    assert not any("unused.py" in r for v in reviews.values() for r in v)


def test_torchs_dispatch_switches_are_no_review_matter():
    """Popping torch's dispatch modes takes nothing off: ex02's rule is read from the source,
    not watched while the code runs, and a file naming them is not flagged for it."""
    source = "from torch.utils._python_dispatch import _pop_mode_temporarily\nimport torch\nx = torch._C._len_torch_dispatch_stack()\n"
    assert scan_source(source, "ex02_nll.py") == []
