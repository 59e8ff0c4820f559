"""Checks for ex12: train_bigram (bigram lesson, "the 2.49 baseline", "the optimizer").

Two runs per subject, each cached inside the probe (grader/probes/ex12.py) and shared by
the checks that look at it: the lesson's run with the defaults (3000 steps, about 6 s on
one thread), and a 40-step run with non-default arguments that the structural checks
watch. What the file imports from ex08, ex09 and ex11 is replaced by the correct pieces
(the model instrumented), so an earlier bug is not charged twice; what the file itself
defines (its own estimate_loss, its own model class) is graded as written.

Required part: step 0 in [4.6, 4.9], final val <= 2.52, gradients cleared every step, the
modes, eval_iters batches per estimate. Reproduction part: the lesson's table to 4
decimals (only a loop that draws in the lesson's order gets it).
"""

import pytest

from grader.judge import Tol, assert_ok, diagnose, fail, probe, same
from grader.judge.derived import derived
from grader.model.lesson import LESSON_HISTORY

pytestmark = pytest.mark.exercise("ex12")

LESSON = [(row["step"], row["train"], row["val"]) for row in LESSON_HISTORY]  # (step, train, val)
STEP0_BAND = (4.6, 4.9)
FINAL_VAL_MAX = 2.52
FULL_STEPS = list(range(0, 3000, 300)) + [2999]


# ---- what the judge reads from the history train_bigram returned (plain data, unconverted) ----

def _well_formed(entry) -> bool:
    """An entry as the contract pins it: {'step': int, 'train': float, 'val': float}."""
    return (type(entry) is dict and type(entry.get("step")) is int and type(entry.get("train")) is float
            and type(entry.get("val")) is float)


def _entries(history) -> list:
    return history if type(history) in (list, tuple) else []


def rounded(history) -> list:
    """Each well-formed entry with its losses rounded to 4 decimals (as the lesson prints them);
    any other entry as the name of what it is."""
    return [{"step": e["step"], "train": round(e["train"], 4), "val": round(e["val"], 4)} if _well_formed(e)
            else {"malformed": _type_name(e)} for e in _entries(history)]


def band_facts(history) -> dict:
    """Step 0's losses and the last estimate's val loss."""
    rows = [e for e in _entries(history) if _well_formed(e)]
    if not rows:
        return {"step0_train": None, "step0_val": None, "final_val": None, "first_step": None}
    return {"first_step": rows[0]["step"], "step0_train": rows[0]["train"], "step0_val": rows[0]["val"],
            "final_val": rows[-1]["val"]}


def steps_of(history) -> list:
    return [e["step"] if _well_formed(e) else None for e in _entries(history)]


def _type_name(value) -> str:
    if type(value) is dict and set(value) == {"__unsupported__"}:
        return str(value["__unsupported__"])  # a type the worker could not send as plain data
    return "Tensor" if hasattr(value, "dtype") and hasattr(value, "shape") else type(value).__name__


def form_of(history) -> dict:
    """history's type and the form of its first entries (keys, and the type of each value)."""
    return {"type": _type_name(history),
            "entries": [{"entry": _type_name(e),
                         "keys": sorted(str(k) for k in e) if type(e) is dict else None,
                         "types": [_type_name(e.get(k)) for k in ("step", "train", "val")] if type(e) is dict else None}
                        for e in list(_entries(history))[:3]]}


BACKED_TOL = 0.03  # the last estimate (eval_iters batches) against the whole split: about 0.002 apart
ROW_TOL = 1e-3  # a row against the mean of the losses its estimate's forwards computed (rounded: 5e-5)
WEIGHT_TOL = 1e-4  # the lesson's run reproduced: the reference's predictions (log-probabilities), to float rounding
FULL_ITERS, EVAL_ITERS = 3000, 200  # train_bigram's defaults: the lesson's run


def training_facts(corpus_path):
    """From what the full run did (grader/probes/ex12.full_training): the returned model's mean
    loss over the whole train and val splits, computed here from its table (None for no such
    table); its backward passes and training forwards (gradients on); and the loss of each
    estimate forward given targets, in order, as numbers."""
    def facts(run):
        import torch
        import torch.nn.functional as F

        from grader.fixtures.corpus import lesson_splits

        train, val, vocab = lesson_splits(corpus_path)
        weight = run.get("weight")
        own = None
        if isinstance(weight, torch.Tensor) and tuple(weight.shape) == (vocab, vocab) \
                and weight.is_floating_point() and bool(torch.isfinite(weight).all()):
            table = weight.detach().to(torch.float32)
            with torch.no_grad():
                own = {name: float(F.cross_entropy(table[d[:-1]], d[1:])) for name, d in (("train", train), ("val", val))}
        losses = [float(v) for v in run.get("estimate_losses", []) if isinstance(v, torch.Tensor) and v.numel() == 1
                  and v.is_floating_point()]
        events = run.get("events")
        forwards = sum(e[1] for e in events if type(e) in (list, tuple) and len(e) == 2 and e[0] == "T"
                       and type(e[1]) is int) if type(events) in (list, tuple) else 0
        backwards = run.get("backwards")
        return {"own": own, "backwards": backwards if type(backwards) is int else 0, "training_forwards": forwards,
                "losses": losses}
    return facts


