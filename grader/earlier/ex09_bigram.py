"""Stand-in for a missing ex09_bigram.py (see README.md in this folder)."""

from grader.pieces import stand_in

BigramLanguageModel = stand_in("BigramLanguageModel")
