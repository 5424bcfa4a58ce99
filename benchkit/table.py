"""The terminal summary table: one row per idea x track."""
from __future__ import annotations

from pathlib import Path

from benchkit.spec import cfg_id

COLUMNS = ("idea", "track", "baseline", "idea arm", "delta", "wins", "p", "MDE", "mech",
           "verdict", "report")


def _fmt(x, spec=".4g") -> str:
    return "-" if x is None else format(x, spec)


def row(path: Path, r: dict, root: Path) -> tuple[str, ...]:
    try:
        shown = str(Path(path).relative_to(root))
    except ValueError:
        shown = str(path)
    comp = r["comparison"]
    if comp is None:
        return (r["name"], r["track"], "-", "-", "-", "-", "-", "-",
                _fmt(r["mechanism_ok"], "d"), "incomplete", shown)
    base, idea = r["baseline"], r["idea"]
    p = comp["p_value"] if comp.get("p_adjusted") in (None, comp["p_value"]) else (
        f'{comp["p_value"]:.3g} (adj {comp["p_adjusted"]:.3g})')
    return (
        r["name"], r["track"],
        f'{cfg_id(base["best_cfg"])} {base["full"]["mean"]:.4g}±{base["full"]["std"]:.2g}',
        f'{cfg_id(r["idea_config"])} {idea["mean"]:.4g}±{idea["std"]:.2g}',
        f'{comp["delta_mean"]:+.3g}', f'{comp["idea_wins"]}/{comp["n_pairs"]}',
        p if isinstance(p, str) else f"{p:.3g}",
        f'{comp["mde"]:.3g} ({_fmt(comp["mde_rel_pct"], ".3g")}%)',
        _fmt(r["mechanism_ok"], "d"),
        f'{r["practical_verdict"]}/{r["system_verdict"]}', shown,
    )


def render(rows: list[tuple[str, ...]]) -> list[str]:
    table = [COLUMNS, *rows]
    widths = [max(len(str(t[i])) for t in table) for i in range(len(COLUMNS))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(t, widths)).rstrip() for t in table]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return lines


def render_summary(written: list, root: Path) -> list[str]:
    if not written:
        return []
    lines = render([row(p, r, root) for p, r in written])
    for _, r in written:
        for w in r["warnings"]:
            lines.append(f"benchkit: WARNING {r['name']} {r['track']}: {w}")
        if r["incomplete"]:
            inc = r["incomplete"]
            lines.append(f"benchkit: INCOMPLETE {r['name']} {r['track']}: "
                         f"{'; '.join(inc['reasons'])}; missing: "
                         f"{', '.join(inc['missing'][:8])}"
                         f"{' ...' if len(inc['missing']) > 8 else ''}")
    return lines
