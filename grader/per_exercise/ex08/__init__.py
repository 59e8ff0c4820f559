"""ex08: what the grader needs about it, in one place."""
