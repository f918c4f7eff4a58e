"""Export and import: the document validates against its JSON Schema, holds no key, travels to another
board (export -> import -> verify -> replay), and bad or tampered files change nothing."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import func, select

from rules import RulesError
from tests.conftest import Table, make_app
from tests.server.test_fair_dice import SYSTEM_IDS, play_battle
from webapp.export import MAX_BYTES, ImportRefused, export_battle, export_json, import_document, load_document
from webapp.models import Battle, BattleEvent, GameTable, Seat
from webapp.replay import replay_battle
from webapp.verify import verify_document

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "battle-export.schema.json").read_text())


def validate(doc: dict[str, Any]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(doc, SCHEMA)


def counts(service: Any) -> tuple[int, int, int]:
    with service.session() as s:
        return (s.exec(select(func.count()).select_from(GameTable)).one(), s.exec(select(func.count()).select_from(Battle)).one(),
                s.exec(select(func.count()).select_from(BattleEvent)).one())


def keys_of(service: Any) -> list[str]:
    with service.session() as s:
        tables = s.exec(select(GameTable)).all()
        seats = s.exec(select(Seat)).all()
    return [t.gm_token for t in tables] + [t.library for t in tables] + [seat.token for seat in seats]


@pytest.mark.parametrize("system_id", SYSTEM_IDS)
def test_export_import_verify_replay_for_every_system(tmp_path: Path, system_id: str) -> None:
    source = make_app(tmp_path / "here")
    target = make_app(tmp_path / "there")
    try:
        here, there = source.extensions["battleboard"].service, target.extensions["battleboard"].service
        _, battle_id = play_battle(here, system_id)
        raw = export_json(here, battle_id)
        doc = load_document(raw)
        validate(doc)
        text = raw.decode()
        for key in keys_of(here):
            assert key not in text, "an export holds a secret key"
        table, imported = import_document(there, doc)
        assert table.battle_id == imported
        battle = there.battle(imported)
        assert battle.status == "ended" and battle.state == doc["final_state"]
        report = replay_battle(there, imported)
        assert report.ok, report.mismatches
        # exported again from the other board, it still verifies and says the same
        again = export_battle(there, imported)
        assert verify_document(json.loads(json.dumps(again))).ok
        assert again["events"] == doc["events"] and again["dice"] == doc["dice"]
    finally:
        source.extensions["battleboard"].service.engine.dispose()
        target.extensions["battleboard"].service.engine.dispose()


def test_a_running_battle_exports_without_its_seed_and_cannot_be_imported(app: Any) -> None:
    duel = Table(app)
    service = duel.service
    seed = service.battle(duel.battle_id).seed
    doc = export_battle(service, duel.battle_id)
    validate(doc)
    assert doc["dice"]["seed"] is None and seed not in json.dumps(doc)
    before = counts(service)
    with pytest.raises(ImportRefused, match="finished"):
        import_document(service, json.loads(json.dumps(doc)))
    assert counts(service) == before


def test_bad_or_tampered_files_get_a_clear_error_and_change_nothing(app: Any) -> None:
    service = app.extensions["battleboard"].service
    _, battle_id = play_battle(service, "phantoms-bane", undo=False)
    raw = export_json(service, battle_id)
    good = json.loads(raw)
    before = counts(service)

    def refused(data: bytes | dict[str, Any], match: str) -> None:
        with pytest.raises(RulesError, match=match):
            doc = load_document(data if isinstance(data, bytes) else json.dumps(data).encode())
            import_document(service, doc)
        assert counts(service) == before

    refused(raw[: len(raw) // 2], "truncated")
    refused(b"not json at all", "truncated")
    refused({**good, "schema_version": 99}, "schema version")
    refused({**good, "format": "something-else"}, "not a battle export")
    refused({k: v for k, v in good.items() if k != "commands"}, "commands")
    refused({**good, "system": {**good["system"], "id": "chess"}, "setup": good["setup"]}, "no rule system")
    refused(b" " * (MAX_BYTES + 1), "too large")
    forged = copy.deepcopy(good)
    roll = next(r for ev in forged["events"] if ev["v"] > 1 for r in ev.get("rolls") or [] if r.get("faces"))
    roll["faces"][0] = 1 if roll["faces"][0] != 1 else 2
    refused(forged, "does not verify")
    forged = copy.deepcopy(good)
    forged["dice"]["seed"] = forged["dice"]["seeds"][0]["seed"] = "f" * 32
    refused(forged, "commitment")


def test_http_export_is_the_gms_until_shared_and_import_uploads(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    try:
        duel = Table(app)
        url = f"/t/{duel.table.slug}/battles/{duel.battle_id}/export.json"
        gm_http = app.test_client()
        assert gm_http.get(f"/t/{duel.table.slug}/gm?key={duel.table.gm_token}").status_code == 302
        stranger = app.test_client()
        # running: the GM downloads it (no seed), nobody else
        response = gm_http.get(url)
        assert response.status_code == 200 and "attachment" in response.headers["Content-Disposition"]
        assert response.get_json()["dice"]["seed"] is None
        assert stranger.get(url).status_code == 403
        gm = duel.gm()
        assert gm.emit("battle_share", {"battle_id": duel.battle_id, "shareable": True}, callback=True)["ok"]
        assert stranger.get(url).status_code == 403  # shared, but still running
        assert gm.emit("battle_end", {"battle_id": duel.battle_id}, callback=True)["ok"]
        body = stranger.get(url)
        assert body.status_code == 200 and body.get_json()["dice"]["seed"] == duel.service.battle(duel.battle_id).seed
        assert gm.emit("battle_share", {"battle_id": duel.battle_id, "shareable": False}, callback=True)["ok"]
        assert stranger.get(url).status_code == 403
        assert stranger.get(f"/t/{duel.table.slug}/battles/999/export.json").status_code == 404
        # the upload: a new table whose GM is the uploader, the battle opens on its replay page
        data = gm_http.get(url).data
        before = counts(duel.service)
        uploader = app.test_client()
        response = uploader.post("/import", data={"battle": (io.BytesIO(data), "battle.json")}, content_type="multipart/form-data")
        assert response.status_code == 302 and "/replay" in response.headers["Location"]
        assert counts(duel.service)[0] == before[0] + 1
        assert uploader.get(response.headers["Location"]).status_code == 200
        # a forged upload: a clear error on the front page, nothing written
        forged = json.loads(data)
        forged["dice"]["seed"] = forged["dice"]["seeds"][0]["seed"] = "0" * 32
        before = counts(duel.service)
        response = uploader.post("/import", data={"battle": (io.BytesIO(json.dumps(forged).encode()), "b.json")},
                                 content_type="multipart/form-data")
        assert response.status_code == 400 and b"commitment" in response.data
        assert counts(duel.service) == before
        response = uploader.post("/import", data={}, content_type="multipart/form-data")
        assert response.status_code == 400
        # larger than the app's 256 KiB limit is fine on this route, over 20 MB is not
        big = json.dumps({**forged, "padding": "x" * (400 * 1024)}).encode()
        response = uploader.post("/import", data={"battle": (io.BytesIO(big), "b.json")}, content_type="multipart/form-data")
        assert response.status_code == 400 and b"commitment" in response.data
        huge = b" " * (MAX_BYTES + 200 * 1024)
        response = uploader.post("/import", data={"battle": (io.BytesIO(huge), "b.json")}, content_type="multipart/form-data")
        assert response.status_code == 413
        assert counts(duel.service) == before
        # other routes keep the small limit
        assert app.test_client().post("/tables", data={"name": "x" * (300 * 1024), "system": "adnd"}).status_code == 413
    finally:
        app.extensions["battleboard"].service.engine.dispose()


def test_the_cli_exports_imports_and_verifies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    database = tmp_path / "cli.sqlite3"
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{database}")
    monkeypatch.setenv("BATTLEBOARD_INSTANCE", str(tmp_path))
    monkeypatch.setenv("BATTLEBOARD_SECRET_KEY", "cli-test")
    from webapp.app import create_app
    from webapp.cli import main

    app = create_app()
    service = app.extensions["battleboard"].service
    _, battle_id = play_battle(service, "adnd")
    out = tmp_path / "battle.json"
    assert main(["export", str(battle_id), "-o", str(out)]) == 0
    assert main(["verify", str(out)]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1].startswith("OK:")
    assert main(["import", str(out)]) == 0
    imported = int(capsys.readouterr().out.split("imported as battle ")[1].split()[0])
    assert main(["replay", str(imported)]) == 0
    out.write_bytes(out.read_bytes()[:-40])
    assert main(["import", str(out)]) == 1
    assert "truncated" in capsys.readouterr().err
    service.engine.dispose()
