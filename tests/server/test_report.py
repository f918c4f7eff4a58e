"""Battle reports (issue 18 §4): the page of every system with its chart, the public report's
visibility, and ``battleboard report`` in Markdown and HTML."""

from __future__ import annotations

import base64
import hashlib
import random
import re
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import select

from rules import RulesError, Viewer, available_systems, get_system
from tests.conftest import make_app
from tests.server.test_leaks import declaration_from
from webapp import cli
from webapp import report as report_module
from webapp.models import BattleEvent

SYSTEM_IDS = [system.id for system in available_systems()]


def play_to_the_end(service: Any, system_id: str, *, seed: str = "report-seed", steps: int = 250) -> tuple[Any, int]:
    """A demo lineup of the system, played by the GM from ``view["legal"]`` until it ends (or the
    GM ends it)."""
    table = service.create_table(f"Report {system_id}", system_id)
    service.set_lineup(table.id, cli.demo_lineup(system_id))
    battle_id = service.start_battle(table.id, seed=seed).battle_id
    rng = random.Random(system_id)
    system = get_system(system_id)
    for _ in range(steps):
        battle = service.battle(battle_id)
        if battle.status == "ended":
            break
        legal = system.view_for(battle.state, Viewer.gm()).get("legal") or []
        if not legal:
            break
        try:
            service.declare(battle_id, Viewer.gm(), declaration_from(rng.choice(legal), rng), actor="gm")
        except RulesError:
            pass
    if service.battle(battle_id).status != "ended":
        service.end_battle(battle_id, Viewer.gm())
    return service.table(table_id=table.id), battle_id


@pytest.fixture(scope="module")
def finished(tmp_path_factory: Any) -> Any:
    """One app with a finished battle of every system: ``(app, {system_id: (table, battle_id)})``."""
    folder = tmp_path_factory.mktemp("reports")
    app = make_app(folder)
    service = app.extensions["battleboard"].service
    battles = {system_id: play_to_the_end(service, system_id) for system_id in SYSTEM_IDS}
    yield app, battles, folder
    service.engine.dispose()


def gm_client(app: Any, table: Any) -> Any:
    client = app.test_client()
    assert client.get(f"/t/{table.slug}/gm?key={table.gm_token}").status_code == 302
    return client


def svgs_of(html: str) -> list[str]:
    return [base64.b64decode(data).decode() for data in re.findall(r'src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', html)]


@pytest.mark.parametrize("system_id", SYSTEM_IDS)
def test_the_gm_report_of_every_system_has_its_chart_values_and_outcome(finished: Any, system_id: str) -> None:
    app, battles, _ = finished
    table, battle_id = battles[system_id]
    service = app.extensions["battleboard"].service
    response = gm_client(app, table).get(f"/t/{table.slug}/battles/{battle_id}/report")
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert 'data-testid="battle-report"' in html
    # the strict CSP holds: no inline script or style on the served page, the chart is an image
    assert "<script" not in html and "<style" not in html and " style=" not in html
    assert "Content-Security-Policy" in response.headers
    svgs = svgs_of(html)
    expected = 2 if system_id == "olympia" else 1
    assert len(svgs) == expected and all(svg.lstrip().startswith("<?xml") and "<svg" in svg for svg in svgs)
    assert all("<script" not in svg for svg in svgs)
    # the outcome, every combatant, the dice section (no commitment recorded yet reads as such)
    battle = service.battle(battle_id)
    outcome = get_system(system_id).outcome(battle.state) or battle.state.get("outcome")
    assert (outcome.get("text") or "The battle ended.").replace("'", "&#39;") in html
    for combatant in battle.state["combatants"].values():
        assert combatant["name"].replace("&", "&amp;") in html
    assert html.count('data-testid="report-combatant"') == len(battle.state["combatants"])
    # the dice: the commitment made at the start, and the seed revealed at the end, which matches it
    commitment = hashlib.sha256(battle.seed.encode()).hexdigest()
    assert f'data-testid="report-commitment">{commitment}<' in html
    assert f'data-testid="report-seed">{battle.seed}<' in html
    assert "The revealed seed matches the commitment." in html
    # the chart's data: each side's series starts at the first snapshot's strength and ends at the last's
    report = report_module.build_report(service, battle_id, gm=True)
    from rules import report as rules_report

    for chart in report["charts"]:
        for side, points in chart["series"].items():
            assert points[-1][1] == rules_report.strength(battle.state)[chart["key"]][side]
            assert points[0][0] == 0


