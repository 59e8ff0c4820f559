"""One folder per exercise: its checks and known mistakes, probes, fixtures and hints."""
