"""ex02's rule read from the source (grader.judge.uses, grader.judge.source): every way of
writing a forbidden API is found, with its file and line, in the function that reaches it;
honest code that only looks alike is not; a name built at run time is a review flag."""

from __future__ import annotations

import linecache
import textwrap
import types

import pytest

from grader.judge.scan import HIDES_NAME, scan_files
from grader.judge.source import SubmissionSource
from grader.judge.uses import reached
from grader.per_exercise.ex02.checks import forbidden
from tests.judge.inprocess import COURSE

HAND = "    z = torch.as_tensor(logits, dtype=torch.float32)\n    m = z.max(dim=-1, keepdim=True).values\n" \
       "    e = torch.exp(z - m)\n    return e / e.sum(dim=-1, keepdim=True)\n"


def _uses(code: str, function: str = "stable_softmax", files: dict[str, str] | None = None):
    source = SubmissionSource({"ex02_nll.py": textwrap.dedent(code), **(files or {})}, "ex02_nll.py")
    return reached(source, function, forbidden)


@pytest.mark.parametrize("code", [
    "import torch.nn.functional as F\ndef stable_softmax(logits):\n    return F.softmax(logits, dim=-1)\n",
    "def stable_softmax(logits):\n    return logits.softmax(-1)\n",
    "from torch.nn.functional import softmax as sm\ndef stable_softmax(logits):\n    return sm(logits, -1)\n",
    "from torch.nn.functional import *\ndef stable_softmax(logits):\n    return softmax(logits, -1)\n",
    "import torch\n_sm = torch.softmax\ndef stable_softmax(logits):\n    return _sm(logits, -1)\n",
    "import torch\nclass _K:\n    def run(self, x):\n        return torch.special.softmax(x, -1)\n"
    "def stable_softmax(logits):\n    return _K().run(logits)\n",
    "import torch\ntorch.Tensor.exp2 = torch.Tensor.softmax\ndef stable_softmax(logits):\n    return logits.exp2(-1)\n",
    "import torch\ndef stable_softmax(logits, f=torch.nn.Softmax(dim=-1)):\n    return f(logits)\n",
    # a string that spells the name where a name is looked up
    "import torch\ndef stable_softmax(logits):\n    return getattr(torch, 'softmax')(logits, -1)\n",
    "import torch.nn.functional as F\ndef stable_softmax(logits):\n    return vars(F)['softmax'](logits, -1)\n",
    "import torch\ndef stable_softmax(logits):\n    return torch._C._get_operation_overload('aten::_softmax', '')\n",
    # code in a string, run by exec or by another interpreter
    "import torch\ndef stable_softmax(logits):\n    out = {}\n    exec('y = torch.softmax(x, -1)', {'torch': torch, 'x': logits}, out)\n"
    "    return out['y']\n",
    "import subprocess, sys\nCHILD = 'import torch, sys\\nprint(torch.log_softmax(torch.zeros(3), -1))'\n"
    "def stable_softmax(logits):\n    return subprocess.run([sys.executable, '-c', CHILD])\n",
    # the kernels that do a softmax or a log-sum-exp inside something else
    "import torch\ndef stable_softmax(logits):\n    return torch.nn.functional.scaled_dot_product_attention(logits, logits, logits)\n",
    "import torch\ndef stable_softmax(logits):\n    return torch.exp(logits - torch.logcumsumexp(logits, dim=-1)[..., -1:])\n",
    "import torch\ndef stable_softmax(logits):\n    return torch._masked_softmax(logits, logits > 1e9, -1, 0)\n",
    "import torch\ndef stable_softmax(logits):\n    return torch.sparse.softmax(logits.to_sparse(), dim=-1).to_dense()\n",
    "import torch\nK = torch._C.DispatchKey.CPU\ndef stable_softmax(logits):\n"
    "    return torch.ops.aten._softmax.default._op_dk(K, logits, -1, False)\n",
    "import torch\ndef stable_softmax(logits):\n    return torch.distributions.Categorical(logits=logits).probs\n",
])
def test_every_way_of_writing_a_forbidden_api_is_found(code):
    uses = _uses(code)
    assert uses and all(u.file == "ex02_nll.py" and u.line > 0 for u in uses), uses


