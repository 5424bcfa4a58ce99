"""The report's verdict rules (benchkit.report), pinned in process at and around each threshold."""