def estimate_means(losses: list, rows: int) -> list | None:
    """The mean train and val loss of each of `rows` estimates, from their forwards' losses in
    order (each estimate: its train batches, then its val batches, as many each); None when
    they do not split so (no estimate forward given targets, or a number that does not divide).

    >>> estimate_means([4.0, 4.2, 3.0, 3.2, 2.0, 2.2, 1.0, 1.2], 2)
    [{'train': 4.1, 'val': 3.1}, {'train': 2.1, 'val': 1.1}]
    """
    if rows <= 0 or not losses or len(losses) % (2 * rows):
        return None
    n = len(losses) // (2 * rows)
    means = [sum(losses[i:i + n]) / n for i in range(0, len(losses), n)]
    return [{"train": means[i], "val": means[i + 1]} for i in range(0, len(means), 2)]


def _next_char_log_probs(run):
    """What the returned model predicts: its table's rows as log-probabilities, float64 (a
    constant added to a row changes nothing); None for no floating 2-D table."""
    import torch

    weight = run.get("weight") if type(run) is dict else None
    if not isinstance(weight, torch.Tensor) or not weight.is_floating_point() or weight.dim() != 2:
        return None
    return torch.log_softmax(weight.detach().to(torch.float64), dim=-1)


def _require_trained(student, corpus_path, rows: list[dict], reference=None):
    """The history (`rows`: its well-formed rows, "train" and "val") must be the training's own:
    the model made FULL_ITERS training forwards and backward passes; every row is the mean of
    the losses its estimate's forwards computed (`model(x, y)`, as estimate_loss calls it); the
    last row is the returned model's losses over the whole splits, computed here from its
    table, within BACKED_TOL; and, with `reference` (the lesson's table reproduced), the
    returned model predicts what the reference training's does, within WEIGHT_TOL. A history
    no training produced (the lesson's table, or a table counted from the data, beside a
    model that made empty backward passes) fails."""
    label = "train_bigram(train_data, val_data, 65)"
    a_call = probe("ex12.full_training", corpus_path)
    got = assert_ok(derived(student, training_facts(corpus_path)).observe(a_call), label)
    if not isinstance(got, dict):
        got = {}
    own, last = got.get("own"), rows[-1] if rows else None
    done = min(got.get("backwards", 0), got.get("training_forwards", 0))
    estimates = estimate_means(got.get("losses") or [], len(rows))
    problem = None
    if done < FULL_ITERS:
        problem = (f"模型只做了 {got.get('training_forwards', 0)} 次训练前向、{got.get('backwards', 0)} 次反向传播（应为各 {FULL_ITERS}）",
                   f"the model made {got.get('training_forwards', 0)} training forwards and {got.get('backwards', 0)} "
                   f"backward passes ({FULL_ITERS} of each expected)")
    elif estimates is None:
        problem = ("history 的行对不上模型在估计时算出的 loss（估计应当用 estimate_loss，即 model(x, y)）",
                   "history's rows do not match the losses the model computed in its estimates "
                   "(estimate with estimate_loss, model(x, y))")
    elif type(own) is not dict or last is None or not all(abs(own[k] - last[k]) <= BACKED_TOL for k in ("train", "val")):
        problem = ("返回的模型在整个 train/val 上的 loss " + (f"{own['train']:.4f}/{own['val']:.4f}" if type(own) is dict else "—")
                   + f"，与 history 最后一行相差超过 {BACKED_TOL}",
                   "the returned model's own losses over the whole train/val splits "
                   + (f"{own['train']:.4f}/{own['val']:.4f}" if type(own) is dict else "—")
                   + f" are not within {BACKED_TOL} of history's last row")
    else:
        off = [i for i, (row, est) in enumerate(zip(rows, estimates))
               if any(abs(row[k] - est[k]) > ROW_TOL for k in ("train", "val"))]
        if off:
            problem = (f"history 第 {off[0]} 行不是模型在那次估计里算出的 loss 的平均",
                       f"history's row {off[0]} is not the mean of the losses the model computed in that estimate")
    if problem is None and reference is not None:
        mine = assert_ok(derived(student, _next_char_log_probs).observe(a_call), label)
        theirs = assert_ok(derived(reference, _next_char_log_probs).observe(a_call), label)
        if mine is None or theirs is None or mine.shape != theirs.shape or float((mine - theirs).abs().max()) > WEIGHT_TOL:
            problem = ("表对上了，但返回的模型不是课文那次训练得到的模型",
                       "the table matches, but the returned model is not the one the lesson's training gives")
    if problem is None:
        return
    fail(f"history 应当来自这次训练：{problem[0]}（返回 train_bigram 建好并训练过的模型，history 是它的估计）",
         f"history should come from this training: {problem[1]} (return the model train_bigram built and trained, "
         "and the estimates it gave)", label=label, expected="history = this training's estimates", got=problem[1])


