"""Checks for ex12: train_bigram (bigram lesson, "the 2.49 baseline", "the optimizer").

Every check judges what train_bigram returned — the history, and the returned model's table,
whose predictions and losses the judge computes itself — in runs chosen so that the outputs
show how it trained (grader/per_exercise/ex12/probes.py): the lesson's run with the defaults
(3000 steps); the same at learning rate 0 (the model never moves, so every row
must be an estimate of the model returned); and 40-step runs with non-default arguments, with
the model as written and with models of the probe's choosing (one with a loss that reads higher
in train mode, one that trains elsewhere in eval mode, one whose training depends only on the
optimizer's steps, one whose losses number its calls). What the file imports from ex08, ex09
and ex11 is replaced by the correct pieces, so an earlier bug is not charged twice.

Required part: step 0 in [4.6, 4.9], final val <= 2.52, the history this training's own,
gradients cleared every step, the modes, eval_iters batches per estimate. Reproduction part:
the lesson's table to 4 decimals and the lesson's trained model (only a loop that draws in the
lesson's order gets them).
"""

import pytest

from grader.judge import Tol, assert_ok, diagnose, fail, probe, same
from grader.judge.derived import derived
from grader.model.lesson import LESSON_HISTORY
from grader.judge.mistakes import Mistake
from grader.pieces.bigram import BigramLanguageModel  # noqa: F401
from grader.pieces.estimate_loss import estimate_loss  # noqa: F401
from grader.pieces.get_batch import get_batch  # noqa: F401

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


BACKED_TOL = 0.03  # an estimate (eval_iters=200 batches) against the whole split: about 0.01 apart at most
WEIGHT_TOL = 1e-4  # the lesson's run reproduced: the reference's predictions (log-probabilities), to float rounding
FULL_ITERS = 3000  # train_bigram's default max_iters: the lesson's run


def own_losses(corpus_path, weight):
    """A table's mean loss over the whole train and val splits, computed here (None for anything
    that is not a floating, finite (V, V) table)."""
    import torch
    import torch.nn.functional as F

    from grader.fixtures.corpus import lesson_splits

    train, val, vocab = lesson_splits(corpus_path)
    if not isinstance(weight, torch.Tensor) or tuple(weight.shape) != (vocab, vocab) \
            or not weight.is_floating_point() or not bool(torch.isfinite(weight).all()):
        return None
    table = weight.detach().to(torch.float32)
    with torch.no_grad():
        return {name: float(F.cross_entropy(table[d[:-1]], d[1:])) for name, d in (("train", train), ("val", val))}


def _off_rows(rows: list, own: dict | None) -> list[int]:
    """The rows further than BACKED_TOL from the model's own losses (all of them for no model)."""
    if type(own) is not dict:
        return list(range(len(rows)))
    return [i for i, row in enumerate(rows) if any(abs(row[k] - own[k]) > BACKED_TOL for k in ("train", "val"))]


def _next_char_log_probs(run):
    """What the returned model predicts: its table's rows as log-probabilities, float64 (a
    constant added to a row changes nothing); None for no floating 2-D table."""
    import torch

    weight = run.get("weight") if type(run) is dict else None
    if not isinstance(weight, torch.Tensor) or not weight.is_floating_point() or weight.dim() != 2:
        return None
    return torch.log_softmax(weight.detach().to(torch.float64), dim=-1)


