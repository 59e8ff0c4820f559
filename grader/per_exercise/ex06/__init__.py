"""ex06: what the grader needs about it, in one place."""