def _fmt_rows(rows):
    return "  ".join(f"{s}: {t:.4f}/{v:.4f}" if t is not None else f"{s}: —" for s, t, v in rows)


def _require_model(student, corpus_path):
    """The probes instrument the imported BigramLanguageModel: it must be the one used."""
    got = assert_ok(student.observe(probe("ex12.model_used", corpus_path)), "train_bigram(...)")
    if got["models_built"] != 1 or not got["returned_built_model"]:
        fail(f"train_bigram 应当用 import 进来的 BigramLanguageModel 恰好建一个模型并把它返回"
             f"（建了 {got['models_built']} 个；返回的是它：{got['returned_built_model']}）。"
             f"评分时这个名字被换成带记录功能的正确模型，不用它就没法检查梯度和模式（见练习说明）",
             f"train_bigram should build exactly one model with the imported BigramLanguageModel and "
             f"return it (built {got['models_built']}; returned it: {got['returned_built_model']}). When "
             f"grading, that name is an instrumented correct model; without it gradients and modes cannot be checked",
             label="BigramLanguageModel(vocab_size)", expected="1 model, returned", got=f"{got['models_built']} built")


@pytest.mark.public
@pytest.mark.points(4)
def test_required_band(student, reference, corpus_path):
    """默认参数：第 0 步 loss 在 4.6–4.9 之间，最后 val ≤ 2.52 | Defaults: step 0 in [4.6, 4.9], final val ≤ 2.52"""
    a_call = probe("ex12.history", corpus_path)
    reference.observe(a_call)  # the reference's run is shared by every full-run check; recorded in a release
    got = assert_ok(derived(student, band_facts).observe(a_call), "train_bigram(train_data, val_data, 65)")

    def ok(v):
        return (v["first_step"] == 0 and v["step0_train"] is not None
                and STEP0_BAND[0] <= v["step0_train"] <= STEP0_BAND[1]
                and STEP0_BAND[0] <= v["step0_val"] <= STEP0_BAND[1] and v["final_val"] <= FINAL_VAL_MAX)

    if ok(got):
        _require_trained(student, corpus_path, [r for r in derived(student, rounded).observe(a_call).value if "step" in r])
        student.record("step 0 / final val", f"[{STEP0_BAND[0]}, {STEP0_BAND[1]}] / ≤ {FINAL_VAL_MAX}",
                       f"{got['step0_train']:.4f} {got['step0_val']:.4f} / {got['final_val']:.4f}")
        return
    got_text = ("—" if got["step0_train"] is None else
                f"step {got['first_step']}: {got['step0_train']:.4f}/{got['step0_val']:.4f}, final val {got['final_val']:.4f}")
    diagnosis = diagnose(student, reference)
    fail(f"默认参数训练后应当：第 0 步 train/val 在 [{STEP0_BAND[0]}, {STEP0_BAND[1]}]，最后一次估计的 val ≤ {FINAL_VAL_MAX}",
         f"with the defaults: step 0 train/val in [{STEP0_BAND[0]}, {STEP0_BAND[1]}], the last estimate's val ≤ {FINAL_VAL_MAX}",
         label="train_bigram(train_data, val_data, 65)",
         expected=f"step 0: [{STEP0_BAND[0]}, {STEP0_BAND[1]}], final val ≤ {FINAL_VAL_MAX}", got=got_text, diagnosis=diagnosis)


