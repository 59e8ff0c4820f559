"""`python -m grader`: the `grade` command, for when the console script is not on PATH.

Example: `python -m grader --version`, `python -m grader ex03 --lang en`.
"""

from grader.commands.main import entry

if __name__ == "__main__":
    entry()
