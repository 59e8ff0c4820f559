"""The values a student works out by hand, as the kit knows them, and where a release holds one.

The hand answers are the constants a stub leaves `NotImplemented` for the student to fill
in (ANSWER_PARAMS, ANSWER_FP16_BYTES, HAND_NLL_LABEL_A, SHAPE_ANSWERS), valued as
solutions/ sets them; a written answer (a str graded by hand, ex04's WHY_PARALLEL) is prose,
not a value to look for. A value *holds* a hand answer when it is one or has one inside:

- an int equal to a hand int;
- a float within `FLOAT_NEAR` of a hand float (the hand checks take two decimals);
- a dict with every entry of a hand dict but at most one (SHAPE_ANSWERS' shapes without
  its n_valid are still the answer), lists read as tuples.

`grade release` seals every recorded output that holds one (`seal_hand_answers`, with
grader.judge.sealed), and its leak search (grader.build.leaks) refuses a release in which
one can still be read: in a file's text (an int with or without separators, `1,234,567`,
`1_234_567`, or by its size, `1.2M`, `1.2 MB`, `0.1234 亿`; a decimal number near a hand
float), in a dict literal of a Python file, or in data a file decodes to.

    >>> answers = hand_answers(course)
    >>> sorted(answers)
    ['ANSWER_FP16_BYTES', 'ANSWER_PARAMS', 'HAND_NLL_LABEL_A', 'SHAPE_ANSWERS']
    >>> answers.found_in_text("ANSWER_PARAMS = " + f"{answers['ANSWER_PARAMS']:_}")
    ['ANSWER_PARAMS']
"""

from __future__ import annotations

import ast
import re
import secrets

from grader.model.course import Course

FLOAT_NEAR = 0.005  # a decimal this close to a hand float reads as the answer (the checks take two decimals)
MIN_INT = 1000  # a hand int smaller than this is not searched for as text (every file has a 12)
MAX_DEPTH = 12  # levels of nested data looked into
_DECIMAL = re.compile(r"(?<![\w.])\d+\.\d{2,}(?![\d])")


def _plain(value):
    """Lists read as tuples, all the way down (a shape recorded as a list is the same shape)."""
    if isinstance(value, (list, tuple)):
        return tuple(_plain(v) for v in value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _is_int(value) -> bool:
    return type(value) is int


def _is_float(value) -> bool:
    return type(value) is float


class HandAnswers(dict):
    """{name: value} of the course's hand answers, and the tests for a value or a text holding one."""

    def holder(self, value) -> str | None:
        """The name of the hand answer `value` is (or, for a dict, covers), None if none."""
        value = _plain(value)
        for name, answer in self.items():
            if _is_int(answer) and _is_int(value) and value == answer:
                return name
            if _is_float(answer) and type(value) in (int, float) and not isinstance(value, bool) \
                    and abs(value - answer) <= FLOAT_NEAR:
                return name
            if isinstance(answer, dict) and isinstance(value, dict):
                same = sum(1 for k, v in answer.items() if k in value and value[k] == v)
                if same >= max(len(answer) - 1, 1):
                    return name
        return None

    def found_in_value(self, value, depth: int = 0) -> list[str]:
        """Every hand answer held anywhere in plain data."""
        name = self.holder(value) if not isinstance(value, (str, bytes, bool)) and value is not None else None
        if name is not None:
            return [name]
        if depth > MAX_DEPTH:
            return []
        if isinstance(value, dict):
            return [n for v in list(value.keys()) + list(value.values()) for n in self.found_in_value(v, depth + 1)]
        if isinstance(value, (list, tuple)):
            return [n for v in value for n in self.found_in_value(v, depth + 1)]
        return []

    def found_in_text(self, text: str, tree: ast.AST | None = None) -> list[str]:
        """Every hand answer written in `text`: a number in any of its forms, or a dict literal
        of its Python syntax tree (`tree`, when the caller has parsed it; else parsed here)."""
        found = [name for name, pattern in self._patterns() if pattern.search(text)]
        floats = [(name, a) for name, a in self.items() if _is_float(a)]
        for token in _DECIMAL.findall(text) if floats else ():
            found += [name for name, a in floats if abs(float(token) - a) <= FLOAT_NEAR]
        if "{" in text and any(isinstance(a, dict) for a in self.values()):
            found += [n for node in _dict_literals(text, tree) for n in self.found_in_value(node)]
        return sorted(set(found))

    def _patterns(self) -> list[tuple[str, re.Pattern]]:
        """(name, pattern) for every written form of every hand int, made once."""
        if getattr(self, "_made", None) is None:
            from grader.report.humanize import compact, nbytes_short

            made = []
            for name, answer in self.items():
                if not _is_int(answer) or abs(answer) < MIN_INT:
                    continue
                made.append((name, re.compile(_int_pattern(answer))))
                for short in {compact(answer), nbytes_short(answer), f"{answer / 10**8:g}亿", f"{answer / 10**4:g}万"}:
                    if not short.isdigit():
                        number, unit = re.match(r"([\d.]+)\s*(.*)", short).groups()
                        made.append((name, re.compile(rf"(?<![\d.]){re.escape(number)}\s*{re.escape(unit)}")))
            self._made = made
        return self._made


def _int_pattern(n: int) -> str:
    """`1234567` -> a pattern for 1234567, 1,234,567, 1_234_567 and 1 234 567 (not 91234567 or 1234567.5)."""
    digits = str(abs(n))
    groups = [digits[max(i - 3, 0):i] for i in range(len(digits), 0, -3)][::-1]
    body = r"[,_ \u202f]?".join(groups)
    return rf"(?<![\d.,_]){'-' if n < 0 else ''}{body}(?![\d]|\.\d)"


def _dict_literals(text: str, tree: ast.AST | None = None) -> list[dict]:
    """Every dict display of a Python text that is a literal (values written out)."""
    if tree is None:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict) and all(k is not None for k in node.keys):
            try:
                found.append(ast.literal_eval(node))
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
    return found


