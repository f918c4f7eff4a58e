"""Battle reports: who fought, the outcome, the key moments, start and end values, the dice and a chart.

:func:`build_report` reads a finished battle from the database (its snapshots along the path the
battle really took — undone steps are left out — and the events of those versions) and returns
plain data; :func:`render_markdown` and the ``report.html`` template print it, :func:`chart_svg`
draws each chart with matplotlib's SVG backend (on the server: the page embeds it as an image, no
script runs). A public report (``gm=False``) holds only what a spectator may see: public events,
and the numbers of the system's spectator view (:mod:`rules.report`).
"""

from __future__ import annotations

import base64
import hashlib
import io
import threading
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sqlmodel import col, select

from rules import get_system, luck
from rules import report as rules_report
from rules.core import PUBLIC, Viewer, event_for
from rules.fair import undone_versions

from . import report_chances
from .models import BattleEvent, BattleSnapshot, GameTable, row_id
from .service import BattleService, NotFound
from .text import scrub

#: whom the public report is written for
SPECTATOR = Viewer.spectator()

#: at most this many key moments are retold (the first ones and the end)
MAX_MOMENTS = 60
#: side colours of the charts (dark enough on paper, told apart by line style too)
SIDE_STYLES = [("#1f5fa8", "-", "o"), ("#b3261e", "--", "s"), ("#2e7d32", "-.", "^"), ("#6a1b9a", ":", "D")]
#: matplotlib's pyplot keeps global state: one chart at a time per process
_chart_lock = threading.Lock()


class ReportError(NotFound):
    """The battle cannot be reported (not finished, or not visible to the asker)."""

    code = "not_found"


def is_shareable(battle: Any) -> bool:
    """Whether the GM marked the battle shareable (issue 18's flag; a battle from before has none)."""
    return getattr(battle, "shareable", False) is True


def dice_record(battle: Any, rows: Sequence[Any]) -> dict[str, Any]:
    """The commitment, the players' seeds and the revealed seed, from the battle's log (the
    ``dice.committed``, ``dice.entropy`` and ``dice.revealed`` events); None where not recorded (a
    battle from before the dice were committed). All of it is public: every screen shows it."""
    commitments = [r.payload.get("data", {}).get("commitment") for r in rows if r.type == "dice.committed"]
    reveals = {r.payload.get("data", {}).get("commitment"): r.payload.get("data", {}).get("seed")
               for r in rows if r.type == "dice.revealed"}
    client_seeds = [{"seat": r.payload.get("data", {}).get("seat"), "client_seed": r.payload.get("data", {}).get("client_seed")}
                    for r in rows if r.type == "dice.entropy"]
    commitment = commitments[0] if commitments and isinstance(commitments[0], str) else None
    revealed = reveals.get(commitment) if commitment else None
    if revealed is not None and battle.status != "ended":  # never before the end (it is not in the log then)
        revealed = None
    matches = None
    if commitment and isinstance(revealed, str):
        matches = hashlib.sha256(revealed.encode()).hexdigest() == commitment.lower()
    return {
        "commitment": commitment,
        "revealed_seed": revealed if isinstance(revealed, str) else None,
        "client_seeds": [f"{c['seat']}: {c['client_seed']}" for c in client_seeds] or None,
        "mix": getattr(battle, "mix", None) or None,
        "later_seeds": max(0, len(commitments) - 1),
        "matches": matches,
    }


def _path(versions: list[int], rows: list[Any]) -> list[int]:
    """The versions the battle really went through, in order: every version but the steps an undo
    took back and the undos themselves (a step taken back and made again is there once, as made again).

    >>> rows = [type("Row", (), {"version": 4, "type": "battle.undone", "payload": {"data": {"step": 3}}})()]
    >>> _path([1, 2, 3, 4, 5], rows)
    [1, 2, 5]
    """
    said: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        if row.type in ("battle.undone", "dice.entropy"):
            said.setdefault(row.version, []).append({"type": row.type, **row.payload})
    taken = undone_versions(said)
    undos = {v for v, evs in said.items() if any(e["type"] == "battle.undone" for e in evs)}
    return [v for v in sorted(versions) if v not in taken and v not in undos]