@pytest.mark.public
@pytest.mark.points(4)
def test_lesson_table(student, reference, corpus_path):
    """复现课文的表（4 位小数）| Reproduce the lesson's table to 4 decimals"""
    a_call = probe("ex12.history", corpus_path)
    reference.observe(a_call)  # recorded in a release, for diagnoses
    history = assert_ok(derived(student, rounded).observe(a_call), "train_bigram(train_data, val_data, 65)")
    student.attach("history", history)  # drawn beside the lesson's table, as a curve

    def rows_of(hist):
        by_step = {r["step"]: r for r in hist if "step" in r}
        return [(s, by_step[s]["train"], by_step[s]["val"]) if s in by_step else (s, None, None) for s, _, _ in LESSON]

    got_rows = rows_of(history)
    if got_rows == LESSON:
        _require_trained(student, corpus_path, [r for r in history if "step" in r], reference)
        student.record("lesson table", f"{len(LESSON)} 行 / rows", f"{len(LESSON)}/{len(LESSON)} ✓")
        return
    first = next(i for i, (a, b) in enumerate(zip(LESSON, got_rows)) if a != b)
    diagnosis = diagnose(student, reference)
    where_zh = ("第 0 步就不同：抽随机数的顺序（种子 → 建模型 → 建优化器 → 先估计再训练）或学习率之外的设置不对"
                if first == 0 else f"第 0 步相同，从第 {LESSON[first][0]} 步开始不同：训练那一步（学习率、zero_grad、抽 batch 的顺序）有出入")
    where_en = ("step 0 already differs: the order of random draws (seed → model → optimizer → estimate before the step) is off"
                if first == 0 else f"step 0 matches, step {LESSON[first][0]} differs: the training step (learning rate, zero_grad, order of draws) differs")
    fail(f"和课文的表对不上（torch 2.13，CPU，单线程）。{where_zh}",
         f"does not reproduce the lesson's table (torch 2.13, CPU, one thread). {where_en}",
         label="train_bigram(train_data, val_data, 65)", expected=_fmt_rows(LESSON), got=_fmt_rows(got_rows),
         diagnosis=diagnosis)


@pytest.mark.points(1)
def test_estimate_steps(student, reference, corpus_path):
    """每 300 步估计一次，最后一步也估计 | An estimate every 300 steps and at the last step"""
    same(derived(student, steps_of), derived(reference, steps_of), probe("ex12.history", corpus_path),
         label="[h['step'] for h in history] (defaults)")


@pytest.mark.points(1)
def test_history_form(student, reference, corpus_path):
    """history 是 list，每项 {'step': int, 'train': float, 'val': float} | history's form"""
    same(derived(student, form_of), derived(reference, form_of), probe("ex12.short_history", corpus_path),
         label="type(history), its entries")


@pytest.mark.points(3)
def test_gradients_cleared_every_step(student, reference, corpus_path):
    """每一步都清零梯度（检测累加）| Gradients are cleared every step (no accumulation)"""
    _require_model(student, corpus_path)
    same(student, reference, probe("ex12.gradients", corpus_path),
         label="backward passes; steps where p.grad ≠ this step's gradient")


@pytest.mark.points(2)
def test_modes(student, reference, corpus_path):
    """估计在 eval 模式、训练在 train 模式 | Estimates in eval mode, training steps in train mode"""
    _require_model(student, corpus_path)
    same(student, reference, probe("ex12.modes", corpus_path),
         label="training forwards in eval mode; estimate forwards in train mode")


@pytest.mark.points(2)
def test_estimate_order_and_size(student, reference, corpus_path):
    """先估计（eval_iters 个 batch × 2 个 split）再训练，顺序与课文脚本相同 | Estimate sizes and order"""
    _require_model(student, corpus_path)
    same(student, reference, probe("ex12.events", corpus_path),
         label="forward calls in order: (E)stimate / (T)raining, max_iters=40, eval_interval=10, eval_iters=5")


@pytest.mark.points(2)
def test_other_arguments(student, reference, corpus_path):
    """其他参数下（vocab_size、learning_rate、seed、batch_size、block_size…）与参考逐步一致 | With other arguments, the reference's run exactly"""
    same(student, reference, probe("ex12.short_history", corpus_path),
         label="train_bigram(…, vocab_size=70, max_iters=40, eval_interval=10, eval_iters=5, learning_rate=0.03, "
               "batch_size=8, block_size=6, seed=7)",
         tol=Tol(rtol=1e-5, atol=1e-5))


@pytest.mark.points(1)
def test_returns_trained_model(student, reference, corpus_path):
    """返回训练好的模型 | Returns the trained model"""
    _require_model(student, corpus_path)
    same(student, reference, probe("ex12.final_weight", corpus_path),
         label="model.token_embedding_table.weight after 40 steps", tol=Tol(rtol=1e-4, atol=1e-5))