def test_olympia_chart_draws_the_break_lines(finished: Any) -> None:
    app, battles, _ = finished
    table, battle_id = battles["olympia"]
    service = app.extensions["battleboard"].service
    report = report_module.build_report(service, battle_id, gm=True)
    value = next(c for c in report["charts"] if c["key"] == "value")
    state = service.battle(battle_id).state
    assert value["lines"] == {side: info["threshold2"] / 2 for side, info in state["sides"].items()}
    svg = report_module.chart_svg(value, report["progress_label"])
    assert "breaks at" in svg  # the legend names each side's break line


def test_phantoms_bane_report_values_follow_the_duel(finished: Any) -> None:
    app, battles, _ = finished
    table, battle_id = battles["phantoms-bane"]
    service = app.extensions["battleboard"].service
    report = report_module.build_report(service, battle_id, gm=True)
    state = service.battle(battle_id).state
    for row in report["combatants"]:
        c = state["combatants"][row["id"]]
        assert row["start"]["Health"] == f"{c['health_max']}/{c['health_max']}"
        assert row["end"]["Health"] == f"{c['health']}/{c['health_max']}"
    assert report["moments"][-1]["text"] == state["outcome"]["text"]


def test_a_running_battle_has_no_report_and_another_tables_battle_is_not_found(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    service = app.extensions["battleboard"].service
    table = service.create_table("Running", "phantoms-bane")
    service.set_lineup(table.id, cli.demo_lineup("phantoms-bane"))
    battle_id = service.start_battle(table.id).battle_id
    client = gm_client(app, table)
    response = client.get(f"/t/{table.slug}/battles/{battle_id}/report")
    assert response.status_code == 404 and "has not ended" in response.get_data(as_text=True)
    other, other_battle = play_to_the_end(service, "phantoms-bane")
    assert client.get(f"/t/{table.slug}/battles/{other_battle}/report").status_code == 404
    assert client.get(f"/t/{table.slug}/battles/99999/report").status_code == 404
    assert client.get("/t/no-such-table/battles/1/report").status_code == 404


def test_the_public_report_needs_a_shared_battle_and_shows_no_hidden_event(finished: Any) -> None:
    app, battles, _ = finished
    service = app.extensions["battleboard"].service
    table, battle_id = battles["battles-and-balances"]
    battle = service.battle(battle_id)
    # a GM-only and a hidden event on the battle's path, each worded as a key moment
    with service.session() as s:
        for index, visibility in ((90, "gm"), (91, "hidden"), (92, "combatant:c1")):
            s.add(BattleEvent(battle_id=battle_id, version=battle.version, index=index, type="combatant.defeated", visibility=visibility,
                              payload={"type": "combatant.defeated", "text": f"SECRET-{visibility} is defeated.", "rolls": [], "data": {}}))
        s.commit()
    try:
        anyone = app.test_client()
        url = f"/t/{table.slug}/battles/{battle_id}/report"
        refused = anyone.get(url)
        assert refused.status_code == 404 and "SECRET" not in refused.get_data(as_text=True)
        assert anyone.get(url + "?format=md").status_code == 404
        service.set_shareable(battle_id, table.id, True)  # the GM shared it
        public = anyone.get(url).get_data(as_text=True)
        assert 'data-public="yes"' in public and "SECRET" not in public
        assert "SECRET" not in anyone.get(url + "?format=md").get_data(as_text=True)
        with service.session() as s:
            public_texts = [row.payload["text"] for row in s.exec(select(BattleEvent).where(BattleEvent.battle_id == battle_id, BattleEvent.visibility == "public"))]
        assert any(text in public for text in public_texts)
        gm = gm_client(app, table).get(url).get_data(as_text=True)
        assert all(f"SECRET-{v} is defeated." in gm for v in ("gm", "hidden", "combatant:c1"))
    finally:
        service.set_shareable(battle_id, table.id, False)
        with service.session() as s:
            for row in s.exec(select(BattleEvent).where(BattleEvent.battle_id == battle_id, BattleEvent.index >= 90)):
                s.delete(row)
            s.commit()


@pytest.mark.parametrize("system_id", ["eclipse-phase", "adnd"])
def test_public_report_of_hidden_numbers_shows_what_the_spectators_see(finished: Any, system_id: str) -> None:
    app, battles, _ = finished
    service = app.extensions["battleboard"].service
    table, battle_id = battles[system_id]
    battle = service.battle(battle_id)
    service.set_shareable(battle_id, table.id, True)
    try:
        report = report_module.build_report(service, battle_id, gm=False)
    finally:
        service.set_shareable(battle_id, table.id, False)
    labels = {label for c in report["combatants"] for label in c["end"]}
    if system_id == "adnd":  # the DM's hit points stay behind the screen
        assert "Hit points" not in labels
        assert [c["key"] for c in report["charts"]] == ["standing"]
    elif not battle.state.get("reveal_health"):  # Durability numbers only once the GM reveals them
        assert "Damage" not in labels and "Health" in labels
        assert [c["key"] for c in report["charts"]] == ["condition"]


def test_markdown_and_html_from_the_command_line(finished: Any, monkeypatch: Any, capsys: Any, tmp_path: Path) -> None:
    app, battles, folder = finished
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{folder / 'test.sqlite3'}")
    monkeypatch.setenv("BATTLEBOARD_INSTANCE", str(folder))
    monkeypatch.setenv("BATTLEBOARD_SECRET_KEY", "test-secret")
    for system_id, (table, battle_id) in battles.items():
        assert cli.main(["report", str(battle_id), "--format", "md"]) == 0
        md = capsys.readouterr().out
        assert md.startswith(f"# Battle report: {table.name}")
        assert "## Key moments" in md and "## Strength over the battle" in md
        assert f"Revealed seed: {app.extensions['battleboard'].service.battle(battle_id).seed}" in md
        out = tmp_path / f"{system_id}.md"
        assert cli.main(["report", str(battle_id), "--format", "md", "--output", str(out)]) == 0
        charts = sorted(tmp_path.glob(f"{system_id}-*.svg"))
        assert charts and all("<svg" in p.read_text() for p in charts)
        assert f"]({charts[0].name})" in out.read_text()
        html_file = tmp_path / f"{system_id}.html"
        assert cli.main(["report", str(battle_id), "--format", "html", "-o", str(html_file)]) == 0
        html = html_file.read_text()
        assert "<style>" in html and "/static/" not in html and len(svgs_of(html)) >= 1  # one file, opens anywhere
        capsys.readouterr()
    capsys.readouterr()
    assert cli.main(["report", "99999"]) == 1
    assert "no such battle" in capsys.readouterr().err
    # a battle the GM did not share has no public report
    table, battle_id = battles["olympia"]
    assert cli.main(["report", str(battle_id), "--public"]) == 1
    service = app.extensions["battleboard"].service
    service.set_shareable(battle_id, table.id, True)
    try:
        capsys.readouterr()
        assert cli.main(["report", str(battle_id), "--public", "--format", "md"]) == 0
        assert "Public report: only what the table saw." in capsys.readouterr().out
    finally:
        service.set_shareable(battle_id, table.id, False)


def test_a_battle_from_before_the_dice_were_committed_reads_not_recorded(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    service = app.extensions["battleboard"].service
    table, battle_id = play_to_the_end(service, "phantoms-bane", seed="0ld-b4ttle-s33d-9f3e")
    with service.session() as s:  # as an old database has it: no dice events in the log
        for row in s.exec(select(BattleEvent).where(BattleEvent.battle_id == battle_id)):
            if row.type.startswith("dice."):
                s.delete(row)
        s.commit()
    report = report_module.build_report(service, battle_id, gm=True)
    assert report["dice"]["commitment"] is None and report["dice"]["revealed_seed"] is None
    html = gm_client(app, table).get(f"/t/{table.slug}/battles/{battle_id}/report").get_data(as_text=True)
    assert 'data-testid="report-commitment">not recorded<' in html and 'data-testid="report-seed">not recorded<' in html
    assert service.battle(battle_id).seed not in html


def test_the_report_says_whose_dice_ran_hot_or_cold(finished: Any) -> None:
    """Issue 37: for each player and the GM's side, their dice over the battle as a percentile."""
    app, battles, _ = finished
    service = app.extensions["battleboard"].service
    table, battle_id = battles["phantoms-bane"]
    report = report_module.build_report(service, battle_id, gm=True)
    [gm_side] = report["dice"]["luck"]  # (the demo has no players: the GM and the computer roll it all)
    assert gm_side["who"] == "The GM's side" and 0 <= gm_side["percentile"] <= 100 and gm_side["dice"] > 0
    with app.test_request_context():
        html = report_module.render_html(report_module.with_charts(report))
    assert html.count('data-testid="report-luck"') == 1 and f"percentile {gm_side['percentile']:.0f}:" in html
    assert f"percentile {gm_side['percentile']:.0f}" in report_module.render_markdown(report)