@pytest.mark.parametrize("code", [
    "import torch\ndef stable_softmax(logits):\n    '''softmax over the last dim, like torch.softmax but by hand'''\n"
    "    softmax = torch.exp(logits - logits.max(-1, keepdim=True).values)\n    return softmax / softmax.sum(-1, keepdim=True)\n",
    "import torch\ndef softmax(z):\n    e = torch.exp(z - z.max(-1, keepdim=True).values)\n    return e / e.sum(-1, keepdim=True)\n"
    "def stable_softmax(logits):\n    return softmax(logits)\n",
    "import torch\nclass S:\n    def softmax(self, z):\n        return torch.exp(z) / torch.exp(z).sum()\n"
    "    def __call__(self, z):\n        return self.softmax(z)\ndef stable_softmax(logits):\n    return S()(logits)\n",
    "def stable_softmax(logits):\n    if logits is None:\n        raise ValueError('softmax needs a tensor')\n"
    "    print('softmax')\n    cache = {}\n    cache['softmax'] = logits\n    return cache['softmax']\n",
])
def test_honest_code_that_looks_alike_is_not_a_use(code):
    assert _uses(code) == []


def test_the_references_and_stubs_use_nothing_forbidden():
    for folder in (COURSE.solutions_dir, COURSE.exercises_dir):
        module = types.ModuleType("ex02_nll")
        module.__file__ = str(folder / "ex02_nll.py")
        source = SubmissionSource.of_module(module)
        assert source.main == "ex02_nll.py"
        for function in ("stable_softmax", "nll", "masked_mean_nll"):
            assert reached(source, function, forbidden) == [], (folder, function)


def test_a_use_is_charged_to_the_functions_that_reach_it_with_the_path():
    code = ("import torch\nimport torch.nn.functional as F\n\n\ndef stable_softmax(logits):\n"
            "    return F.softmax(logits, dim=-1)\n\n\ndef nll(logits, label):\n"
            "    return float(-stable_softmax(torch.as_tensor(logits))[label].log())\n\n\n"
            "def masked_mean_nll(logits, labels, ignore_index=-100):\n" + HAND)
    (use,) = _uses(code, "nll")
    assert (use.where, use.written, use.via) == ("ex02_nll.py:6", "F.softmax", ("stable_softmax",))
    assert _uses(code, "masked_mean_nll") == []


@pytest.mark.parametrize("reach", [
    "from nethelp import lse\n", "import nethelp\nlse = nethelp.lse\n", "import nethelp as h\nlse = h.lse\n",
    "import importlib\nlse = importlib.import_module('nethelp').lse\n", "from nethelp import *\n",
])
def test_a_use_in_the_submissions_own_module_is_found_through_the_import(reach):
    helper = "import torch\n\n\ndef lse(z):\n    return torch.logsumexp(z, -1)\n\n\ndef unused(z):\n    return z\n"
    code = reach + "import torch\n\n\ndef nll(logits, label):\n    z = torch.as_tensor(logits)\n" \
                   "    return float(lse(z) - z[label])\n"
    (use,) = _uses(code, "nll", files={"nethelp.py": helper})
    assert use.where == "nethelp.py:5" and use.written == "torch.logsumexp"


def test_a_name_of_a_helper_that_uses_nothing_forbidden_is_not_charged():
    helper = "import torch\n\n\ndef lse(z):\n    m = z.max()\n    return m + torch.log(torch.exp(z - m).sum())\n\n\n" \
             "def other(z):\n    return torch.softmax(z, -1)\n"
    code = "import nethelp\n\n\ndef nll(logits, label):\n    return float(nethelp.lse(logits) - logits[label])\n"
    assert _uses(code, "nll", files={"nethelp.py": helper}) == []


def test_a_name_built_at_run_time_is_a_review_flag_not_a_use():
    code = "import torch\ndef stable_softmax(logits):\n    return getattr(torch, 'soft' + 'max')(logits, -1)\n"
    assert _uses(code) == []
    reviews = scan_files({"ex02_nll.py": code.encode()}, {"ex02": "ex02_nll"})
    assert any(r.startswith("ex02_nll.py:3:") and HIDES_NAME in r for r in reviews["ex02"]), reviews


def test_a_notebooks_cells_are_read_as_one_module():
    """A function defined in one cell reaches an alias bound in another cell of the kernel; a
    forbidden name at the top level of a third cell is not charged to it."""
    cells = {"<cell-1>": "import torch\n_sm = torch.softmax\n",
             "<cell-2>": "def stable_softmax(logits):\n    return _sm(logits, -1)\n",
             "<cell-3>": "torch.log_softmax(torch.zeros(2), -1)\n"}
    namespace = types.ModuleType("__main__")
    try:
        for name, text in cells.items():
            linecache.cache[name] = (len(text), None, text.splitlines(True), name)
            exec(compile(text, name, "exec"), vars(namespace))
        source = SubmissionSource.of_namespace(namespace)
        assert set(cells) <= set(source.files) and source.main in cells
        (use,) = reached(source, "stable_softmax", forbidden)
        assert (use.where, use.written, use.via) == ("<cell-1>:2", "torch.softmax", ("_sm",))
    finally:
        for name in cells:
            linecache.cache.pop(name, None)
