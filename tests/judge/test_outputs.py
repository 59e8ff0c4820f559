"""A point depends only on what the submission returned, or on the judge's reading of its
source, never on what a probe recorded while the code ran (a net, a call counter, a label log,
forward logs, hooks or modes): the checks of ex02, ex04, ex05, ex11 and ex12 judge outputs on
well-chosen inputs. Each test here is natural code a student writes, graded
in this process (tests.judge.inprocess): the score is what its outputs earn, and a diagnosis
names the part that failed."""

from __future__ import annotations

import pytest

from grader.judge.references import LiveReferences
from grader.judge.scan import HIDES_NAME, scan_files
from grader.model.course import check_points
from tests.judge.inprocess import COURSE, failed, grade, named, passed, submission


@pytest.fixture(scope="module")
def references():
    return LiveReferences(COURSE)  # slow answers (ex12's trainings) kept in the session's cache, for every module


# ------------------------------------------------------------------ ex02: the rule is read, not watched

USES_SOFTMAX = ("    return e / e.sum(dim=-1, keepdim=True)  # (..., V)", "    return torch.nn.functional.softmax(logits, dim=-1)")
EX02_SOLUTION = (COURSE.solutions_dir / COURSE.exercise("ex02").file).read_text(encoding="utf-8")
# the line of the solution USES_SOFTMAX replaces: where a finding must say the forbidden API is
SOFTMAX_LINE = EX02_SOLUTION[:EX02_SOLUTION.index(USES_SOFTMAX[0])].count("\n") + 1
# What once turned the worker's net off: popping torch's dispatch modes, replacing the probe's
# net. Nothing in the worker decides the rule any more, so it changes nothing.
NET_OFF = ("import torch\n", "import torch\nimport contextlib\n\n\ndef _noop(used):\n    return contextlib.nullcontext()\n\n\n"
           "try:\n    import grader.per_exercise.ex02.probes as _p\n    _p.forbidden_net = _noop\n"
           "    torch._C._pop_torch_dispatch_stack()\nexcept Exception:\n    pass\n")


def _points_but(exercise_id: str, failing: set[str]) -> int:
    """The exercise's points less those of the checks in `failing` (their @pytest.mark.points)."""
    marks = check_points(COURSE.unit(exercise_id) / "checks.py")
    assert failing <= set(marks), failing - set(marks)
    return COURSE.exercise(exercise_id).points - sum(marks[name] for name in failing)


def test_a_forbidden_api_costs_the_same_whatever_the_file_does_around_it(tmp_path, references):
    import grader.per_exercise.ex02.probes

    honest = grade("ex02", submission(tmp_path, "ex02", [USES_SOFTMAX], references), references)
    try:
        cheat = grade("ex02", submission(tmp_path, "ex02", [USES_SOFTMAX, NET_OFF], references), references)
    finally:
        vars(grader.per_exercise.ex02.probes).pop("forbidden_net", None)
    rule = {"test_forbidden_apis", "test_stable_softmax_random", "test_stable_softmax_large"}
    assert set(failed(honest)) == rule
    assert passed(cheat) == passed(honest) and cheat.score == honest.score == _points_but("ex02", rule), \
        (passed(honest), passed(cheat))
    (check,) = [c for c in honest.checks if c.name == "test_stable_softmax_random"]
    assert "torch.nn.functional.softmax" in check.finding.en and f".py:{SOFTMAX_LINE})" in check.finding.en, \
        check.finding.en


def test_a_forbidden_api_in_a_helper_fails_the_functions_that_reach_it(tmp_path, references):
    helper = {"nethelp.py": "import torch\n\n\ndef lse(z):\n    return torch.logsumexp(z, dim=-1)\n"}
    module = submission(tmp_path, "ex02", [("import torch\n", "import torch\nfrom nethelp import lse\n"),
                                           ("    return float(log_sum_exp - z[label])",
                                            "    return float(lse(z) - z[label])")], references, files=helper)
    result = grade("ex02", module, references)
    assert set(failed(result)) == {"test_forbidden_apis", "test_nll_course_example", "test_nll_random_and_large"}
    (check,) = [c for c in result.checks if c.name == "test_nll_course_example"]
    assert "nethelp.py:5" in check.finding.en and "torch.logsumexp" in check.finding.en, check.finding.en


