"""Old battles still work: battles exported, and a database written, by the board as it stood before
the renovation of its rules and web layer (issue 35), kept in tests/fixtures/pre_renovation/.

Each export is a finished battle of one system, played through the service with a fixed seed: it
verifies (every die re-derived, every command re-applied), imports into a board, replays from the
stored log, and its battle opens for the GM and the public. The database was written by that board's
start-up (``battleboard serve``) and some play: it opens with today's start-up (on a copy: the fixture
is never written), its tables are listed, every battle replays against its stored snapshots, and its
running battles take new commands. docs/fixtures.md says why these files are never made again.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import col, func, select

from rules import RulesError, Viewer, available_systems
from tests.conftest import make_app
from webapp.app import socketio
from webapp.export import export_battle, import_document, load_document
from webapp.models import Battle, BattleCommand, GameTable
from webapp.replay import replay_battle
from webapp.verify import verify_document

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "pre_renovation"
SCHEMA = json.loads((ROOT / "docs" / "battle-export.schema.json").read_text())
SCRIPT = ROOT / "static" / "verify_dice.py"
DATABASE = FIXTURES / "battleboard.sqlite3"

#: the five systems of the board before the renovation, each with one exported battle
SYSTEMS = ("phantoms-bane", "eclipse-phase", "olympia", "adnd", "battles-and-balances")

#: the files as they were made (by the board at commit 031ca1d): a file that differs was made again
#: or changed, which these fixtures must never be (docs/fixtures.md)
SHA256 = {
    "phantoms-bane.json": "971e483ef59ab9451735212f42c54dc4dfdc4bcdee34ebcd9305cdd9d2118e98",
    "eclipse-phase.json": "aec984efd046fc7aca760fccf7d30926869c0aca0232416f8f2fac57690bd1c0",
    "olympia.json": "58a124eab42075cf930f082a55a404fe21c6f13f7c943c71ba0ab7161a3a0dd8",
    "adnd.json": "b7cd585c0bcec5c2bc38c822875d0a685d3ee45105c23b9b72e409bb8ef76e54",
    "battles-and-balances.json": "fcc4f736613ae1b57f4602128709a54111f1bf6a3a31c320fc51c173c60e8cb3",
    "battleboard.sqlite3": "8051b5e93a90351291a9c7a7869b1fb307e2611eb862edc73cdad186e5cae4c3",
}

#: what each export holds besides ordinary declarations (what made it worth keeping)
FEATURES = {
    "phantoms-bane": {"entropy", "dice_enter"},  # two phones' client seeds, dice typed on the phones and a roll left to the board
    "eclipse-phase": {"entropy", "undo"},
    "olympia": {"begin", "undo"},  # the finishing step taken back: a second seed committed
    "adnd": {"assign", "undo"},  # a combatant handed to a phone mid-battle
    "battles-and-balances": {"dice_physical", "dice_enter"},  # the GM switches a combatant to real dice and types them
}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def export_path(system_id: str) -> Path:
    return FIXTURES / f"{system_id}.json"


def old_document(system_id: str) -> dict[str, Any]:
    return load_document(export_path(system_id).read_bytes())


def kinds(doc: dict[str, Any]) -> set[str]:
    return {str(c["declaration"].get("type")) for c in doc["commands"]}


# --- the files themselves -----------------------------------------------------------------------
def test_the_fixtures_are_the_files_made_before_the_renovation() -> None:
    assert sorted(p.name for p in FIXTURES.iterdir() if not p.name.startswith(".")) == sorted(SHA256)
    for name, digest in SHA256.items():
        assert sha256(FIXTURES / name) == digest, f"{name} was changed or made again: restore it from git (docs/fixtures.md)"
    known = {system.id for system in available_systems()}
    assert set(SYSTEMS) <= known


@pytest.mark.parametrize("system_id", SYSTEMS)
def test_an_old_export_is_a_finished_battle_of_its_system(system_id: str) -> None:
    doc = old_document(system_id)
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(doc, SCHEMA)
    assert doc["audience"] == "gm" and doc["system"]["id"] == system_id
    assert doc["battle"]["status"] == "ended" and doc["battle"]["outcome"]
    assert FEATURES[system_id] <= kinds(doc)
    assert all(isinstance(seed["seed"], str) for seed in doc["dice"]["seeds"])


# --- each export: verify, import, replay --------------------------------------------------------
@pytest.mark.parametrize("system_id", SYSTEMS)
def test_an_old_export_verifies(system_id: str) -> None:
    doc = old_document(system_id)
    verdict = verify_document(doc)
    assert verdict.ok, verdict.message
    assert verdict.message.startswith(f"OK: {system_id} battle of {doc['battle']['version']} versions")
    assert verdict.versions == doc["battle"]["version"] and len(verdict.steps) == doc["battle"]["version"]
    assert verdict.steps[-1].state == doc["final_state"]
    if system_id == "olympia":  # the end taken back: the battle went on with a second seed, both revealed
        assert len(doc["dice"]["seeds"]) == 2


def test_the_cli_and_the_standalone_script_verify_every_old_export(capsys: pytest.CaptureFixture[str]) -> None:
    from webapp.cli import main

    for system_id in SYSTEMS:
        assert main(["verify", str(export_path(system_id))]) == 0, system_id
        assert capsys.readouterr().out.startswith("OK:")
        run = subprocess.run([sys.executable, "-I", str(SCRIPT), str(export_path(system_id))], capture_output=True, text=True, timeout=120)
        assert run.returncode == 0 and run.stdout.startswith("OK:"), run.stdout + run.stderr


@pytest.mark.parametrize("system_id", SYSTEMS)
def test_an_old_export_imports_replays_and_opens(tmp_path: Path, system_id: str) -> None:
    doc = old_document(system_id)
    app = make_app(tmp_path)
    service = app.extensions["battleboard"].service
    try:
        table, battle_id = import_document(service, doc)
        battle = service.battle(battle_id)
        assert battle.status == "ended" and battle.version == doc["battle"]["version"]
        assert battle.state == doc["final_state"] and battle.system_id == system_id
        report = replay_battle(service, battle_id)
        assert report.ok, report.mismatches
        assert report.replayed + report.taken == len(doc["commands"])
        # exported again, it holds the same log, dice and end, and still verifies
        again = json.loads(json.dumps(export_battle(service, battle_id)))
        assert again["events"] == doc["events"] and again["dice"] == doc["dice"] and again["final_state"] == doc["final_state"]
        assert [c["declaration"] for c in again["commands"]] == [c["declaration"] for c in doc["commands"]]
        assert verify_document(again).ok
        # every viewer's page of the imported battle opens, and the public copy leaves the GM's words out
        for viewer in (Viewer.gm(), Viewer.spectator()):
            shown = service.snapshot_for(battle_id, viewer)
            assert shown["status"] == "ended" and shown["view"] and shown["events"]
        public = export_battle(service, battle_id, public=True)
        assert public["audience"] == "public" and public["setup"] is None
        gm = app.test_client()
        assert gm.get(f"/t/{table.slug}/gm?key={table.gm_token}", follow_redirects=True).status_code == 200
        replay = gm.get(f"/t/{table.slug}/battles/{battle_id}/replay.json").get_json()
        assert replay["ok"], replay
        assert gm.get(f"/t/{table.slug}/battles/{battle_id}/report").status_code == 200
    finally:
        service.engine.dispose()


def test_the_cli_imports_and_replays_every_old_export(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'cli.sqlite3'}")
    monkeypatch.setenv("BATTLEBOARD_INSTANCE", str(tmp_path))
    monkeypatch.setenv("BATTLEBOARD_SECRET_KEY", "old-battles")
    from webapp.cli import main

    for system_id in SYSTEMS:
        assert main(["import", str(export_path(system_id))]) == 0, system_id
        imported = int(capsys.readouterr().out.split("imported as battle ")[1].split()[0])
        assert main(["replay", str(imported)]) == 0, system_id
        assert capsys.readouterr().out.strip().endswith("the log replays exactly")


# --- the database written before the renovation --------------------------------------------------
@pytest.fixture
def old_app(tmp_path: Path) -> Any:
    """Today's start-up on a copy of the old database (the fixture itself is never opened for writing)."""
    copy = tmp_path / "battleboard.sqlite3"
    shutil.copyfile(DATABASE, copy)
    app = make_app(tmp_path, database_url=f"sqlite:///{copy}")
    yield app
    app.extensions["battleboard"].service.engine.dispose()
    assert sha256(DATABASE) == SHA256["battleboard.sqlite3"], "the old database fixture was written to"


