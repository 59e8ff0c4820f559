"""Known mistakes: each one a small variant of the reference, named and cited.

`grader/mistakes/exNN.py` lists an exercise's mistakes as `MISTAKES`. A mistake's variant
is the reference module with some attributes replaced; when a student's output equals the
variant's output on the same inputs (and the variant is wrong there), the failure message
names the mistake and the section of the course text to reread.
"""

from __future__ import annotations

import importlib
import types
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Mistake:
    id: str
    section: str
    zh: str
    en: str
    overrides: dict = field(default_factory=dict, hash=False, compare=False)
    hint: int | None = None

    def message(self, lang: str) -> str:
        return self.en if lang == "en" else self.zh

    def variant(self, reference: types.ModuleType) -> types.ModuleType:
        """The reference module with this mistake's overrides in place."""
        module = types.ModuleType(f"{reference.__name__}__{self.id}")
        module.__dict__.update(reference.__dict__)
        module.__dict__.update(self.overrides)
        return module

    def as_dict(self) -> dict:
        return {"id": self.id, "section": self.section, "zh": self.zh, "en": self.en, "hint": self.hint}


def mistakes_for(exercise_id: str) -> list[Mistake]:
    """The exercise's known mistakes (none if it has no mistakes module)."""
    try:
        module = importlib.import_module(f"grader.mistakes.{exercise_id}")
    except ModuleNotFoundError as err:
        if err.name == f"grader.mistakes.{exercise_id}":
            return []
        raise
    return list(module.MISTAKES)