def build_report(service: BattleService, battle_id: Any, *, gm: bool) -> dict[str, Any]:
    """The report of a finished battle as plain data (``gm``: the GM's report, else the public one)."""
    battle = service.battle(battle_id)
    if battle.status != "ended":
        raise ReportError("the battle has not ended yet: its report is written when it is over")
    if not gm and not is_shareable(battle):
        raise ReportError("no such report (the GM has not shared this battle)")
    system = get_system(battle.system_id)
    public = not gm
    with service.session() as s:
        table = s.get(GameTable, battle.table_id)
        snapshots = {snap.version: snap for snap in s.exec(select(BattleSnapshot).where(BattleSnapshot.battle_id == battle.id))}
        rows = s.exec(
            select(BattleEvent).where(BattleEvent.battle_id == battle.id).order_by(col(BattleEvent.version), col(BattleEvent.index))
        ).all()
        kept_chances = report_chances.kept(s, row_id(battle))
    chain = _path(list(snapshots), list(rows)) or sorted(snapshots)
    on_chain = set(chain)
    events = []
    for row in rows:
        if row.version not in on_chain:
            continue
        if gm:
            events.append({**row.payload, "v": row.version, "visibility": row.visibility})
            continue
        # the public report: each event as a spectator got it (its words for the others, if any)
        shown = event_for({**row.payload, "visibility": row.visibility}, SPECTATOR, snapshots[row.version].state)
        if shown is not None:
            events.append({**shown, "v": row.version, "visibility": PUBLIC})
    states = [snapshots[v].state for v in chain]
    # Olympia's first snapshot is the deployment: the start is where the fighting began
    start = next((st for st in states if st.get("status") == "active"), states[0])
    end = battle.state
    # the chart: each side's strength at the end of every turn or round (and at the start)
    # 0: the start; N: as things stood when turn or round N was over (the first state of the next
    # one), and the last turn or round as the battle ended
    points: dict[int, dict[str, dict[str, float]]] = {0: rules_report.strength(start, public)}
    for st in states[states.index(start) + 1 : -1]:
        points.setdefault(max(1, rules_report.progress(st) - 1), rules_report.strength(st, public))
    if len(states) > 1:
        points[max(1, rules_report.progress(states[-1]))] = rules_report.strength(states[-1], public)
    start_rows = {row["id"]: row for row in rules_report.combatant_rows(start, public)}
    end_rows = rules_report.combatant_rows(end, public)
    combatants = [
        {"id": row["id"], "name": row["name"], "side": row["side"], "start": start_rows.get(row["id"], {}).get("values", {}),
         "end": row["values"], "side_index": rules_report.sides(end).index(row["side"]) if row["side"] in rules_report.sides(end) else 0}
        for row in end_rows
    ]
    moments = [e for e in events if rules_report.is_key_moment(system.id, e)]
    if len(moments) > MAX_MOMENTS:
        moments = moments[: MAX_MOMENTS - 1] + [moments[-1]]
    rolls = [roll for e in events for roll in e.get("rolls") or []]
    dice_kinds = Counter(str(r.get("dice")) for r in rolls)
    if len(dice_kinds) > 8:  # mass battles draw batches of odd sizes: the count says enough
        dice_kinds = Counter()
    sides = rules_report.sides(end)
    outcome = system.outcome(end) or end.get("outcome") or {}
    charts = []
    lines = rules_report.break_lines(end)
    for key, title, unit in rules_report.charts(system.id, public):
        series = {side: [(x, values[key].get(side, 0)) for x, values in sorted(points.items())] for side in sides}
        charts.append({"key": key, "title": title, "unit": unit, "series": series, "lines": lines.get(key, {})})
    # who's winning over the battle, and its turning points (issue 37): the chances the live updates kept
    told = {e["v"] for e in events}
    chances = report_chances.chances_part(
        kept_chances, [v for v in chain if gm or v in told], events, outcome.get("winner_side") or outcome.get("winner"),
        lambda e: rules_report.is_key_moment(system.id, dict(e)))
    if chances["chances_chart"] is not None:
        charts.append(chances["chances_chart"])
    # text stored before the board read every field (a lone surrogate, a control character) is
    # written as U+FFFD: the page and its Markdown stay valid UTF-8
    report: dict[str, Any] = scrub({
        "battle_id": battle.id,
        "table": table.name if table else "",
        "system": {"id": system.id, "name": system.name},
        "public": public,
        "created_at": battle.created_at.strftime("%Y-%m-%d %H:%M UTC") if battle.created_at else "",
        "outcome": outcome.get("text") or "The battle ended.",
        "progress_label": rules_report.progress_label(system.id),
        "last_progress": rules_report.progress(end),
        "sides": {side: [c["name"] for c in combatants if c["side"] == side] for side in sides},
        "combatants": combatants,
        "moments": [{"text": e.get("text", ""), "type": e.get("type"), "visibility": e.get("visibility")} for e in moments],
        "dice": {**dice_record(battle, rows), "rolls": len(rolls), "kinds": sorted(dice_kinds.items()),
                 # whose dice ran hot or cold (issue 37), from the rolls this report's reader may see
                 "luck": luck.by_roller(events, end.get("combatants") or {}, {seat.public_id: seat.name for seat in service.seats(battle.table_id)})},
        "charts": charts,
        "turning_points": chances["turning_points"],
        # (the public report counts the versions the table was told of: a GM's secret is none of them)
        "versions": len(chain) if gm else len({e["v"] for e in events}),
    })
    return report


