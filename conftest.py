"""Root conftest: intentionally tiny. benchkit's plugin loads from its pytest11 entry point."""