def test_a_name_built_at_run_time_earns_what_its_outputs_earn_and_a_review_flag(tmp_path, references):
    hidden = ("    return torch.nn.functional.softmax(logits, dim=-1)",
              "    return getattr(torch.nn.functional, 'soft' + 'max')(logits, dim=-1)")
    module = submission(tmp_path, "ex02", [USES_SOFTMAX, hidden], references)
    assert grade("ex02", module, references).score == COURSE.exercise("ex02").points  # no forbidden name read
    reviews = scan_files({"ex02_nll.py": open(module.__file__, "rb").read()}, {"ex02": "ex02_nll"})
    assert any(HIDES_NAME in reason for reason in reviews["ex02"]), reviews


@pytest.mark.parametrize("value, diagnosis", [
    (0.64, None),  # P(A) = 0.6439 and the base-2 NLL 0.6351 both round to it: neither is named
    (0.6439, "probability_not_nll"),
    (0.6351, "log2_not_ln"),
])
def test_a_hand_value_is_diagnosed_only_when_no_other_slip_explains_it(tmp_path, references, value, diagnosis):
    module = submission(tmp_path, "ex02", [("HAND_NLL_LABEL_A = 0.4402", f"HAND_NLL_LABEL_A = {value}")], references)
    (check,) = grade("ex02", module, references, only={"test_hand_nll_label_a"}).checks
    assert not check.passed
    assert (check.finding.diagnosis or {}).get("id") == diagnosis
    shown = " ".join(str(x) for x in (check.finding.zh, check.finding.en, check.finding.expected,
                                      check.finding.diagnosis))
    assert "0.44" not in shown, shown


# ------------------------------------------------------------------ ex04: calls shown by the tokens

@pytest.mark.parametrize("edit, check", [
    (("    for _ in range(max_new_tokens):\n        idx_cond", "    model(idx)  # a warm-up call\n"
      "    for _ in range(max_new_tokens):\n        idx_cond"), "test_generate_shape_and_calls"),
    (("        logits = model(idx_cond)  # (B, t, V)\n",
      "        logits = model(idx_cond)  # (B, t, V)\n        logits = model(idx_cond)\n"), "test_generate_shape_and_calls"),
    (("    B, T = idx.shape\n    rows = []", "    B, T = idx.shape\n    model(idx)  # a full forward first\n    rows = []"),
     "test_prefix_logits_calls"),
])
def test_an_extra_model_call_changes_what_comes_back(tmp_path, references, edit, check):
    result = grade("ex04", submission(tmp_path, "ex04", [edit], references), references, only={check})
    assert failed(result) == [check]


# ------------------------------------------------------------------ ex05: the labels' use shown by an error

@pytest.mark.parametrize("flat, passes", [("labels.reshape(-1)", True), ("input_ids.view(B * T)", False)])
def test_a_trace_that_does_not_use_its_labels_fails(tmp_path, references, flat, passes):
    edits = [("    flat_labels = labels.view(B * T)  # (B*T,)\n    loss = lm_loss(logits, labels)  # ()",
              f"    flat_labels = {flat}  # (B*T,)\n    loss = lm_loss(logits, {flat.split('.')[0]})  # ()")]
    result = grade("ex05", submission(tmp_path, "ex05", edits, references), references,
                   only={"test_trace_shapes_other_sizes"})
    assert passed(result) == {"test_trace_shapes_other_sizes": passes}


# ------------------------------------------------------------------ ex11: modes and gradients shown by the numbers

def test_ex11_forgetting_eval_is_diagnosed(tmp_path, references):
    """The natural slip: the lesson's skeleton without model.eval()."""
    result = grade("ex11", submission(tmp_path, "ex11", [("    model.eval()\n", "")], references), references)
    assert failed(result) == ["test_eval_mode_during"] and named(result) == {"no_eval"}
    (check,) = [c for c in result.checks if not c.passed]
    assert check.finding.diagnosis["hint"] is not None


