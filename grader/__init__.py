"""The grading kit behind the `grade` command.

从零构建 GPT 课程的练习与评分工具包：学生填写 exercises/ 里的存根，`grade ex03` 逐项检查。

Where a newcomer starts (CONTRIBUTING.md has the whole map and the recipe for a new exercise):

- `grader.model.exercise_map`: from an exercise id, its stub, solution, checks, probes,
  mistakes and the earlier pieces it builds on.
- `grader.run.startup` and `grader.run.session`: what `grade ex03` does, in order — fork the
  zygote, load torch and pytest, run the exercise's checks with the grading plugin.
- `grader.per_exercise` (its README): how a check is written; `grader.judge`: what it is written with.
- `grader.sandbox`: the one seam to untrusted code; the worker reports, the judge decides.
- `grader.commands`: the click commands, one file each, thin.
"""

__version__ = "0.1.0"