def battles_of(service: Any) -> list[Battle]:
    with service.session() as s:
        return list(s.exec(select(Battle).order_by(col(Battle.id))))


def test_an_old_database_opens_and_lists_its_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "battleboard.sqlite3"
    shutil.copyfile(DATABASE, copy)
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{copy}")
    monkeypatch.setenv("BATTLEBOARD_INSTANCE", str(tmp_path))
    monkeypatch.setenv("BATTLEBOARD_SECRET_KEY", "old-battles")
    from webapp.cli import DEMOS, main

    assert main(["tables", "--port", "5000"]) == 0  # the start-up of ``battleboard tables``: create_app on the old file
    listed = capsys.readouterr().out
    for slug, name, _lineup in (DEMOS[system_id] for system_id in SYSTEMS):  # (the systems the old board had)
        assert f"Table {name!r}" in listed or f'Table "{name}"' in listed
        assert f"/t/{slug}/display" in listed
    assert "(imported)" in listed
    assert sha256(DATABASE) == SHA256["battleboard.sqlite3"]


def test_every_battle_of_an_old_database_replays_against_its_snapshots(old_app: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from webapp.cli import main

    service = old_app.extensions["battleboard"].service
    battles = battles_of(service)
    assert {b.system_id for b in battles} == set(SYSTEMS)
    assert {b.status for b in battles} == {"active", "ended"}
    for battle in battles:
        with service.session() as s:
            commands = s.exec(select(func.count()).select_from(BattleCommand).where(BattleCommand.battle_id == battle.id)).one()
        report = replay_battle(service, battle.id)
        assert report.ok, (battle.id, battle.system_id, report.mismatches)
        assert report.replayed + report.taken == commands == battle.version - 1
    # ``battleboard replay`` says the same (on the same copy: the app reads DATABASE_URL)
    url = str(service.engine.url)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("DATABASE_URL", url)
        env.setenv("BATTLEBOARD_SECRET_KEY", "old-battles")
        env.setenv("BATTLEBOARD_INSTANCE", str(Path(url.removeprefix("sqlite:///")).parent))
        for battle in battles:
            assert main(["replay", str(battle.id)]) == 0
            assert capsys.readouterr().out.strip().endswith("the log replays exactly")


def test_an_old_databases_battles_open_and_play_on(old_app: Any) -> None:
    service = old_app.extensions["battleboard"].service
    with service.session() as s:
        tables = list(s.exec(select(GameTable).order_by(col(GameTable.id))))
    for table in tables:  # every page of every table opens: the GM's socket and a spectator's catch up
        for token in (table.gm_token, None):
            client = socketio.test_client(old_app, auth={"table": table.slug, "token": token}, flask_test_client=old_app.test_client())
            assert client.is_connected(), table.slug
            ack = client.emit("sync", {"since_v": 0}, callback=True)
            assert ack["ok"], ack
            assert ack["table"] and (table.battle_id is None or ack["battle"]["view"])
            client.disconnect()
    running = [b for b in battles_of(service) if b.status == "active"]
    assert running
    for battle in running:  # the GM ends each running battle: a new version, exported and verified
        result = service.end_battle(battle.id, Viewer.gm(), expected_v=battle.version)
        assert result.version == battle.version + 1
        assert replay_battle(service, battle.id).ok
        assert verify_document(json.loads(json.dumps(export_battle(service, battle.id)))).ok
    # a table whose battle ended starts a new one from its lineup (the survivors written back)
    ended_table = next(t for t in tables if t.system_id == "battles-and-balances")
    assert ended_table.roster_id is not None
    fresh = service.start_battle(ended_table.id, seed="after-the-renovation")
    assert service.battle(fresh.battle_id).version == 1
    with pytest.raises(RulesError):  # and the old one stays ended
        service.declare(ended_table.battle_id, Viewer.gm(), {"type": "pass", "combatant": "c1"}, actor="gm")