def _history_is_this_trainings(student, corpus_path, rows: list[dict]):
    """The history (`rows`: its well-formed rows, "train" and "val") must be this training's own,
    as far as outputs show it: its last row is the returned model's own losses over the whole
    splits (computed here from its table), within BACKED_TOL; and at learning rate 0, where the
    model never moves, every row is the returned model's. A history no training produced (the
    lesson's table beside no model, or beside a table counted from the data) fails."""
    label = "train_bigram(train_data, val_data, 65)"
    weight = assert_ok(student.observe(probe("ex12.full_training", corpus_path)), label)
    own = own_losses(corpus_path, weight.get("weight") if type(weight) is dict else None)
    problem = None
    if _off_rows(rows[-1:], own):
        problem = ("返回的模型在整个 train/val 上的 loss " + (f"{own['train']:.4f}/{own['val']:.4f}" if own else "—")
                   + f"，与 history 最后一行相差超过 {BACKED_TOL}",
                   "the returned model's own losses over the whole train/val splits "
                   + (f"{own['train']:.4f}/{own['val']:.4f}" if own else "—")
                   + f" are not within {BACKED_TOL} of history's last row")
    else:
        frozen_label = "train_bigram(train_data, val_data, 65, max_iters=2, eval_interval=1, learning_rate=0.0)"
        frozen = assert_ok(student.observe(probe("ex12.frozen_training", corpus_path)), frozen_label)
        frozen = frozen if type(frozen) is dict else {}
        frozen_rows = [r for r in rounded(frozen.get("history")) if "step" in r]
        off = _off_rows(frozen_rows, own_losses(corpus_path, frozen.get("weight"))) if frozen_rows else [0]
        if off:
            problem = (f"学习率为 0 时模型不动，history 的每一行都应当是返回的模型的 loss，第 {off[0]} 行却不是",
                       f"at learning rate 0 the model never moves, so every row of history is the returned model's "
                       f"loss; row {off[0]} is not")
    if problem is None:
        return
    fail(f"history 应当来自这次训练：{problem[0]}（返回 train_bigram 建好并训练过的模型，history 是它的估计）",
         f"history should come from this training: {problem[1]} (return the model train_bigram built and trained, "
         "and the estimates it gave)", label=label, expected="history = this training's estimates", got=problem[1])


def _lessons_model(student, reference, corpus_path, history: list[dict]):
    """With the lesson's table matched, the returned model must predict what the reference
    training's does, within WEIGHT_TOL. When it does not and the history is the lesson's but for
    its last row, that is named: the lesson's final estimate draws its batches before the last
    training batch (the diagnosis `no_final_estimate`)."""
    label = "train_bigram(train_data, val_data, 65)"
    a_call = probe("ex12.full_training", corpus_path)
    mine = assert_ok(derived(student, _next_char_log_probs).observe(a_call), label)
    theirs = assert_ok(derived(reference, _next_char_log_probs).observe(a_call), label)
    if mine is not None and theirs is not None and mine.shape == theirs.shape \
            and float((mine - theirs).abs().max()) <= WEIGHT_TOL:
        return
    steps = [row.get("step") for row in history]
    if mine is None:
        zh, en = ("表对上了，但返回的模型没有可以预测的 token_embedding_table（浮点的 (V, V) 表）",
                  "the table matches, but the returned model has no token_embedding_table to predict with (a floating "
                  "(V, V) table)")
    elif steps == FULL_STEPS[:-1]:
        zh = (f"表对上了，但 history 里没有最后一步（{FULL_STEPS[-1]}）的估计：课文的循环在最后一步也估计一次，那次估计抽的 "
              "batch 在最后一个训练 batch 之前，少了它，最后一步训练用的 batch 就不同，返回的模型也就不是课文那个")
        en = (f"the table matches, but history has no estimate at the last step ({FULL_STEPS[-1]}): the lesson's loop "
              "estimates there too, and that estimate draws its batches before the last training batch; without it "
              "the last step trains on another batch, so the returned model is not the lesson's")
    else:
        zh, en = ("表对上了，但返回的模型不是课文那次训练得到的模型",
                  "the table matches, but the returned model is not the one the lesson's training gives")
    fail(zh, en, label=label, expected="the lesson's trained model", got=en.partition(":")[0],
         diagnosis=diagnose(student, derived(reference, _next_char_log_probs)))


def _fmt_rows(rows):
    return "  ".join(f"{s}: {t:.4f}/{v:.4f}" if t is not None else f"{s}: —" for s, t, v in rows)


