"""Known mistakes, one module per exercise (see grader.judge.mistakes)."""
