"""The ``battleboard`` command: ``serve`` the board (with a demo table), list tables, fetch assets."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

DEMO_SLUG = "demo"


def _links(table: Any, host_urls: list[str]) -> list[str]:
    lines = [f"  Table {table.name!r} ({table.system_id}), join code {table.join_code}"]
    for base in host_urls:
        lines.append(f"    GM screen:  {base}/t/{table.slug}/gm?key={table.gm_token}")
        lines.append(f"    Players:    {base}/j/{table.join_code}")
        lines.append(f"    Spectators: {base}/t/{table.slug}/watch")
    return lines


def host_urls(host: str, port: int, public_url: str | None = None) -> list[str]:
    from .net import lan_addresses

    if public_url:
        return [public_url.rstrip("/")]
    urls = [f"http://127.0.0.1:{port}"]
    if host in ("0.0.0.0", "::", ""):
        urls += [f"http://{address}:{port}" for address in lan_addresses()]
    elif host not in ("127.0.0.1", "localhost"):
        urls = [f"http://{host}:{port}"]
    return urls


def ensure_demo(app: Any) -> Any:
    """The demo table: a Phantom's Bane duel, Jharek (GM until a player takes him) against a computer monster."""
    from rules import RulesError, get_system

    service = app.extensions["battleboard"].service
    try:
        return service.table(slug=DEMO_SLUG)
    except RulesError:
        pass
    table = service.create_table("Demo duel", "phantoms-bane", slug=DEMO_SLUG)
    presets = {p["name"]: p for p in get_system("phantoms-bane").presets()}
    hero = dict(presets.get("Jharek") or next(iter(presets.values())))
    foe = dict(presets.get("Wild Monster") or list(presets.values())[-1])
    hero.update(id="jharek", side="A", controller="gm", seat=None)
    foe.update(id="monster", side="B", controller="computer", seat=None)
    service.set_lineup(table.id, [hero, foe])
    service.start_battle(table.id)
    return service.table(table_id=table.id)


def cmd_serve(args: argparse.Namespace) -> int:
    from .app import create_app, hub, settle_memory, socketio
    from .db import checkpoint_in_background
    from .vendor import VendorError, ensure_client

    app = create_app(public_url=args.public_url)
    try:
        ensure_client(Path(app.static_folder or ""), Path(app.instance_path))
    except VendorError as exc:
        print(f"warning: {exc}", file=sys.stderr)
    tables = []
    if args.demo:
        tables.append(ensure_demo(app))
    config = app.config["BATTLEBOARD"]
    print(f"Battleboard on {args.host}:{args.port} — database {config.database_url.split('@')[-1]}")
    for table in tables:
        print("\n".join(_links(table, host_urls(args.host, args.port, args.public_url))))
    print("Create more tables from the front page:", host_urls(args.host, args.port, args.public_url)[-1] + "/")
    sys.stdout.flush()
    settle_memory()
    checkpoint_in_background(hub(app).service.engine)
    socketio.run(app, host=args.host, port=args.port, allow_unsafe_werkzeug=True, use_reloader=False, log_output=False)
    return 0


def cmd_tables(args: argparse.Namespace) -> int:
    from sqlmodel import select

    from .app import create_app
    from .models import GameTable

    app = create_app()
    service = app.extensions["battleboard"].service
    with service.session() as s:
        for table in s.exec(select(GameTable).order_by(GameTable.id)):
            print("\n".join(_links(table, host_urls(args.host, args.port))))
    return 0


def cmd_fetch_assets(args: argparse.Namespace) -> int:
    from .app import asset_dir
    from .config import load_config
    from .vendor import ensure_client

    config = load_config().finish()
    print(ensure_client(asset_dir("static"), config.instance_path))
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    from .app import create_app
    from .replay import replay_battle

    app = create_app()
    report = replay_battle(app.extensions["battleboard"].service, args.battle_id)
    print(f"battle {report.battle_id}: {report.replayed} declarations replayed, {report.taken} other commands taken from snapshots")
    for line in report.mismatches:
        print("  mismatch:", line)
    print("the log replays exactly" if report.ok else "the log does NOT replay")
    return 0 if report.ok else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="battleboard", description="A visual battle board for tabletop RPGs.")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="start the board")
    serve.add_argument("--host", default=os.environ.get("BATTLEBOARD_HOST", "0.0.0.0"))
    serve.add_argument("--port", type=int, default=int(os.environ.get("BATTLEBOARD_PORT", "5000")))
    serve.add_argument("--public-url", default=os.environ.get("BATTLEBOARD_PUBLIC_URL"), help="the address players use, if behind a proxy")
    serve.add_argument("--demo", action=argparse.BooleanOptionalAction, default=True, help="create a demo duel table (default: yes)")
    serve.set_defaults(func=cmd_serve)
    tables = sub.add_parser("tables", help="list the tables with their GM, player and spectator links")
    tables.add_argument("--host", default="0.0.0.0")
    tables.add_argument("--port", type=int, default=5000)
    tables.set_defaults(func=cmd_tables)
    fetch = sub.add_parser("fetch-assets", help="fetch the Socket.IO browser client (needs npm, once)")
    fetch.set_defaults(func=cmd_fetch_assets)
    replay = sub.add_parser("replay", help="replay a battle from its log and check every snapshot")
    replay.add_argument("battle_id", type=int)
    replay.set_defaults(func=cmd_replay)
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