#: chart sizes in inches (at 100 px an inch): a page's width, and a phone's (its text stays readable)
CHART_SIZES = {"wide": (7.5, 3.6), "narrow": (4.0, 3.6)}


def chart_svg(chart: dict[str, Any], progress_label: str, size: str = "wide") -> str:
    """One chart as an SVG document, drawn by matplotlib's SVG backend."""
    import matplotlib

    matplotlib.use("svg", force=False)
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    with _chart_lock:
        matplotlib.rcParams["svg.hashsalt"] = "battleboard"  # the same report gives the same SVG
        narrow = size == "narrow"
        figure = Figure(figsize=CHART_SIZES[size], dpi=100)
        axes = figure.subplots()
        for i, (side, points) in enumerate(chart["series"].items()):
            colour, style, marker = SIDE_STYLES[i % len(SIDE_STYLES)]
            xs = [x for x, _ in points]
            ys = [y for _, y in points]
            axes.plot(xs, ys, linestyle=style, marker=marker, color=colour, linewidth=2.2, markersize=5, label=f"Side {side}")
            line = chart["lines"].get(side)
            if line:
                axes.axhline(line, color=colour, linestyle=(0, (4, 3)), linewidth=1.2, alpha=0.8, label=f"Side {side} breaks at {line:,.0f}")
        if not narrow:  # on a phone the caption under the chart names it
            axes.set_title(chart["title"], fontsize=11)
        axes.set_xlabel(chart.get("x_label") or f"{progress_label} (0 = the start)", fontsize=11)
        axes.set_ylabel(chart["unit"], fontsize=11)
        axes.tick_params(labelsize=10)
        axes.set_ylim(bottom=0)
        axes.grid(True, alpha=0.3)
        locator = axes.xaxis.get_major_locator()
        if isinstance(locator, MaxNLocator):  # (the default AutoLocator is one)
            locator.set_params(integer=True)
        axes.legend(fontsize=8 if narrow else 9, loc="best")
        figure.tight_layout()
        buffer = io.StringIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()


def chart_data_url(svg: str) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()


def with_charts(report: dict[str, Any]) -> dict[str, Any]:
    """The report with each chart's SVG (``svg``) and its data URL (``url``) filled in."""
    for chart in report["charts"]:
        chart["svg"] = chart_svg(chart, report["progress_label"])
        chart["url"] = chart_data_url(chart["svg"])
        chart["narrow_url"] = chart_data_url(chart_svg(chart, report["progress_label"], "narrow"))
    return report