@pytest.mark.parametrize("name, edits, fails", [
    ("inference_mode", [("with torch.no_grad():", "with torch.inference_mode():")], []),
    ("its own cross-entropy of the logits", [(
        "logits, loss = model(x, y)  # (B, T, C), ()",
        "logits, _ = model(x, y)  # (B, T, C), ()\n"
        "                    loss = torch.nn.functional.cross_entropy(logits.view(-1, logits.shape[-1]), y.view(-1))")], []),
    ("gradients recorded", [("        with torch.no_grad():\n", "        if True:\n")], ["test_no_grad"]),
])
def test_ex11_each_way_of_writing_it_earns_what_its_numbers_show(tmp_path, references, name, edits, fails):
    result = grade("ex11", submission(tmp_path, "ex11", edits, references), references)
    assert failed(result) == fails, (name, [(c.name, c.finding and c.finding.en) for c in result.checks])


# ------------------------------------------------------------------ ex12: how it trained, shown by what it returns

@pytest.mark.parametrize("name, edits, fails", [
    ("zero_grad forgotten", [("        optimizer.zero_grad(set_to_none=True)\n", "")],
     {"test_gradients_cleared_every_step"}),
    ("zero_grad first, as many write it", [
        ("        logits, loss = model(xb, yb)  # (B, T, C), ()\n        optimizer.zero_grad(set_to_none=True)\n",
         "        optimizer.zero_grad()\n        logits, loss = model(xb, yb)  # (B, T, C), ()\n")], set()),
    ("left in eval mode after its own estimate", [
        ("            losses = estimate_loss(model, splits, block_size, batch_size, eval_iters)\n",
         "            model.eval()\n            losses = estimate_loss(model, splits, block_size, batch_size, eval_iters)\n")],
     {"test_modes"}),
])
def test_ex12_gradients_and_modes_are_judged_from_the_trained_tables(tmp_path, references, name, edits, fails):
    checks = {"test_gradients_cleared_every_step", "test_modes", "test_estimate_order_and_size"}
    result = grade("ex12", submission(tmp_path, "ex12", edits, references), references, only=checks)
    assert set(failed(result)) == fails, (name, [(c.name, c.finding and c.finding.en) for c in result.checks])


def test_a_notebooks_check_reads_the_cells_for_the_rule():
    """nbgrader's test cells run the same checks on the kernel's namespace: the rule is read from
    the cells the kernel ran (grader.notebook), as from a submission's files."""
    import linecache

    from grader.notebook import check_result

    source = EX02_SOLUTION.replace(USES_SOFTMAX[0], "    return torch.softmax(logits, -1)")
    cell = "<ipython-input-7-forbidden>"
    linecache.cache[cell] = (len(source), None, source.splitlines(True), cell)
    try:
        namespace = {"__name__": "__main__"}
        exec(compile(source, cell, "exec"), namespace)
        result = check_result("ex02", "test_stable_softmax_random", namespace, lang="en")
        assert not result.passed and f"torch.softmax ({cell}:{SOFTMAX_LINE})" in result.finding.en, result.finding
        assert check_result("ex02", "test_nll_course_example", namespace, lang="en").passed
    finally:
        linecache.cache.pop(cell, None)


def test_a_hidden_check_shows_the_forbidden_api_and_its_line(tmp_path, references):
    """The rule's words hold nothing but the student's own code: a student's view of a hidden
    check keeps them (the API, the file and the line), where other hidden failures say only that."""
    from grader.report.student_view import for_student

    module = submission(tmp_path, "ex02", [USES_SOFTMAX], references)
    (shown,) = for_student([grade("ex02", module, references, only={"test_stable_softmax_large"})])
    (check,) = shown.checks
    assert not check.public and "torch.nn.functional.softmax" in check.finding.en \
        and f".py:{SOFTMAX_LINE})" in check.finding.en, check.finding.en