def handed_model(run) -> bool | str:
    """Whether each run's returned model is one of the class the probe handed in under the name
    BigramLanguageModel (a file that builds its model under another name shows nothing of it)."""
    runs = [r for kind, r in run.items() if kind != "untrained"] if type(run) is dict else []
    return bool(runs) and all(type(r) is dict and r.get("handed_model") is True for r in runs)


def _rows_of(run, kind):
    entry = run.get(kind) if type(run) is dict else None
    return [r for r in rounded(entry.get("history")) if "step" in r] if type(entry) is dict else []


def _weight_of(run, kind):
    import torch

    entry = run.get(kind) if type(run) is dict else None
    weight = entry.get("weight") if type(entry) is dict else None
    return weight if isinstance(weight, torch.Tensor) and weight.is_floating_point() else None


def _same_tables(a, b) -> bool:
    return a is not None and b is not None and a.shape == b.shape and bool((a - b).abs().max() <= 1e-6)


def mode_facts(run) -> dict:
    """From the short runs with the plain model and the two that reveal a mode: estimates in
    eval mode (the model whose loss reads 1 higher in train mode gives the plain model's rows),
    training in train mode (the model that trains elsewhere in eval mode ends where the plain
    one does), beside what makes those mean something (the handed model returned, estimates
    made, the model trained)."""
    plain = _weight_of(run, "plain")
    untrained = run.get("untrained") if type(run) is dict else None
    return {"handed_model": handed_model(run),
            "estimates_made": bool(_rows_of(run, "plain")),
            "model_trained": plain is not None and not _same_tables(plain, untrained),
            "estimates_in_eval": bool(_rows_of(run, "plain")) and _rows_of(run, "estimate_reveal") == _rows_of(run, "plain"),
            "training_in_train": _same_tables(_weight_of(run, "train_reveal"), plain)}


def bowl_facts(run) -> dict:
    """The table trained in the bowl: where the optimizer's steps took it."""
    return {"handed_model": handed_model(run), "trained_table": _weight_of(run, "bowl")}


def numbered_facts(run) -> dict:
    """The rows with the model whose n-th call has the loss 1 + n/100: each shows which calls
    its estimate averaged and how many training calls came before it."""
    return {"handed_model": handed_model(run), "rows": _rows_of(run, "numbered")}


WORDS = {  # what each fact of the short runs says when it differs
    "handed_model": ("返回的模型应当是用 import 进来的名字 BigramLanguageModel 建的（评分时这个名字换成了选好的模型）",
                     "the returned model should be built with the imported name BigramLanguageModel (when grading, "
                     "that name is a model chosen to show how it trained)"),
    "estimates_made": ("应当做过估计：history 不该是空的", "estimates should be made: history should not be empty"),
    "model_trained": ("模型应当被训练过：它的表应当变了", "the model should be trained: its table should change"),
    "estimates_in_eval": ("估计应当在 eval 模式下做：一个在 train 模式下 loss 多 1 的模型给出了不同的行",
                          "estimates should run in eval mode: a model whose loss reads 1 higher in train mode gave "
                          "other rows"),
    "training_in_train": ("训练应当在 train 模式下做：一个在 eval 模式下 logits 不同的模型训练到了别处",
                          "training steps should run in train mode: a model whose logits differ in eval mode trained "
                          "elsewhere"),
    "trained_table": ("40 步之后表应当和参考一样：loss 与 batch 无关，表只取决于每一步拿到的梯度",
                      "after 40 steps the table should be the reference's: the loss ignores the batch, so the table "
                      "shows only the gradients each step got"),
    "rows": ("每一行平均的应当是参考那几次调用：这个模型第 n 次调用的 loss 是 1 + n/100",
             "each row should average the reference's calls: this model's n-th call has the loss 1 + n/100"),
}


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
        _history_is_this_trainings(student, corpus_path, [r for r in derived(student, rounded).observe(a_call).value if "step" in r])
        student.record("step 0 / final val", f"[{STEP0_BAND[0]}, {STEP0_BAND[1]}] / ≤ {FINAL_VAL_MAX}",
                       f"{got['step0_train']:.4f} {got['step0_val']:.4f} / {got['final_val']:.4f}")
        return
    got_text = ("—" if got["step0_train"] is None else
                f"step {got['first_step']}: {got['step0_train']:.4f}/{got['step0_val']:.4f}, final val {got['final_val']:.4f}")
    diagnosis = diagnose(student, derived(reference, band_facts))
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
        _lessons_model(student, reference, corpus_path, [r for r in history if "step" in r])
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
    # a model whose loss does not depend on the batch: where 40 AdamW steps take its table depends
    # only on the gradients each step is given; accumulated ones take it elsewhere
    same(derived(student, bowl_facts), derived(reference, bowl_facts), probe("ex12.handed", corpus_path, kinds=("bowl",)),
         label="the table after 40 steps with a loss that ignores the batch (max_iters=40, learning_rate=0.03)",
         words=WORDS)


