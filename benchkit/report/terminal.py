"""The terminal summary table: one row per idea x track."""
from __future__ import annotations

from pathlib import Path

from benchkit.report.fmt import mechanism_word, num, pct
from benchkit.spec import cfg_id

COLUMNS = ("idea", "track", "baseline", "idea arm", "delta", "wins", "p", "level", "MDE",
           "mech", "verdict", "report")


def row(path: Path, r: dict, root: Path) -> tuple[str, ...]:
    try:
        shown = str(Path(path).relative_to(root))
    except ValueError:
        shown = str(path)
    comp = r["comparison"]
    if comp is None:
        return (r["name"], r["track"], "-", "-", "-", "-", "-", "-", "-",
                mechanism_word(r["mechanism_ok"]), "incomplete", shown)
    base, idea = r["baseline"], r["idea"]
    p = num(comp["p_value"], ".3g")
    if comp.get("p_adjusted") not in (None, comp["p_value"]):
        p += f' (adj {num(comp["p_adjusted"], ".3g")})'
    return (
        r["name"], r["track"],
        f'{cfg_id(base["best_cfg"])} {num(base["full"]["mean"])}±{num(base["full"]["std"], ".2g")}',
        f'{cfg_id(r["idea_config"])} {num(idea["mean"])}±{num(idea["std"], ".2g")}',
        num(comp["delta_mean"], "+.3g"), f'{comp["idea_wins"]}/{comp["n_pairs"]}', p,
        num(comp["alpha"] if comp.get("level") is None else comp["level"], ".4g"),
        f'{num(comp["mde"], ".3g")} ({pct(comp["mde_rel_pct"])})',
        mechanism_word(r["mechanism_ok"]),
        f'{r["practical_verdict"]}/{r["system_verdict"]}'
        + (" (exploratory)" if r.get("exploratory") else ""), shown,
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
