"""The replication cases import benchmarks/panel/panel_models.py, one folder up."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