def hand_answers(course: Course) -> HandAnswers:
    """The stubs' `NotImplemented` constants (not written answers) with the values solutions/ gives them."""
    found = HandAnswers()
    for ex in course.exercises:
        stub, solution = course.exercises_dir / ex.file, course.solutions_dir / ex.file
        if not stub.is_file() or not solution.is_file():
            continue
        asked = {t.id for node in ast.parse(stub.read_text(encoding="utf-8")).body if isinstance(node, ast.Assign)
                 and isinstance(node.value, ast.Name) and node.value.id == "NotImplemented"
                 for t in node.targets if isinstance(t, ast.Name)}
        for node in ast.parse(solution.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                    and node.targets[0].id in asked:
                try:
                    value = ast.literal_eval(node.value)
                except ValueError:
                    continue
                if not isinstance(value, str):
                    found[node.targets[0].id] = _plain(value)
    return found


def seal_hand_answers(value, answers: HandAnswers, salt: str, depth: int = 0):
    """`value` with every hand answer in it sealed: an int or float itself, a dict that covers a
    hand dict entry by entry (its keys stay, so a check can still name the wrong one)."""
    from grader.judge.sealed import seal

    if depth > MAX_DEPTH or isinstance(value, (str, bytes, bool)) or value is None:
        return value
    name = answers.holder(value)
    if name is not None and isinstance(answers[name], dict) and isinstance(value, dict):
        return {k: _seal_leaf(v, salt) for k, v in value.items()}
    if name is not None and type(value) in (int, float):
        return seal(value, salt)
    if isinstance(value, dict):
        return {k: seal_hand_answers(v, answers, salt, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(seal_hand_answers(v, answers, salt, depth + 1) for v in value)
    return value


def _seal_leaf(value, salt: str):
    from grader.judge.sealed import seal

    plain = _plain(value)
    if type(plain) in (int, float) or (type(plain) is tuple and all(type(d) is int for d in plain)):
        return seal(plain, salt)
    return value


def seal_recorded(answers_blob: dict, answers: HandAnswers) -> dict:
    """The recorded answers (grader.build.record) with every hand answer in their values sealed,
    under a salt of this release's own."""
    from grader.judge.sealed import to_plain

    salt = secrets.token_hex(16)
    out = {**answers_blob, "exercises": {}}
    for ex_id, store in answers_blob["exercises"].items():
        sealed = dict(store)
        sealed["answers"] = {key: _seal_observation(obs, answers, salt) for key, obs in store.get("answers", {}).items()}
        sealed["mistake_answers"] = {
            mistake: {key: _seal_observation(obs, answers, salt) for key, obs in by_key.items()}
            for mistake, by_key in store.get("mistake_answers", {}).items()}
        out["exercises"][ex_id] = to_plain(sealed)
    return out


def _seal_observation(obs: dict, answers: HandAnswers, salt: str) -> dict:
    return {**obs, "value": seal_hand_answers(obs.get("value"), answers, salt)}