@pytest.mark.points(2)
def test_modes(student, reference, corpus_path):
    """估计在 eval 模式、训练在 train 模式 | Estimates in eval mode, training steps in train mode"""
    same(derived(student, mode_facts), derived(reference, mode_facts),
         probe("ex12.handed", corpus_path, kinds=("plain", "estimate_reveal", "train_reveal")),
         label="models whose estimates read higher in train mode / that train elsewhere in eval mode (max_iters=40)",
         words=WORDS)


@pytest.mark.points(2)
def test_estimate_order_and_size(student, reference, corpus_path):
    """先估计（eval_iters 个 batch × 2 个 split）再训练，顺序与课文脚本相同 | Estimate sizes and order"""
    same(derived(student, numbered_facts), derived(reference, numbered_facts),
         probe("ex12.handed", corpus_path, kinds=("numbered",)),
         label="history with a model whose n-th call has the loss 1 + n/100: max_iters=40, eval_interval=10, eval_iters=5",
         words=WORDS)


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
    same(student, reference, probe("ex12.final_weight", corpus_path),
         label="model.token_embedding_table.weight after 40 steps", tol=Tol(rtol=1e-4, atol=1e-5))


# ---------------------------------------------------------------- known mistakes
# Each a small variant of the reference that a check above must catch and name
# (grader.judge.mistakes); its `fix` goes into the last hint level.

SECTION = "bigram 一课「2.49 这条基线」与「优化器：第一次用现成的」"


def _loop(train_data, val_data, vocab_size, max_iters, eval_interval, eval_iters, learning_rate,
          batch_size, block_size, seed, *, zero_grad=True, est_iters=None, eval_before=False, final=True):
    import torch

    torch.manual_seed(seed)
    model = BigramLanguageModel(vocab_size)
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    splits = {"train": train_data, "val": val_data}
    history = []
    for it in range(max_iters):
        if it % eval_interval == 0 or (final and it == max_iters - 1):
            if eval_before:
                model.eval()  # 自己切到 eval，却没切回来 / switched to eval, never back
            losses = estimate_loss(model, splits, block_size, batch_size,
                                   eval_iters if est_iters is None else est_iters)
            history.append({"step": it, "train": losses["train"], "val": losses["val"]})
        xb, yb = get_batch(train_data, block_size, batch_size)
        logits, loss = model(xb, yb)
        if zero_grad:
            optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return model, history


def _no_zero_grad(train_data, val_data, vocab_size, max_iters=3000, eval_interval=300,
                  eval_iters=200, learning_rate=1e-2, batch_size=32, block_size=8, seed=1337):
    return _loop(train_data, val_data, vocab_size, max_iters, eval_interval, eval_iters,
                 learning_rate, batch_size, block_size, seed, zero_grad=False)


def _lr_1e3(train_data, val_data, vocab_size, max_iters=3000, eval_interval=300,
            eval_iters=200, learning_rate=1e-3, batch_size=32, block_size=8, seed=1337):
    return _loop(train_data, val_data, vocab_size, max_iters, eval_interval, eval_iters,
                 learning_rate, batch_size, block_size, seed)


