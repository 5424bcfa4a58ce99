"""The statistics' rules (benchkit.stats, benchkit.signflip), pinned in process at and around each threshold."""
