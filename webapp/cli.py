"""The ``battleboard`` command: ``serve`` the board (with a demo table of every rule system), list tables, fetch assets."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

#: a demo as ``DEMOS`` lists it: slug, name, and the lineup as (preset name, side, controller)
DemoEntry = tuple[str, str, list[tuple[str, str, str]]]


def demos() -> dict[str, DemoEntry]:
    """The demo tables ``serve`` prepares, one per rule system that has one (its traits' ``demo``), in
    registry order: ``{system id: (slug, name, lineup)}``, the lineup as (preset name, side,
    controller); the heroes are the GM's until the GM hands them to a player."""
    from rules import available_systems

    return {system.id: (demo.slug, demo.title, list(demo.lineup))
            for system in available_systems() if (demo := system.traits.demo) is not None}


def __getattr__(name: str) -> Any:
    """``DEMOS`` (:func:`demos`) and ``DEMO_SLUG`` (the first demo's slug), read off the systems when asked."""
    if name == "DEMOS":
        return demos()
    if name == "DEMO_SLUG":
        return next(iter(demos().values()))[0]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _links(table: Any, host_urls: list[str]) -> list[str]:
    lines = [f"  Table {table.name!r} ({table.system_id}), join code {table.join_code}"]
    for base in host_urls:
        lines.append(f"    Table display: {base}/t/{table.slug}/display")
        lines.append(f"    GM console:    {base}/t/{table.slug}/gm?key={table.gm_token}")
        lines.append(f"    Players join:  {base}/j/{table.join_code}")
        lines.append(f"    Spectators:    {base}/t/{table.slug}/watch")
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


def demo_lineup(system_id: str) -> list[dict[str, Any]]:
    """A demo's lineup from its system's presets."""
    from rules import get_system

    system = get_system(system_id)
    if system.traits.demo is None:
        raise KeyError(f"the rule system {system_id!r} has no demo")
    presets = {p["name"]: p for p in system.presets()}
    lineup = []
    for number, (preset, side, controller) in enumerate(system.traits.demo.lineup, start=1):
        entry = dict(presets[preset])
        entry.update(id=f"c{number}", side=side, controller=controller, seat=None)
        lineup.append(entry)
    return lineup


def ensure_demo(app: Any) -> list[Any]:
    """One demo table per rule system, each with a lineup from the system's presets and its battle
    started (an Olympia battle past its deployment), ready to play. Idempotent: a table that is
    there already is left as it is (its battle too), one without a battle gets one."""
    from rules import RulesError, Viewer, available_systems

    service = app.extensions["battleboard"].service
    tables = []
    for system in available_systems():
        demo = system.traits.demo
        if demo is None:
            continue
        slug, name = demo.slug, demo.title
        try:
            table = service.table(slug=slug)
        except RulesError:
            table = service.create_table(name, system.id, slug=slug)
        if table.battle_id is None:
            if not table.lineup:
                service.set_lineup(table.id, demo_lineup(system.id))
            battle_id = service.start_battle(table.id).battle_id
            if service.battle(battle_id).status == "setup":  # past a deployment (Olympia's: the presets' rows as they are)
                for declaration in demo.opening:
                    service.declare(battle_id, Viewer.gm(), dict(declaration), actor="gm")
            table = service.table(table_id=table.id)
        tables.append(table)
    return tables


def demo_report(tables: list[Any], urls: list[str]) -> str:
    """What ``serve`` prints: every demo table's links, and where a TV pairs."""
    lines = []
    for table in tables:
        lines += _links(table, urls)
    lines.append(f"  A TV or laptop for the table: open {urls[-1]}/screen (or the front page) and pair it from the GM console's Join tab.")
    return "\n".join(lines)


#: where ``serve`` notes the address it runs on (``battleboard tables`` prints links to it)
SERVING_FILE = "serving.json"


def record_serving(instance: Path, host: str, port: int, public_url: str | None) -> None:
    """Note in the instance folder where this board is served, for the commands run beside it."""
    record = {"host": host, "port": port, "public_url": public_url, "pid": os.getpid()}
    try:
        (instance / SERVING_FILE).write_text(json.dumps(record), encoding="utf-8")
    except OSError as exc:  # a read-only instance folder: the board runs all the same
        print(f"warning: could not note the address in {instance}: {exc}", file=sys.stderr)


def served_at(instance: Path) -> dict[str, Any]:
    """Where ``serve`` last ran with this instance folder: ``{host, port, public_url}``, or ``{}``."""
    try:
        record = json.loads((instance / SERVING_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(record, dict) or not isinstance(record.get("port"), int) or not isinstance(record.get("host"), str):
        return {}
    return record


def _link_base(args: argparse.Namespace, instance: Path) -> list[str]:
    """The addresses to print links with: what the command line says, else where ``serve`` runs (or
    last ran) with this instance folder, else ``serve``'s own defaults."""
    record = served_at(instance)
    host = args.host or record.get("host") or os.environ.get("BATTLEBOARD_HOST", "0.0.0.0")
    port = args.port or record.get("port") or int(os.environ.get("BATTLEBOARD_PORT", "5000"))
    public_url = os.environ.get("BATTLEBOARD_PUBLIC_URL") or (record.get("public_url") if not (args.host or args.port) else None)
    return host_urls(host, port, public_url)


def _gevent_wanted() -> bool:
    """``serve`` runs on gevent's WSGI server (the one gunicorn's gevent worker runs), unless
    ``BATTLEBOARD_ASYNC_MODE`` asks for another mode (``threading``: Werkzeug's development server)."""
    return os.environ.get("BATTLEBOARD_ASYNC_MODE", "gevent") == "gevent"


def cmd_serve(args: argparse.Namespace) -> int:
    on_gevent = _gevent_wanted()
    if on_gevent:  # first: the standard library's sockets, threads and sleeps become gevent's
        import gevent
        from gevent import monkey

        monkey.patch_all()
        gevent.get_hub().NOT_ERROR += (KeyboardInterrupt,)  # Ctrl+C stops the board without a trace printed
    from .app import create_app, hub, settle_memory, socketio
    from .db import checkpoint_in_background
    from .vendor import VendorError, ensure_served

    overrides: dict[str, Any] = {"async_mode": "gevent"} if on_gevent else {}
    app = create_app(public_url=args.public_url, listen_host=args.host, listen_port=args.port, **overrides)
    try:
        ensure_served(Path(app.static_folder or ""), Path(app.instance_path))
    except VendorError as exc:
        print(f"warning: {exc}", file=sys.stderr)
    tables = ensure_demo(app) if args.demo else []
    config = app.config["BATTLEBOARD"]
    record_serving(Path(app.instance_path), args.host, args.port, args.public_url)
    print(f"Battleboard on {args.host}:{args.port} — database {config.database_url.split('@')[-1]}")
    if tables:
        print(demo_report(tables, host_urls(args.host, args.port, args.public_url)))
    print("Create more tables from the front page:", host_urls(args.host, args.port, args.public_url)[-1] + "/")
    sys.stdout.flush()
    hub(app).service.prune_unused_images()  # uploads no board or roster took (each upload prunes too)
    settle_memory()
    hub(app).start_heartbeat()  # pages that missed an update catch up on their own
    checkpoint_in_background(hub(app).service.engine)
    if on_gevent:
        # Ctrl+C is taken by gevent's loop and raised in the greenlet that serves: the one that runs
        # the server. Left to Python, the signal landed in whichever greenlet was running, and one
        # serving a page swallowed it (a busy board went on after the first Ctrl+C).
        import signal

        serving = gevent.getcurrent()
        gevent.signal_handler(signal.SIGINT, lambda: gevent.kill(serving, KeyboardInterrupt))
    try:
        socketio.run(app, host=args.host, port=args.port, allow_unsafe_werkzeug=True, use_reloader=False, log_output=False)
    except KeyboardInterrupt:  # Ctrl+C: the board stops, quietly
        pass
    return 0


def cmd_tables(args: argparse.Namespace) -> int:
    from sqlmodel import col, select

    from .app import create_app
    from .models import GameTable

    app = create_app()
    service = app.extensions["battleboard"].service
    urls = _link_base(args, Path(app.instance_path))
    with service.session() as s:
        for table in s.exec(select(GameTable).order_by(col(GameTable.id))):
            print("\n".join(_links(table, urls)))
    return 0


def cmd_fetch_assets(args: argparse.Namespace) -> int:
    from .app import asset_dir
    from .config import load_config
    from .vendor import VendorError, ensure_axe, ensure_served

    config = load_config().finish()
    try:
        for path in ensure_served(asset_dir("static"), config.instance_path):
            print(path)
        if args.tests:
            print(ensure_axe(Path(config.instance_path)))
    except VendorError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    from rules import RulesError

    from .app import create_app
    from .replay import replay_battle

    app = create_app()
    try:
        report = replay_battle(app.extensions["battleboard"].service, args.battle_id)
    except RulesError as exc:
        print(f"battle {args.battle_id}: {exc} (`battleboard tables` lists the tables; a battle's id is on its GM console)", file=sys.stderr)
        return 1
    print(f"battle {report.battle_id}: {report.replayed} declarations replayed, {report.taken} other commands taken from snapshots")
    for line in report.mismatches:
        print("  mismatch:", line)
    print("the log replays exactly" if report.ok else "the log does NOT replay")
    return 0 if report.ok else 1


def cmd_report(args: argparse.Namespace) -> int:
    """Write a finished battle's report (the GM's, or with --public what the table saw)."""
    from rules import RulesError

    from .app import create_app
    from .report import build_report, render_html, render_markdown, with_charts

    app = create_app()
    try:
        report = build_report(app.extensions["battleboard"].service, args.battle_id, gm=not args.public)
    except RulesError as exc:
        print(f"battle {args.battle_id}: {exc}", file=sys.stderr)
        return 1
    output = Path(args.output) if args.output else None
    if args.format == "html":
        with app.test_request_context():
            text = render_html(report, standalone=True)
    else:
        files: dict[str, str] = {}
        if output is not None:  # the charts as SVG files beside the Markdown
            for chart in with_charts(report)["charts"]:
                name = f"{output.stem}-{chart['key']}.svg"
                (output.parent / name).write_text(chart["svg"], encoding="utf-8")
                files[chart["key"]] = name
        text = render_markdown(report, chart_files=files)
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text, encoding="utf-8")
        print(f"wrote {output}")
    return 0


# --- provable dice: export, import and verify a battle (issue 18, H7) -------------------------------
def cmd_export(args: argparse.Namespace) -> int:
    from rules import RulesError

    from .app import create_app
    from .export import export_json

    app = create_app()
    try:
        data = export_json(app.extensions["battleboard"].service, args.battle_id)
    except RulesError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.output in (None, "-"):
        sys.stdout.buffer.write(data + b"\n")
    else:
        Path(args.output).write_bytes(data)
        print(f"battle {args.battle_id} written to {args.output} ({len(data):,} bytes)", file=sys.stderr)
    return 0


def _read_file(name: str) -> bytes:
    from .export import MAX_BYTES, ImportRefused

    with open(name, "rb") as handle:
        raw = handle.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:
        raise ImportRefused("the file is too large (over 20 MB)")
    return raw


def cmd_verify(args: argparse.Namespace) -> int:
    from rules import RulesError

    from .export import load_document
    from .verify import verify_document

    try:
        doc = load_document(_read_file(args.file))
        verdict = verify_document(doc)
    except (RulesError, OSError) as exc:
        print(f"NOT VERIFIED: {exc}")
        return 1
    print(verdict.message if verdict.ok else f"NOT VERIFIED: {verdict.message}")
    return 0 if verdict.ok else 1


def cmd_import(args: argparse.Namespace) -> int:
    from rules import RulesError

    from .app import create_app
    from .export import import_document, load_document

    app = create_app()
    try:
        doc = load_document(_read_file(args.file))
        table, battle_id = import_document(app.extensions["battleboard"].service, doc)
    except (RulesError, OSError) as exc:
        print(f"not imported: {exc}", file=sys.stderr)
        return 1
    print(f"imported as battle {battle_id} of a new table {table.name!r} (it verified)")
    print("\n".join(_links(table, _link_base(args, Path(app.instance_path)))))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="battleboard", description="A visual battle board for tabletop RPGs.")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="start the board")
    serve.add_argument("--host", default=os.environ.get("BATTLEBOARD_HOST", "0.0.0.0"))
    serve.add_argument("--port", type=int, default=int(os.environ.get("BATTLEBOARD_PORT", "5000")))
    serve.add_argument("--public-url", default=os.environ.get("BATTLEBOARD_PUBLIC_URL"), help="the address players use, if behind a proxy")
    serve.add_argument(
        "--demo", action=argparse.BooleanOptionalAction, default=True, help="prepare a demo table of every rule system (default: yes)"
    )
    serve.set_defaults(func=cmd_serve)
    tables = sub.add_parser("tables", help="list the tables with their display, GM, player and spectator links")
    tables.add_argument("--host", help="default: the address `serve` runs on (or last ran on) with this instance folder")
    tables.add_argument("--port", type=int, help="default: the port `serve` runs on (or last ran on) with this instance folder")
    tables.set_defaults(func=cmd_tables)
    fetch = sub.add_parser("fetch-assets", help="fetch the pinned browser libraries (Socket.IO client, NoSleep.js) from the npm registry, once")
    fetch.add_argument("--tests", action="store_true", help="also fetch axe-core, which the accessibility tests run")
    fetch.set_defaults(func=cmd_fetch_assets)
    replay = sub.add_parser("replay", help="replay a battle from its log and check every snapshot")
    replay.add_argument("battle_id", type=int)
    replay.set_defaults(func=cmd_replay)
    report = sub.add_parser("report", help="write a finished battle's report (HTML or Markdown, with its charts)")
    report.add_argument("battle_id", type=int)
    report.add_argument("--format", choices=("html", "md"), default="html")
    report.add_argument("--output", "-o", help="a file to write (default: standard output)")
    report.add_argument("--public", action="store_true", help="only what the table saw (the GM's report otherwise)")
    report.set_defaults(func=cmd_report)
    export = sub.add_parser("export", help="write a battle as one JSON document (the seed only once it has ended)")
    export.add_argument("battle_id", type=int)
    export.add_argument("-o", "--output", help="the file to write (default: standard output)")
    export.set_defaults(func=cmd_export)
    verify = sub.add_parser("verify", help="check an exported battle: commitment, every die, every command re-applied")
    verify.add_argument("file")
    verify.set_defaults(func=cmd_verify)
    importer = sub.add_parser("import", help="load an exported, finished battle as a battle of a new table (after verifying it)")
    importer.add_argument("file")
    importer.add_argument("--host", help="for the links printed (default: where `serve` runs)")
    importer.add_argument("--port", type=int, help="for the links printed (default: where `serve` runs)")
    importer.set_defaults(func=cmd_import)
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