def _one_batch_eval(train_data, val_data, vocab_size, max_iters=3000, eval_interval=300,
                    eval_iters=200, learning_rate=1e-2, batch_size=32, block_size=8, seed=1337):
    return _loop(train_data, val_data, vocab_size, max_iters, eval_interval, eval_iters,
                 learning_rate, batch_size, block_size, seed, est_iters=1)


def _left_in_eval(train_data, val_data, vocab_size, max_iters=3000, eval_interval=300,
                  eval_iters=200, learning_rate=1e-2, batch_size=32, block_size=8, seed=1337):
    return _loop(train_data, val_data, vocab_size, max_iters, eval_interval, eval_iters,
                 learning_rate, batch_size, block_size, seed, eval_before=True)


def _no_final_estimate(train_data, val_data, vocab_size, max_iters=3000, eval_interval=300,
                       eval_iters=200, learning_rate=1e-2, batch_size=32, block_size=8, seed=1337):
    return _loop(train_data, val_data, vocab_size, max_iters, eval_interval, eval_iters,
                 learning_rate, batch_size, block_size, seed, final=False)


MISTAKES = [
    Mistake(
        id='no_zero_grad',
        section=SECTION,
        zh="梯度没有清零：PyTorch 的梯度是累加的，每一步的梯度都叠在之前的上面",
        en="Gradients are not cleared: PyTorch accumulates them, so every "
        "step adds to the old ones",
        fix={"zh": "每一步 backward 之前 optimizer.zero_grad(set_to_none=True)",
             "en": "optimizer.zero_grad(set_to_none=True) before every backward"},
        overrides={"train_bigram": _no_zero_grad},
        hint=2,
    ),
    Mistake(
        id='lr_1e3',
        section=SECTION,
        zh="学习率太小：同样 3000 步练不够，第 2700 步的 val 还远高于课文的表",
        en="The learning rate is too small: 3000 steps are not enough, val "
        "at step 2700 is far above the lesson's table",
        fix={"zh": "AdamW(model.parameters(), lr=learning_rate)，默认 learning_rate=1e-2（课文脚本的值）",
             "en": "AdamW(model.parameters(), lr=learning_rate), with the default "
                "learning_rate=1e-2 (the script's value)"},
        overrides={"train_bigram": _lr_1e3},
        hint=1,
    ),
    Mistake(
        id='one_batch_eval',
        section=SECTION,
        zh="每次估计只用了一个 batch：没有对 eval_iters 个 batch 取平均",
        en="Each estimate uses one batch: no mean over eval_iters batches",
        fix={"zh": "estimate_loss(model, splits, block_size, batch_size, eval_iters)"
                "：把 eval_iters 传进去",
             "en": "estimate_loss(model, splits, block_size, batch_size, eval_iters)"
                ": pass eval_iters on"},
        overrides={"train_bigram": _one_batch_eval},
        hint=2,
    ),
    Mistake(
        id='left_in_eval',
        section=SECTION,
        zh="估计完 loss 之后模型停在 eval 模式里继续训练",
        en="After an estimate the model goes on training in eval mode",
        fix={"zh": "估计后回到 train 模式（用 estimate_loss 恢复模式，或估计后 model.train()）",
             "en": "Back to train mode after the estimate (estimate_loss restores "
                "the mode, or model.train() after it)"},
        overrides={"train_bigram": _left_in_eval},
        hint=2,
    ),
    Mistake(
        id='no_final_estimate',
        section=SECTION,
        zh="最后一步没有估计：课文的循环在最后一步也估计一次，那次估计抽的 batch 在最后一个训练 batch 之前，"
        "少了它，表的每一行都对，最后一步训练用的 batch 却不同",
        en="No estimate at the last step: the lesson's loop estimates at the last step too, and its "
        "batches are drawn before the last training batch; without it every row of the table matches "
        "but the last step trains on another batch",
        fix={"zh": "每 eval_interval 步估计一次，最后一步（it == max_iters - 1）也估计一次",
             "en": "Estimate every eval_interval steps and at the last step too (it == max_iters - 1)"},
        overrides={"train_bigram": _no_final_estimate},
        hint=2,
    ),
]