def render_html(report: dict[str, Any], *, standalone: bool = False) -> str:
    """The report page (needs a Flask request context). ``standalone``: one file that opens anywhere,
    its stylesheet inside (the command line writes it; the served page links its stylesheet, CSP)."""
    from flask import current_app, render_template

    page = render_template("report.html", report=with_charts(report), standalone=standalone)
    if standalone:  # our own stylesheet, put in after the template escaped everything else
        css = (Path(current_app.static_folder or "") / "css" / "report.css").read_text(encoding="utf-8")
        page = page.replace("<!-- report stylesheet -->", f"<style>\n{css}</style>", 1)
    return page


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_markdown(report: dict[str, Any], *, chart_files: dict[str, str] | None = None) -> str:
    """The report in Markdown (``chart_files``: chart key -> the SVG file written beside it)."""
    out = [f"# Battle report: {report['table']} — {report['system']['name']}", ""]
    out += [f"Battle {report['battle_id']}, begun {report['created_at']}. "
            + ("Public report: only what the table saw." if report["public"] else "The GM's report: everything."), ""]
    out += ["## Outcome", "", report["outcome"], ""]
    out += ["## Who fought", ""]
    for side, names in report["sides"].items():
        out.append(f"- **Side {side}:** {', '.join(names)}")
    out += ["", "## Key moments", ""]
    out += [f"{i}. {m['text']}" for i, m in enumerate(report["moments"], start=1)] or ["Nothing to retell."]
    out += ["", "## Start and end", ""]
    labels: list[str] = []
    for c in report["combatants"]:
        for label in list(c["start"]) + list(c["end"]):
            if label not in labels:
                labels.append(label)
    out.append("| combatant | side | " + " | ".join(f"{label} (start → end)" for label in labels) + " |")
    out.append("| --- | --- | " + " | ".join("---" for _ in labels) + " |")
    for c in report["combatants"]:
        cells = [f"{c['start'].get(label, '—')} → {c['end'].get(label, '—')}" for label in labels]
        out.append(f"| {_cell(c['name'])} | {c['side']} | " + " | ".join(_cell(x) for x in cells) + " |")
    out += ["", "## Strength over the battle", ""]
    for chart in report["charts"]:
        out.append(f"### {chart['title']}")
        out.append("")
        if chart_files and chart["key"] in chart_files:
            out.append(f"![{chart['title']}]({chart_files[chart['key']]})")
            out.append("")
        head = [report["progress_label"]] + [f"side {side}" for side in chart["series"]]
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + " --- |" * len(head))
        xs = [x for x, _ in next(iter(chart["series"].values()), [])]
        for i, x in enumerate(xs):
            out.append(f"| {x} | " + " | ".join(f"{points[i][1]:,}" for points in chart["series"].values()) + " |")
        for side, line in chart["lines"].items():
            out.append(f"\nSide {side} breaks at {line:,.0f}.")
        out.append("")
    if report.get("turning_points"):
        out += ["## Turning points", ""]
        out += [f"{i}. {point['text']} ({point['name']}'s chance to win)" for i, point in enumerate(report["turning_points"], 1)]
        out.append("")
    out += ["## Dice", ""]
    dice = report["dice"]
    out.append(f"- Rolls: {dice['rolls']}" + (" (" + ", ".join(f"{k} ×{n}" for k, n in dice["kinds"]) + ")" if dice["kinds"] else ""))
    out.append(f"- Commitment (SHA-256 of the seed): {dice['commitment'] or 'not recorded'}")
    out.append(f"- Revealed seed: {dice['revealed_seed'] or 'not recorded'}")
    if dice["client_seeds"]:
        out.append(f"- Players' seeds (seat: seed): {'; '.join(dice['client_seeds'])}")
    if dice["mix"]:
        out.append(f"- Mix of the players' seeds: {dice['mix']}")
    if dice["later_seeds"]:
        out.append(f"- Later seeds committed during the battle: {dice['later_seeds']} (see the export)")
    for who in dice.get("luck") or []:
        out.append(f"- {who['who']}'s dice ({who['dice']}): percentile {who['percentile']:.0f}, {who['words']}")
    if dice["matches"] is not None:
        out.append("- The revealed seed matches the commitment." if dice["matches"] else "- The revealed seed does NOT match the commitment!")
    out.append("")
    return "\n".join(out)
